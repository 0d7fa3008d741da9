"""Node states on a drawn scene: trace position (pending, executed, running, current, error), rewrite marks
(removed, added), search matches, and fills from a NodeValues overlay; each applied to the box standing for a
node (itself, its scope box or a collapsed owner)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ..proto.graph_index import GraphIndex
from . import styles
from .boxes import TINT
from .canvas import Canvas
from .draw_plan import Plan
from .overlays import RewriteOverlay, TraceOverlay
from .scene import Html


def box_of(plan: Plan, canvas: Canvas, path: str) -> str | None:
    """The box standing for a node in this drawing (itself, its scope box or a collapsed owner), or None."""
    if path in canvas.entry:
        return canvas.entry[path]
    index = plan.facts.index
    ref = index.nodes.get(path)
    if ref is None:
        return None
    return next((canvas.entry[g.owner] for g in index.enclosing(ref.graph.path) if g.owner in canvas.entry), None)


def apply_states(plan: Plan, canvas: Canvas) -> None:
    """Outlines every box by its strongest state, then fills boxes by the value overlay."""
    exits = {canvas.entry[p]: canvas.exit[p] for p in canvas.expanded_nodes}
    states = box_states(plan.facts.index, canvas.entry, lambda path: box_of(plan, canvas, path), exits,
                        cursor=plan.o.cursor, overlay=plan.o.overlay, highlight=plan.o.highlight)
    for box, state in states.items():
        canvas.boxes[box].attrs = styles.with_state(canvas.boxes[box].attrs, state)
    _fill_values(plan, canvas)
    if plan.o.cursor is not None:
        _mark_iteration(plan, canvas, plan.o.cursor)


def box_states(index: GraphIndex, entry: Mapping[str, str], box_for: Callable[[str], str | None],
               exits: Mapping[str, str], *, cursor: TraceOverlay | None = None,
               overlay: RewriteOverlay | None = None, highlight: Iterable[str] = ()) -> dict[str, str]:
    """The strongest state (styles.NODE_STATES) of each box of a drawing: `entry` maps the nodes drawn in the
    shown graphs to their box, `box_for` any node to the box standing for it, `exits` an expanded control-flow
    node's header box to its end box (which shares its state)."""
    states: dict[str, str] = {}
    order = list(styles.NODE_STATES)

    def mark(paths: Iterable[str | None], state: str) -> None:
        for path in paths:
            box = box_for(path) if path else None
            if box is not None and (box not in states or order.index(state) < order.index(states[box])):
                states[box] = state

    if cursor is not None:
        mark([n for n in entry if n not in cursor.executed], "pending")
        mark(cursor.executed, "executed")
    mark(highlight, "match")
    if overlay is not None:
        mark(overlay.added, "added")
        mark(overlay.removed, "removed")
    if cursor is not None:
        ref = index.nodes.get(cursor.current or "")
        mark([g.owner for g in index.enclosing(ref.graph.path) if g.owner] if ref is not None else [], "running")
        mark(_not_taken(index, entry, cursor), "skipped")
        mark([cursor.current], "current")
        mark([cursor.error], "error")
    for box, state in list(states.items()):
        if box in exits:
            states[exits[box]] = state
    return states


def _not_taken(index: GraphIndex, entry: Iterable[str], cursor: TraceOverlay) -> list[str]:
    """Drawn nodes of If branches that did not run where the cursor stands: those of Ifs enclosing the current
    node (it runs in one branch) and those of Ifs that already ran in the current iterations."""
    nodes = index.nodes
    taken = dict(cursor.branches)
    ref = nodes.get(cursor.current or "")
    for graph in index.enclosing(ref.graph.path) if ref is not None else []:
        if graph.owner is not None and nodes[graph.owner].op_type == "If":
            taken[graph.owner] = graph.attribute or ""
    skipped = tuple(f"{body.path}/" for path, branch in taken.items() if path in nodes
                    for body in nodes[path].subgraphs if body.attribute != branch)
    return [path for path in entry if path.startswith(skipped)] if skipped else []


def _fill_values(plan: Plan, canvas: Canvas) -> None:
    values = plan.o.values
    if values is None:
        return
    members: dict[str, list[str]] = {}
    for path in canvas.entry:
        box = box_of(plan, canvas, path)
        if box is not None:
            members.setdefault(box, []).append(path)
    for box, paths in members.items():
        value = values.aggregate(paths)
        if value is not None:
            canvas.boxes[box].attrs = {**canvas.boxes[box].attrs, "fillcolor": values.colour(value),
                                       "fontcolor": styles.HEAT_FONT}


def iteration_text(cursor: TraceOverlay) -> str | None:
    """What the current node's box says about the iterations (one index per enclosing loop) the cursor is in."""
    return "▶ iteration " + ", ".join(str(i) for i in cursor.iteration) if cursor.iteration else None


def _mark_iteration(plan: Plan, canvas: Canvas, cursor: TraceOverlay) -> None:
    box = box_of(plan, canvas, cursor.current) if cursor.current else None
    text = iteration_text(cursor)
    if box is None or text is None:
        return
    attrs = canvas.boxes[box].attrs
    label = attrs["label"]
    shown = label.text if isinstance(label, Html) else str(label)
    attrs["label"] = Html(shown + "<BR/>" + TINT.format(styles.LABEL_TINTS["iteration"], text))
