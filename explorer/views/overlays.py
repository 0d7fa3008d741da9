"""Overlays drawn on top of a diagram: a position in a trace (step-through) and an optimizer rewrite."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..trace.trace import Event, Trace


@dataclass(frozen=True)
class TraceOverlay:
    """What a trace position shows: nodes executed so far, the current node with the value names it read and
    wrote, the node that raised (when the run failed), and the branch each If took in the iterations the cursor
    stands in (`branches`: If path -> branch attribute; the other branch did not run there). Paths are static
    node paths."""

    executed: frozenset[str] = frozenset()
    current: str | None = None
    inputs: frozenset[str] = frozenset()
    outputs: frozenset[str] = frozenset()
    error: str | None = None
    iteration: tuple[int, ...] = ()
    branches: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def from_trace(cls, trace: Trace, event_index: int | None = None) -> TraceOverlay:
        """The overlay at `trace.events[event_index]` (negative indices count from the end). None means the
        end of the run: the last event, or for a failed run the failing node itself (`len(trace.events)`
        too)."""
        events = trace.events
        error = trace.error.node if trace.error else None
        at_error = error is not None and (event_index is None or event_index == len(events))
        if event_index is None:
            event_index = len(events) - 1
        if at_error:
            iteration = trace.error.iteration if trace.error else ()
            return cls(frozenset(e.node for e in events), error, error=error, iteration=iteration)
        if not events:
            return cls(error=error)
        if not -len(events) <= event_index < len(events):
            raise IndexError(f"event index {event_index} is outside the trace's {len(events)} events")
        event = events[event_index]
        before = events[: event_index % len(events) + 1]
        executed = frozenset(e.node for e in before)
        return cls(executed, event.node, frozenset(event.inputs), frozenset(event.outputs), error,
                   event.iteration, _branches(before, event.iteration))


def _branches(events: list[Event], iteration: tuple[int, ...]) -> frozenset[tuple[str, str]]:
    """The branch of each If that ran latest within the iterations `iteration` names (its enclosing loops)."""
    taken: dict[str, str] = {}
    for event in events:
        depth = min(len(event.iteration), len(iteration))
        if "branch" in event.info and event.iteration[:depth] == iteration[:depth]:
            taken[event.node] = event.info["branch"]
    return frozenset(taken.items())


@dataclass(frozen=True)
class RewriteOverlay:
    """Nodes an optimizer rewrite removed (drawn on the model before it) and added (on the model after it).
    Paths absent from the drawn model are ignored, so one overlay can serve both drawings."""

    removed: frozenset[str] = field(default_factory=frozenset)
    added: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        object.__setattr__(self, "removed", frozenset(self.removed))
        object.__setattr__(self, "added", frozenset(self.added))
