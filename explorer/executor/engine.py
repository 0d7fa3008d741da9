"""The interpreter loop: frames with a scope chain, dispatch to kernels, recording, limits."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..errors import ExecutionError, ExplorerError, LimitExceeded, cause_text, where
from ..trace import Event, EventInfo, Iteration, IterationInfo, Trace
from ..values import describe, nbytes, summarize
from .ops.base import Call
from .program import CompiledGraph, Program, Step

if TYPE_CHECKING:
    from ..limits import Limits

_perf = time.perf_counter


class Engine:
    """Runs compiled graphs for one `run` call, appending every node execution to `trace`."""

    def __init__(self, program: Program, limits: Limits, trace: Trace) -> None:
        self.program = program
        self.limits = limits
        self.trace = trace
        self._budget = limits.trace_budget_bytes

    # A frame is a dict of the values one graph execution sees. A body's frame starts from its initializers and
    # the few outer values it captures (read from the calling frame), so its cost never grows with the outer scope.
    def body_frame(self, graph: CompiledGraph, outer: dict[str, Any], node: str, op_type: str,
                   iteration: tuple[int, ...]) -> dict[str, Any]:
        """The part of a body's frame that is the same for every iteration: initializers and captures."""
        frame = dict(graph.initializers)
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
        for name, value in zip(graph.input_names, inputs):
            frame[name] = value  # formal inputs shadow any outer value of the same name
        self.run_graph(graph, frame, iteration)
        return [frame[name] for name in graph.output_names]

    def run_graph(self, graph: CompiledGraph, frame: dict[str, Any], iteration: tuple[int, ...]) -> None:
        """Runs the steps of one graph execution on `frame`, recording one Event per node (the hot loop: what
        can be decided per node is decided once, in the Step; only what depends on the values happens here)."""
        trace = self.trace
        events = trace.events
        max_bytes, max_events = self.limits.max_tensor_bytes, self.limits.max_events
        perf, ndarray = _perf, np.ndarray
        for step in graph.steps:
            if len(events) >= max_events:
                self.check_events(step.path, step.op_type, iteration)
            names, guard, single = step.inputs, step.guard, step.single_output
            args = [frame[name] if name else None for name in names] if step.has_gaps else [
                frame[name] for name in names]
            if guard is not None:
                try:
                    size = guard(args)
                except Exception:  # noqa: BLE001 - malformed inputs: let the kernel report them itself
                    size = 0
                if size > max_bytes:
                    self.check_bytes(size, "its output", step.path, step.op_type, iteration)
            first_child = len(events)
            start = perf()
            try:
                if step.special:
                    outputs, info = step.fn(args, Call(self, frame, iteration, step.path, step.op_type))
                    if first_child != len(events):
                        info["children"] = (first_child, len(events))
                else:
                    outputs, info = step.fn(args), {}
            except ExplorerError as exc:
                self._record_failure(step, args, iteration, exc, first_child, start)
                raise
            except Exception as exc:
                error = self._kernel_error(step, args, iteration, exc)
                self._record_failure(step, args, iteration, error, first_child, start)
                raise error from exc
            seconds = perf() - start
            if len(outputs) < step.required_outputs:
                raise ExecutionError(
                    f"{where(step.path, step.op_type, iteration)} returned {len(outputs)} outputs for "
                    f"{len(step.outputs)} declared", node=step.path, op_type=step.op_type, iteration=iteration)
            if single is not None:  # most nodes: one output, every input given
                value = frame[single] = outputs[0]
                produced = {single: value}
                recorded = dict(zip(names, args))
                size = value.nbytes if type(value) is ndarray else nbytes(value)
            else:
                produced = dict(zip(step.outputs, outputs))
                recorded = dict(zip(names, args))
                if step.has_gaps:
                    produced.pop("", None)
                    recorded.pop("", None)
                frame.update(produced)
                size = 0
                for value in produced.values():
                    size += value.nbytes if type(value) is ndarray else nbytes(value)
            if size > max_bytes:
                self._too_big(step, produced, iteration)
            if step.special:
                gates = info.get("gates")
                if gates is not None:
                    size += nbytes(gates)  # recorded gate activations count toward the trace budget too
            self._budget -= size
            if self._budget < 0:
                self._summarize_event(produced, recorded, info)
                events.append(Event(len(events), step.path, step.op_type, iteration, recorded, produced, seconds,
                                    info, True))
            else:
                trace.recorded_bytes += size
                events.append(Event(len(events), step.path, step.op_type, iteration, recorded, produced, seconds,
                                    info))

    def _summarize_event(self, produced: dict[str, Any], recorded: dict[str, Any], info: EventInfo) -> None:
        """Past the trace budget an event keeps summaries of its values (in place of the values)."""
        trace = self.trace
        if trace.budget_exceeded_at is None:
            trace.budget_exceeded_at = len(trace.events)
        for values in (produced, recorded):
            for k, v in values.items():
                values[k] = summarize(v)
        gates = info.get("gates")
        if gates is not None:
            info["gates"] = {k: summarize(v) for k, v in gates.items()}

    def _record_failure(self, step: Step, args: list[Any], iteration: tuple[int, ...], exc: ExplorerError,
                        first_child: int, start: float) -> None:
        """The node that failed (or a loop a limit stopped, with why) is the partial trace's last event: no
        outputs, `info["error"]` the message. Failures deeper inside its bodies are recorded by their own node."""
        if getattr(exc, "node", None) != step.path:
            return
        info = cast(EventInfo, dict(exc.info) if isinstance(exc, ExecutionError) else {})
        info["error"] = str(exc)
        if first_child != len(self.trace.events):
            info["children"] = (first_child, len(self.trace.events))
        recorded = {name: value for name, value in zip(step.inputs, args) if name}
        self.trace.events.append(Event(len(self.trace.events), step.path, step.op_type, iteration, recorded, {},
                                       _perf() - start, info))

    def _too_big(self, step: Step, produced: dict[str, Any], iteration: tuple[int, ...]) -> None:
        for name, value in produced.items():
            if nbytes(value) > self.limits.max_tensor_bytes:
                raise LimitExceeded(
                    f"{where(step.path, step.op_type, iteration)} produced {name!r} ({describe(value)}, "
                    f"{nbytes(value)} bytes) beyond Limits.max_tensor_bytes={self.limits.max_tensor_bytes}",
                    limit="max_tensor_bytes", node=step.path, op_type=step.op_type, iteration=iteration)

    def record_iteration(self, node: str, index: tuple[int, ...], inputs: dict[str, Any],
                         outputs: dict[str, Any], info: IterationInfo | None = None) -> None:
        """Records one iteration of a Scan/Loop/SequenceMap (values are shared with the events, not copied)."""
        if self._budget < 0:
            inputs = {k: summarize(v) for k, v in inputs.items()}
            outputs = {k: summarize(v) for k, v in outputs.items()}
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

    def _kernel_error(self, step: Step, args: list[Any], iteration: tuple[int, ...], exc: Exception) -> ExecutionError:
        shapes = ", ".join(f"{name or '<none>'}: {describe(value)}" for name, value in zip(step.inputs, args))
        kind = "ran out of memory" if isinstance(exc, MemoryError) else f"failed: {type(exc).__name__}: {cause_text(exc)}"
        return ExecutionError(f"{where(step.path, step.op_type, iteration)} {kind} (inputs: {shapes or 'none'})",
                              node=step.path, op_type=step.op_type, iteration=iteration)
