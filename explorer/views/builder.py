"""Model -> Drawing: plans what to draw, puts the boxes and clusters on a canvas, wires the edges, applies the
node states, and writes DOT. The Drawing also says which boxes, nodes, bodies and scopes it shows, so callers
never read the DOT text back."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from ..model.model import Model
from . import styles
from .boxes import BoxDrawer
from .canvas import Canvas
from .dot_escape import parse_svg_id, svg_id
from .draw_facts import ModelFacts
from .draw_plan import Options, Plan
from .edges import EdgeWirer
from .node_states import apply_states, box_of
from .scene import Attrs, DrawnEdge, write_dot


@dataclass(frozen=True)
class Drawing:
    """DOT text and what it shows. `boxes`: every DOT node id drawn; `nodes`: node path -> id of the box
    standing for it (its own box, or the collapsed scope box hiding it); `bodies`: body graph paths drawn
    expanded; `scopes`: scope keys drawn as open clusters; `entry`: the nodes of the graphs drawn -> their box
    (own or scope box); `exits`: an expanded control-flow node's header box -> its end box; `edges`: the edges
    drawn with their SVG ids (see node_states and trace_marks, which style a laid-out drawing); `long_keys`: the
    digests standing for keys too long for an id -> those keys (see `parse`)."""

    dot: str
    boxes: frozenset[str]
    nodes: dict[str, str]
    bodies: frozenset[str]
    scopes: frozenset[str]
    root: str = ""
    entry: Mapping[str, str] = field(default_factory=dict)
    exits: Mapping[str, str] = field(default_factory=dict)
    edges: tuple[DrawnEdge, ...] = ()
    long_keys: Mapping[str, str] = field(default_factory=dict)

    def parse(self, element_id: str) -> tuple[str, tuple[str, ...]]:
        """(kind, keys) of an SVG id of this drawing, its long keys given back whole (see dot_escape.parse_svg_id)."""
        return parse_svg_id(element_id, self.long_keys)

    def shows(self, path: str) -> bool:
        """Whether a node has a box of its own (not hidden in a scope box or a collapsed body)."""
        return self.nodes.get(path) == svg_id("node", path)

    @cached_property
    def shown(self) -> tuple[str, ...]:
        """The nodes with a box of their own, in drawing order (worked out once: a page asks at every rerun)."""
        own = svg_id("node", "")  # the prefix of an op node's own box: most nodes of an overview stand in a scope box
        return tuple(path for path, box in self.nodes.items() if box.startswith(own) and box == svg_id("node", path))

    def box_for(self, path: str) -> str | None:
        """The id of the box standing for a node, or None when the drawing does not cover it."""
        return self.nodes.get(path)


def build(model: Model, options: Options) -> Drawing:
    """The drawing of `model` under `options`."""
    facts = ModelFacts.of(model)
    plan = Plan(facts, options)
    canvas = Canvas(plan.root.path)
    boxes = BoxDrawer(plan, canvas)
    root = boxes.draw()
    wirer = EdgeWirer(plan, canvas, boxes)
    edges = wirer.wire()
    apply_states(plan, canvas)
    root.boxes.extend(canvas.stubs.values())
    defaults: dict[str, Attrs] = {"graph": {**styles.GRAPH_ATTRS, "rankdir": options.rankdir}, "node": dict(styles.NODE_ATTRS),
                "edge": dict(styles.EDGE_ATTRS)}
    nodes = {}
    for path in facts.index.nodes:
        box = box_of(plan, canvas, path)
        if box is not None:
            nodes[path] = box
    bodies = frozenset(g.path for g in canvas.drawn if g.path and g is not plan.root)
    exits = {canvas.entry[p]: canvas.exit[p] for p in canvas.expanded_nodes}
    return Drawing(write_dot(root, edges, defaults), frozenset(canvas.boxes), nodes, bodies,
                   frozenset(canvas.open_scopes), plan.root.path, dict(canvas.entry), exits, wirer.drawn())
