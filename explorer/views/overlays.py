"""Overlays drawn on top of a diagram: a position in a trace (step-through) and an optimizer rewrite."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..trace import Trace


@dataclass(frozen=True)
class TraceOverlay:
    """What a trace position shows: nodes executed so far, the current node with the value names it read and
    wrote, and the node that raised (when the run failed). Paths are static node paths."""

    executed: frozenset[str] = frozenset()
    current: str | None = None
    inputs: frozenset[str] = frozenset()
    outputs: frozenset[str] = frozenset()
    error: str | None = None
    iteration: tuple[int, ...] = ()

    @classmethod
    def from_trace(cls, trace: Trace, event_index: int | None = None) -> TraceOverlay:
        """The overlay at `trace.events[event_index]` (negative indices count from the end). None means the
        end of the run: the last event, or for a failed run the failing node itself (`len(trace.events)`
        too)."""
        events = trace.events
        error = trace.error.get("node") if trace.error else None
        at_error = error is not None and (event_index is None or event_index == len(events))
        if event_index is None:
            event_index = len(events) - 1
        if at_error:
            iteration = tuple(trace.error.get("iteration") or ())
            return cls(frozenset(e.node for e in events), error, error=error, iteration=iteration)
        if not events:
            return cls(error=error)
        if not -len(events) <= event_index < len(events):
            raise IndexError(f"event index {event_index} is outside the trace's {len(events)} events")
        event = events[event_index]
        executed = frozenset(e.node for e in events[: event_index % len(events) + 1])
        return cls(executed, event.node, frozenset(event.inputs), frozenset(event.outputs), error,
                   event.iteration)


@dataclass(frozen=True)
class RewriteOverlay:
    """Nodes an optimizer rewrite removed (drawn on the model before it) and added (on the model after it).
    Paths absent from the drawn model are ignored, so one overlay can serve both drawings."""

    removed: frozenset[str] = field(default_factory=frozenset)
    added: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        object.__setattr__(self, "removed", frozenset(self.removed))
        object.__setattr__(self, "added", frozenset(self.added))
