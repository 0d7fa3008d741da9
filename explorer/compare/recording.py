"""One side of a comparison as values: every value a node produced, keyed by (node path, value name), each
with its executions by iteration tuple in execution order. Built from an explorer trace, from onnxruntime's
exposed values, or from reference values a user brings (keyed by ONNX value names)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model.model import Model
from ..trace.spill import RunFolder
from ..trace.trace import Trace
from ..trace.values import ValueSummary

Key = tuple[str, str]  # (node path, value name)


@dataclass
class Produced:
    """Where one value comes from: its node, op type, output position, and per iteration tuple its content and
    the event index (execution order) that produced it."""

    node: str
    op_type: str
    name: str
    position: int
    values: dict[tuple[int, ...], Any] = field(default_factory=dict)
    order: dict[tuple[int, ...], int] = field(default_factory=dict)

    @property
    def key(self) -> Key:
        return (self.node, self.name)

    @property
    def first_order(self) -> int:
        return min(self.order.values(), default=-1)


@dataclass
class Recording:
    """The values of one side. `kind` is 'explorer', 'onnxruntime' or 'reference'; `missing` lists values that
    side could not provide, with the reason."""

    label: str
    kind: str
    produced: dict[Key, Produced] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    model: Model | None = None
    trace: Trace | None = None
    error: str | None = None  # the side's run failed here (its values are those recorded up to the failure)
    limit_hit: bool = False  # the failure was one of explorer's limits (onnxruntime has none: not asked then)
    missing: dict[Key, str] = field(default_factory=dict)
    given: dict[str, Any] = field(default_factory=dict, repr=False)  # reference values exactly as given
    spill: RunFolder | None = field(default=None, repr=False)  # where its values past the memory budget are

    def release(self) -> None:
        """Drops from memory the pages of values on disk read so far (they are read again when needed)."""
        if self.spill is not None:
            self.spill.release()

    def by_name(self) -> dict[str, list[Produced]]:
        found: dict[str, list[Produced]] = {}
        for p in self.produced.values():
            found.setdefault(p.name, []).append(p)
        return found

    def in_order(self) -> list[Produced]:
        """Produced values in the order they first appeared."""
        return sorted(self.produced.values(), key=lambda p: p.first_order)


def from_trace(trace: Trace, label: str, model: Model | None = None) -> Recording:
    """Every output of every recorded event (values past the trace budget are summaries: kept, not compared);
    a partial trace keeps its run's error."""
    failure: Any = trace.error
    message = kind = None
    if failure is not None:  # a dict, or an object with the same fields
        message = failure.get("message") if isinstance(failure, dict) else getattr(failure, "message", str(failure))
        kind = failure.get("kind") if isinstance(failure, dict) else getattr(failure, "kind", None)
    recording = Recording(label, "explorer", outputs=dict(trace.outputs), model=model, trace=trace,
                          error=message, limit_hit=kind == "LimitExceeded", spill=trace.spill)
    for event in trace.events:
        for position, (name, value) in enumerate(event.outputs.items()):
            key = (event.node, name)
            entry = recording.produced.get(key)
            if entry is None:
                entry = recording.produced[key] = Produced(event.node, event.op_type, name, position)
            entry.values[event.iteration] = value
            entry.order[event.iteration] = event.index
    return recording


def is_summary(value: Any) -> bool:
    return isinstance(value, ValueSummary)


def from_values(values: dict[str, Any], label: str, like: Recording) -> Recording:
    """Reference values keyed by value name, placed where `like` (an explorer recording of the same model)
    produced that name at the top level; a name produced only inside a body must come stacked over its
    iterations (axis 0 per enclosing loop), a name `like` never produced is listed as missing."""
    recording = Recording(label, "reference", outputs={k: v for k, v in values.items() if k in like.outputs},
                          given=dict(values))
    by_name = like.by_name()
    for name, value in values.items():
        sources = by_name.get(name)
        if not sources:
            recording.missing[("", name)] = "no node of the model produces a value of this name"
            continue
        source = sources[0]
        entry = recording.produced[source.key] = Produced(source.node, source.op_type, name, source.position)
        for iteration, order in source.order.items():
            try:
                entry.values[iteration] = value[iteration] if iteration else value
            except (IndexError, TypeError):
                recording.missing[source.key] = (f"produced inside a body at iteration {iteration}: give it stacked "
                                                 "over the iterations (one axis per enclosing loop)")
                break
            entry.order[iteration] = order
    return recording
