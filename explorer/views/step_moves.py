"""The Step page's moves as data, and the frames of the events around the cursor that the canvas steps through on
its own: each frame holds what the canvas shows at that event (marks, the box to follow, the position line, the
moves from there), so a click shows the next step at once and the server is told afterwards."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..model.model import Model
from ..trace.trace import Trace
from . import cursor as moves
from .builder import Drawing
from .draw_facts import ModelFacts
from .draw_plan import Options, revealed
from .overlays import TraceOverlay
from .trace_marks import trace_marks

BEHIND, AHEAD = 4, 12  # events before and after the cursor sent to the canvas with it (with the moves' targets)
VIEWS = {"around": "around the node", "graph": "its graph", "model": "whole model"}


@dataclass(frozen=True)
class Move:
    """A control of the stepper: `name` (stable), its icon and label, `help`, the event it goes to (None:
    disabled) and `group` (the loop level it belongs to, shown before its moves; "" for the main row)."""

    name: str
    icon: str
    label: str
    help: str
    target: int | None
    group: str = ""

    def as_args(self) -> list[Any]:
        return [self.name, self.icon, self.label, self.help, self.target, self.group]


def moves_at(model: Model, trace: Trace, index: int, selected: str | None, held: bool = False) -> list[Move]:
    """The moves from event `index`: first, back, next, last (next and last `held` back while a learner's
    prediction is pending), the same node's previous/next iteration, the selected node's next run, the first
    NaN/Inf, then previous/next iteration at every loop level around the event, outermost first. A move to
    where the cursor stands is disabled."""
    event = trace.events[index]
    last = len(trace.events) - 1
    selected = selected or event.node
    found = [
        Move("first", "|◀", "", "First event", 0),
        Move("back", "◀", "", "Previous event", index - 1 if index > 0 else None),
        Move("next", "▶", "", "Next event", index + 1 if index < last and not held else None),
        Move("last", "▶|", "", "Last event", None if held else last),
        Move("prev_iteration", "↶", "prev iteration", "Same node, previous iteration of its innermost loop",
             moves.previous_iteration(model, trace, index)),
        Move("next_iteration", "↷", "next iteration", "Same node, next iteration of its innermost loop",
             moves.next_iteration(model, trace, index)),
        Move("next_run", "⟳", "next run of node", f"Next execution of the selected node {selected}",
             moves.next_execution(trace, index, selected)),
        Move("nonfinite", "⚠", "first NaN/Inf", "First event whose outputs hold NaN or Inf",
             moves.first_nonfinite(trace)),
    ]
    for level, (owner, _) in enumerate(moves.loop_levels(model, event.node)[:len(event.iteration)]):
        name = moves.node_label(owner)
        group = f"{name} · iteration {event.iteration[level]}"
        for step, icon, word in ((-1, "◀", "Previous"), (+1, "▶", "Next")):
            found.append(Move(f"level{level}{'+' if step > 0 else '-'}", icon, "", f"{word} iteration of {name}",
                              moves.move_iteration(model, trace, index, level, step), group))
    return [m if m.target != index else Move(m.name, m.icon, m.label, m.help, None, m.group) for m in found]


def drawing_key(model: Model, trace: Trace, index: int, view: str) -> tuple[str, str]:
    """What the Step page draws at event `index` in view `view` (see VIEWS): (focus, a key naming the drawing).
    Events with the same key share one drawing (and layout): the canvas can step between them on its own."""
    node = trace.events[index].node
    focus = {"model": "", "graph": model.node(node).graph.path, "around": moves.surroundings(model, node)}[view]
    error = trace.error.node if trace.error else None
    facts = ModelFacts.of(model)
    bodies, scopes = revealed(facts, [p for p in (node, error) if p])
    closed = sorted(b for b in bodies if facts.sizes.get(b, 0) > Options.max_expanded_nodes)  # small ones open anyway
    return focus, repr((focus, closed, sorted(scopes)))


def frame(model: Model, trace: Trace, drawing: Drawing, index: int, selected: str | None,
          held: bool = False) -> dict[str, Any]:
    """What the canvas shows at event `index` on `drawing`: marks, the box to follow, the position line (see
    `position_text`) and the moves from there."""
    marks = trace_marks(model, drawing, TraceOverlay.from_trace(trace, index))
    return {"marks": marks.as_args(), "focus": drawing.box_for(trace.events[index].node),
            "text": position_text(model, trace, index),
            "moves": [m.as_args() for m in moves_at(model, trace, index, selected, held)]}


def position_text(model: Model, trace: Trace, index: int) -> str:
    """Where the cursor stands: "Event i of 0–last", where the event ran (its node inside every enclosing
    loop iteration and branch) and its time."""
    event = trace.events[index]
    return (f"Event {index} of 0–{len(trace.events) - 1} · {moves.breadcrumb_text(model, event)} · "
            f"{event.seconds * 1e3:.3f} ms")


def neighbours(trace: Trace, index: int, targets: Iterable[int | None]) -> list[int]:
    """The events whose frames go with event `index`'s: BEHIND before it, AHEAD after it and the targets of
    its moves, in order."""
    near = range(max(0, index - BEHIND), min(len(trace.events), index + AHEAD + 1))
    return sorted({*near, *(t for t in targets if t is not None)} - {index})
