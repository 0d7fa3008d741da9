"""A trace position as marks on an already laid-out drawing: which boxes and edges take which state (the same
states, by the same rules, that node_states writes into DOT), and the current node's iteration badge. Stepping
through a trace then restyles one layout instead of laying out a new one per step; `state_css` says how each
state looks on graphviz's SVG (colours from styles)."""
from __future__ import annotations

from dataclasses import dataclass

from ..model.model import Model
from . import styles
from .builder import Drawing
from .node_states import box_states, iteration_text
from .overlays import TraceOverlay

DASH = "5,2"  # stroke-dasharray of graphviz's "dashed"


@dataclass(frozen=True)
class Marks:
    """`states`: state name -> SVG ids of the boxes (styles.NODE_STATES) or edges (styles.EDGE_STATES) in it;
    `badge`: (box id, text) shown beside the current node, e.g. its iterations."""

    states: dict[str, list[str]]
    badge: tuple[str, str] | None = None

    def state_of(self, element_id: str) -> str | None:
        return next((state for state, ids in self.states.items() if element_id in ids), None)

    def as_args(self) -> dict[str, object]:
        return {"states": self.states, "badge": list(self.badge) if self.badge else None}


def trace_marks(model: Model, drawing: Drawing, cursor: TraceOverlay) -> Marks:
    """The marks of a trace position on a drawing made without a cursor (reveal the current node to draw it)."""
    boxes = box_states(model.index, drawing.entry, drawing.box_for, drawing.exits, cursor=cursor)
    states: dict[str, list[str]] = {}
    for box, state in boxes.items():
        states.setdefault(state, []).append(box)
    head = drawing.entry.get(cursor.current or "")
    if head is not None:
        tail = drawing.exits.get(head, head)
        for edge in drawing.edges:
            if edge.head == head and cursor.inputs.intersection(edge.names):
                states.setdefault("input", []).append(edge.id)
            elif edge.tail == tail and cursor.outputs.intersection(edge.names):
                states.setdefault("output", []).append(edge.id)
    text = iteration_text(cursor)
    badge_box = drawing.box_for(cursor.current) if cursor.current else None
    return Marks(states, (badge_box, text) if badge_box and text else None)


def _declarations(look: dict[str, str], shape: str, text: str) -> list[str]:
    rules = []
    stroke = {"stroke": look["color"]} if "color" in look else {}
    shape_decl = {**stroke, **({"fill": look["fillcolor"]} if "fillcolor" in look else {})}
    if "penwidth" in look:
        shape_decl["stroke-width"] = look["penwidth"]
    if look.get("extra_style") == "dashed" or look.get("style") == "dashed":
        shape_decl["stroke-dasharray"] = DASH
    if shape_decl:
        rules.append(shape + " { " + " ".join(f"{k}: {v} !important;" for k, v in shape_decl.items()) + " }")
    if "fontcolor" in look:
        rules.append(f"{text} {{ fill: {look['fontcolor']} !important; }}")
    return rules


def state_css() -> str:
    """CSS giving graphviz SVG boxes (`g.node.st-<state>`) and edges (`g.edge.st-<state>`) each state's look."""
    rules: list[str] = []
    for state, look in styles.NODE_STATES.items():
        g = f"g.node.st-{state}"
        rules += _declarations(look, f"{g} > path, {g} > polygon, {g} a > path, {g} a > polygon", f"{g} text")
    for state, look in styles.EDGE_STATES.items():
        g = f"g.edge.st-{state}"
        rules += _declarations({k: v for k, v in look.items() if k != "fontcolor"}, f"{g} path", f"{g} text")
        rules.append(f"{g} polygon {{ stroke: {look['color']} !important; fill: {look['color']} !important; }}")
        if "fontcolor" in look:
            rules.append(f"{g} text {{ fill: {look['fontcolor']} !important; }}")
    return "\n".join(rules)
