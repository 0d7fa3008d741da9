"""The interpreter loop: frames with a scope chain, dispatch to kernels, recording, limits."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ExecutionError, ExplorerError, LimitExceeded, where
from ..trace import Event, Iteration, Trace
from ..values import describe, nbytes, summarize
from .kernels import Call
from .program import CompiledGraph, Program

if TYPE_CHECKING:
    from ..limits import Limits

_perf = time.perf_counter


class Engine:
    """Runs compiled graphs for one `run` call, appending every node execution to `trace`."""

    def __init__(self, program: Program, limits: "Limits", trace: Trace) -> None:
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
        events = self.trace.events
        for step in graph.steps:
            args = [frame[name] if name else None for name in step.inputs]
            if step.guard is not None:
                self._check_allocation(step, args, iteration)
            first_child = len(events)
            start = _perf()
            try:
                if step.special:
                    outputs, info = step.fn(args, Call(self, frame, iteration, step.path, step.op_type))
                else:
                    outputs, info = step.fn(args), None
            except ExplorerError as exc:
                stopped = getattr(exc, "info", None)
                if stopped is not None and getattr(exc, "node", None) == step.path:
                    # a loop stopped by a limit: keep its own event, with why it stopped, in the partial trace
                    stopped["children"] = (first_child, len(events))
                    self._record(step, args, {}, iteration, _perf() - start, stopped)
                raise
            except Exception as exc:  # noqa: BLE001 - any kernel failure becomes an ExecutionError with context
                raise self._kernel_error(step, args, iteration, exc) from exc
            seconds = _perf() - start
            if info is None:
                info = {}
            elif first_child != len(events):
                info["children"] = (first_child, len(events))
            produced = {}
            for name, value in zip(step.outputs, outputs):
                if name:
                    frame[name] = value
                    produced[name] = value
            if len(outputs) < sum(1 for n in step.outputs if n):
                raise ExecutionError(
                    f"{where(step.path, step.op_type, iteration)} returned {len(outputs)} outputs for "
                    f"{len(step.outputs)} declared", node=step.path, op_type=step.op_type, iteration=iteration)
            self._record(step, args, produced, iteration, seconds, info)

    def _record(self, step, args, produced, iteration, seconds, info) -> None:
        events = self.trace.events
        size = 0
        for value in produced.values():
            size += value.nbytes if isinstance(value, np.ndarray) else nbytes(value)
        if size > self.limits.max_tensor_bytes:
            for name, value in produced.items():
                if nbytes(value) > self.limits.max_tensor_bytes:
                    raise LimitExceeded(
                        f"{where(step.path, step.op_type, iteration)} produced {name!r} ({describe(value)}, "
                        f"{nbytes(value)} bytes) beyond Limits.max_tensor_bytes={self.limits.max_tensor_bytes}",
                        limit="max_tensor_bytes", node=step.path, op_type=step.op_type, iteration=iteration)
        inputs = {name: value for name, value in zip(step.inputs, args) if name}
        summarized = False
        self._budget -= size
        if self._budget < 0:
            summarized = True
            if self.trace.budget_exceeded_at is None:
                self.trace.budget_exceeded_at = len(events)
            produced = {k: summarize(v) for k, v in produced.items()}
            inputs = {k: summarize(v) for k, v in inputs.items()}
        else:
            self.trace.recorded_bytes += size
        events.append(Event(len(events), step.path, step.op_type, iteration, inputs, produced, seconds, info,
                            summarized))

    def record_iteration(self, node: str, index: tuple[int, ...], inputs: dict[str, Any],
                         outputs: dict[str, Any], info: dict[str, Any] | None = None) -> None:
        """Records one iteration of a Scan/Loop/SequenceMap (values are shared with the events, not copied)."""
        if self._budget < 0:
            inputs = {k: summarize(v) for k, v in inputs.items()}
            outputs = {k: summarize(v) for k, v in outputs.items()}
        self.trace.iteration_records.append(Iteration(node, index, inputs, outputs, info or {}))

    def check_iterations(self, count: int, node: str, op_type: str, iteration: tuple[int, ...]) -> None:
        """Raises LimitExceeded once a loop is about to run more than Limits.max_iterations iterations."""
        if count >= self.limits.max_iterations:
            raise LimitExceeded(
                f"{where(node, op_type, iteration)} stopped after {count} iterations: "
                f"Limits.max_iterations={self.limits.max_iterations} (endless loop?)",
                limit="max_iterations", node=node, op_type=op_type, iteration=iteration)

    def check_bytes(self, size: int, what: str, node: str, op_type: str, iteration: tuple[int, ...]) -> None:
        if size > self.limits.max_tensor_bytes:
            raise LimitExceeded(
                f"{where(node, op_type, iteration)}: {what} would take {size} bytes, beyond "
                f"Limits.max_tensor_bytes={self.limits.max_tensor_bytes}",
                limit="max_tensor_bytes", node=node, op_type=op_type, iteration=iteration)

    def _check_allocation(self, step, args: list, iteration: tuple[int, ...]) -> None:
        try:
            size = step.guard(args)
        except Exception:  # noqa: BLE001 - malformed inputs: let the kernel report them itself
            return
        self.check_bytes(size, "its output", step.path, step.op_type, iteration)

    def _kernel_error(self, step, args: list, iteration: tuple[int, ...], exc: Exception) -> ExecutionError:
        shapes = ", ".join(f"{name or '<none>'}: {describe(value)}" for name, value in zip(step.inputs, args))
        kind = "ran out of memory" if isinstance(exc, MemoryError) else f"failed: {type(exc).__name__}: {exc}"
        return ExecutionError(f"{where(step.path, step.op_type, iteration)} {kind} (inputs: {shapes or 'none'})",
                              node=step.path, op_type=step.op_type, iteration=iteration)
