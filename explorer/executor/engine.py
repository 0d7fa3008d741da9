"""The interpreter loop: frames with a scope chain, dispatch to kernels, recording, limits."""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import ExecutionError, ExplorerError, LimitExceeded, cause_text, where
from ..trace.trace import Event, EventInfo, EventSite, Iteration, IterationInfo, Trace
from ..trace.values import describe, nbytes
from .compiled import CompiledGraph, Step, guarded_bytes
from .guards import product_bound2
from .ops.base import Call
from .past_budget import PastBudget
from .program import Program

if TYPE_CHECKING:
    from ..limits import Limits

_perf = time.perf_counter


class Engine:
    """Runs compiled graphs for one `run` call, appending every node execution to `trace`."""

    def __init__(self, program: Program, limits: Limits, trace: Trace) -> None:
        self.program = program
        self.limits = limits
        self.trace = trace
        self._budget = self._memory = limits.trace_budget_bytes
        self._past = PastBudget(trace, limits)  # what is recorded once the budget is spent: disk, then summaries
        self._events = trace.events
        self._iterations = trace.iteration_records
        self._max_iterations, self._max_events = limits.max_iterations, limits.max_events
        self._max_bytes = limits.max_tensor_bytes

    # A frame is a dict of the values one graph execution sees. A body's frame starts from its initializers and
    # the few outer values it captures (read from the calling frame), so its cost never grows with the outer scope.
    def body_frame(self, graph: CompiledGraph, outer: dict[str, Any], node: str, op_type: str,
                   iteration: tuple[int, ...]) -> dict[str, Any]:
        """The part of a body's frame that is the same for every iteration: initializers and captures."""
        frame = dict(graph.initializers)
        frame[""] = None
        for name in graph.captures:
            try:
                frame[name] = outer[name]
            except KeyError:
                raise ExecutionError(
                    f"{where(node, op_type, iteration)}: its body {graph.path!r} reads {name!r}, which no "
                    "enclosing scope defines", node=node, op_type=op_type, iteration=iteration,
                ) from None
        return frame

    def run_body(self, graph: CompiledGraph, base: dict[str, Any], inputs: list[Any],
                 iteration: tuple[int, ...]) -> list[Any]:
        """Runs one body execution on a copy of `base` with its formal inputs bound; returns its outputs."""
        frame = base.copy()
        frame.update(zip(graph.input_names, inputs))  # formal inputs shadow any outer value of the same name
        self.run_graph(graph, frame, iteration)
        return [frame[name] for name in graph.output_names]

    def run_iteration(self, graph: CompiledGraph, base: dict[str, Any], inputs: list[Any], node: str,
                      op_type: str, iteration: tuple[int, ...], count: int,
                      info: IterationInfo | None = None) -> list[Any]:
        """Iteration `count` of a Scan/Loop/SequenceMap: the limits checked (check_iterations), the body run on
        `inputs` (run_body) and the iteration recorded (record_iteration) in one call; its outputs."""
        if count >= self._max_iterations or len(self._events) >= self._max_events:
            self.check_iterations(count, node, op_type, iteration)
        index = (*iteration, count)
        names = graph.input_names
        frame = base.copy()
        frame.update(zip(names, inputs))
        self.run_graph(graph, frame, index)
        outputs = [frame[name] for name in graph.output_names]
        recorded_inputs, recorded_outputs = dict(zip(names, inputs)), dict(zip(graph.output_names, outputs))
        if self._budget < 0:
            recorded_inputs = self._past.values(recorded_inputs)
            recorded_outputs = self._past.values(recorded_outputs)
        self._iterations.append(Iteration(node, index, recorded_inputs, recorded_outputs, info or IterationInfo()))
        return outputs

    def run_graph(self, graph: CompiledGraph, frame: dict[str, Any],  # noqa: C901 - the hot loop, one function:
                  iteration: tuple[int, ...]) -> None:  # a call per node would cost every run
        """Runs the steps of one graph execution on `frame`, recording one Event per node (the hot loop: what
        can be decided per node is decided once, in the Step; only what depends on the values happens here).
        `frame[""]` is None: an omitted optional input reads it."""
        events = self._events
        append = events.append
        max_bytes, max_events = self._max_bytes, self._max_events
        perf, ndarray, generic = _perf, np.ndarray, np.generic
        budget = self._budget
        index = len(events)  # the next event's index: counted here, read again after a special kernel's bodies
        try:
            for step, fn, special, fetch, first, guard, single, site, pick, constant in graph.plan:
                if index >= max_events:
                    self.check_events(step.path, step.op_type, iteration)
                args = fetch(frame) if fetch is not None else (frame[first],) if first is not None else ()
                if constant is not None and constant.kept is not None and constant.nbytes <= max_bytes:
                    # a constant node's kept result, recorded as the kernel would return it: its inputs are the
                    # same constants, so no guard; nothing runs, so no time
                    outputs = constant.kept
                    if single is not None and len(outputs) == 1:
                        frame[single] = outputs[0]
                        size = constant.nbytes
                    else:
                        outputs, size = self._store(step, outputs, frame, iteration)
                    budget -= size
                    recorded = args if pick is None else pick(args)
                    if budget < 0:
                        append(self._past.record(Event(index, site, iteration, recorded, outputs, 0.0), size,
                                                 budget, frame))
                    else:
                        append(Event(index, site, iteration, recorded, outputs, 0.0))
                    index += 1
                    continue
                if guard is not None:
                    try:
                        if guard is product_bound2:  # most nodes of many models: inline, no call
                            a, b = args
                            size = a.size * b.size * (a.itemsize if a.itemsize > b.itemsize else b.itemsize)
                        else:
                            size = guard(args)
                    except Exception:  # noqa: BLE001 - malformed inputs: let the kernel report them itself
                        size = 0
                    if size > max_bytes:
                        self._check_guard(step, args, iteration)
                if special:
                    self._budget = budget
                    try:
                        self._run_special(step, args, frame, iteration)
                    finally:
                        budget = self._budget
                    index = len(events)
                    continue
                start = perf()
                try:
                    outputs = fn(args)
                except ExplorerError as exc:
                    self._record_failure(step, args, iteration, exc, index, start)
                    raise
                except Exception as exc:
                    error = self._kernel_error(step, args, iteration, exc)
                    self._record_failure(step, args, iteration, error, index, start)
                    raise error from exc
                seconds = perf() - start
                if single is not None and len(outputs) == 1:  # most nodes: one output
                    value = outputs[0]
                    if type(value) is ndarray:
                        size = value.nbytes
                    else:
                        if isinstance(value, generic):  # NumPy's scalars (np.take of a 0-d index) are 0-d tensors
                            value = np.asarray(value)
                            outputs = (value,)
                        size = nbytes(value)
                    frame[single] = value
                else:
                    outputs, size = self._store(step, outputs, frame, iteration)
                if size > max_bytes:
                    self._too_big(step, outputs, iteration)
                budget -= size
                recorded = args if pick is None else pick(args)
                if budget < 0:
                    append(self._past.record(Event(index, site, iteration, recorded, outputs, seconds), size, budget,
                                             frame))
                else:
                    append(Event(index, site, iteration, recorded, outputs, seconds))
                index += 1
        finally:
            self._budget = budget
            trace = self.trace
            if trace.budget_exceeded_at is None and trace.spilled_at is None:
                trace.recorded_bytes = self._memory - budget

    def _check_guard(self, step: Step, args: tuple[Any, ...], iteration: tuple[int, ...]) -> None:
        """A step's guard said more than Limits.max_tensor_bytes (the loop's inline check): LimitExceeded, once the
        guards' verdict (compiled.guarded_bytes, the one `guarded_evaluate` reads) says so too."""
        size = guarded_bytes(step, args, self.limits.max_tensor_bytes)
        if size:
            self.check_bytes(size, "its output", step.path, step.op_type, iteration)

    def _run_special(self, step: Step, args: tuple[Any, ...], frame: dict[str, Any],
                     iteration: tuple[int, ...]) -> None:
        """Runs and records a special kernel (control flow, recurrent cells, function calls): its bodies' events
        come before its own, which names their range in `info["children"]`."""
        events = self.trace.events
        first_child = len(events)
        start = _perf()
        try:
            outputs, info = step.fn(args, Call(self, frame, iteration, step.path, step.op_type))
        except ExplorerError as exc:
            self._record_failure(step, args, iteration, exc, first_child, start)
            raise
        except Exception as exc:
            error = self._kernel_error(step, args, iteration, exc)
            self._record_failure(step, args, iteration, error, first_child, start)
            raise error from exc
        seconds = _perf() - start
        if first_child != len(events):
            info["children"] = (first_child, len(events))
        values, size = self._store(step, outputs, frame, iteration)
        if size > self.limits.max_tensor_bytes:
            self._too_big(step, values, iteration)
        gates = info.get("gates")
        if gates is not None:
            size += nbytes(gates)  # recorded gate activations count toward the trace budget too
        self._budget -= size
        recorded = args if step.pick_inputs is None else step.pick_inputs(args)
        event = Event(len(events), step.site, iteration, recorded, values, seconds, info)
        events.append(self._past.record(event, size, self._budget, frame) if self._budget < 0 else event)

    def _store(self, step: Step, outputs: Sequence[Any], frame: dict[str, Any],
               iteration: tuple[int, ...]) -> tuple[tuple[Any, ...], int]:
        """The named outputs (in the site's order) written to the frame, and their bytes; ExecutionError when the
        kernel returned fewer than the node declares."""
        if len(outputs) < step.required_outputs:
            raise ExecutionError(
                f"{where(step.path, step.op_type, iteration)} returned {len(outputs)} outputs for "
                f"{len(step.outputs)} declared", node=step.path, op_type=step.op_type, iteration=iteration)
        values = tuple([np.asarray(value) if isinstance(value, np.generic) else value
                        for name, value in zip(step.outputs, outputs) if name])
        size = 0
        for name, value in zip(step.site.outputs, values):
            frame[name] = value
            size += nbytes(value)
        return values, size

    def _record_failure(self, step: Step, args: Sequence[Any], iteration: tuple[int, ...], exc: ExplorerError,
                        first_child: int, start: float) -> None:
        """The node that failed (or a loop a limit stopped, with why) is the partial trace's last event: no
        outputs, `info["error"]` the message. Failures deeper inside its bodies are recorded by their own node."""
        if getattr(exc, "node", None) != step.path:
            return
        info = cast(EventInfo, dict(exc.info) if isinstance(exc, ExecutionError) else {})
        info["error"] = str(exc)
        events = self.trace.events
        if first_child != len(events):
            info["children"] = (first_child, len(events))
        site = EventSite(step.path, step.op_type, step.site.inputs, ())
        recorded = tuple(args) if step.pick_inputs is None else step.pick_inputs(tuple(args))
        events.append(Event(len(events), site, iteration, recorded, (), _perf() - start, info))

    def _too_big(self, step: Step, values: Sequence[Any], iteration: tuple[int, ...]) -> None:
        """Raises LimitExceeded naming the first output (of the site's, in order) beyond Limits.max_tensor_bytes."""
        for name, value in zip(step.site.outputs, values):
            if nbytes(value) > self.limits.max_tensor_bytes:
                raise LimitExceeded(
                    f"{where(step.path, step.op_type, iteration)} produced {name!r} ({describe(value)}, "
                    f"{nbytes(value)} bytes) beyond Limits.max_tensor_bytes={self.limits.max_tensor_bytes}",
                    limit="max_tensor_bytes", node=step.path, op_type=step.op_type, iteration=iteration)

    def record_iteration(self, node: str, index: tuple[int, ...], inputs: dict[str, Any],
                         outputs: dict[str, Any], info: IterationInfo | None = None) -> None:
        """Records one iteration of a Scan/Loop/SequenceMap (values are shared with the events, not copied)."""
        if self._budget < 0:
            inputs, outputs = self._past.values(inputs), self._past.values(outputs)
        self.trace.iteration_records.append(Iteration(node, index, inputs, outputs, info or IterationInfo()))

    def check_iterations(self, count: int, node: str, op_type: str, iteration: tuple[int, ...]) -> None:
        """Raises LimitExceeded once a loop is about to run more than Limits.max_iterations iterations, or the run
        has recorded Limits.max_events events; the error carries why the loop stopped, which the loop's own event
        records (see _record_failure)."""
        events = len(self.trace.events)
        if events >= self.limits.max_events:
            limit, why = "max_events", (f"the run has recorded {events} events, Limits.max_events="
                                        f"{self.limits.max_events} (loops nested in loops?)")
        elif count >= self.limits.max_iterations:
            limit, why = "max_iterations", f"Limits.max_iterations={self.limits.max_iterations} (endless loop?)"
        else:
            return
        raise LimitExceeded(f"{where(node, op_type, iteration)} stopped after {count} iterations: {why}",
                            limit=limit, node=node, op_type=op_type, iteration=iteration,
                            info={"stop_reason": "limit", "iterations": count})

    def check_events(self, node: str, op_type: str, iteration: tuple[int, ...]) -> None:
        """Raises LimitExceeded, before `node` runs, once the run has recorded Limits.max_events events."""
        if len(self.trace.events) >= self.limits.max_events:
            raise LimitExceeded(f"{where(node, op_type, iteration)} not run: the run has recorded "
                                f"{len(self.trace.events)} events, Limits.max_events={self.limits.max_events}",
                                limit="max_events", node=node, op_type=op_type, iteration=iteration)

    def check_bytes(self, size: int, what: str, node: str, op_type: str, iteration: tuple[int, ...]) -> None:
        if size > self.limits.max_tensor_bytes:
            raise LimitExceeded(
                f"{where(node, op_type, iteration)}: {what} would take {size} bytes, beyond "
                f"Limits.max_tensor_bytes={self.limits.max_tensor_bytes}",
                limit="max_tensor_bytes", node=node, op_type=op_type, iteration=iteration)

    def _kernel_error(self, step: Step, args: Sequence[Any], iteration: tuple[int, ...], exc: Exception) -> ExecutionError:
        shapes = ", ".join(f"{name or '<none>'}: {describe(value)}" for name, value in zip(step.inputs, args))
        kind = "ran out of memory" if isinstance(exc, MemoryError) else f"failed: {type(exc).__name__}: {cause_text(exc)}"
        return ExecutionError(f"{where(step.path, step.op_type, iteration)} {kind} (inputs: {shapes or 'none'})",
                              node=step.path, op_type=step.op_type, iteration=iteration)
