"""Graph: the diagram with nested bodies (expand, collapse, drill in), search, and the node inspector."""
from __future__ import annotations

import streamlit as st

from explorer.bridge.report import FrameworkComparison
from explorer.docs_links import more
from explorer.ui import diagram, panels, state, widgets, work
from explorer.views.builder import Drawing
from explorer.views.compare import error_values
from explorer.views.framework import own_and_carried_values
from explorer.views.heat import OVERLAY_TITLES, NodeValues
from explorer.views.markup import md
from explorer.views.navigation import breadcrumb, contains, parts
from explorer.views.overlays import TraceOverlay
from explorer.views.search import search

BODIES = {"auto": "auto", "all": "expand", "none": "collapse"}
ERROR = "error"  # colour by the error against side B of the Compare page's comparison
OWN, CARRIED = "own", "carried"  # by the own or the carried error of the Compare page's framework comparison
SEARCH_LIMIT = 200
OVERVIEW_BOXES = 60  # scopes and blocks open while a drawing has at most this many boxes: an overview to read
HEIGHT = 700  # px of the canvas: with the controls above it, the diagram fills a 900 px high window
SEARCH_HELP = ("Names and paths, op types (`op:Conv`), value names (`value:x`), shapes (`shape:1x64x?`), and in the "
               "recorded run: `nan` (nodes that wrote NaN or Inf), `slower:0.5ms` (nodes slower than that).")


def framework_comparison(model) -> tuple[str, FrameworkComparison | None]:
    """The Compare page's latest comparison of this model with its framework model (its key), if any."""
    found = st.session_state.get(state.FRAMEWORK_COMPARED)
    return (found[1], found[2]) if found is not None and found[0] == model.sha256 else ("", None)


def on_diagram_click(kind: str, keys: tuple[str, ...]) -> None:
    if kind in ("node", "wrapper", "exit"):
        state.select_node(keys[0])
    elif kind in ("graph", "scope"):
        st.session_state[state.GRAPH_PATH] = keys[-1]


def set_focus(target: str) -> None:
    st.session_state[state.GRAPH_PATH] = target


def toggle_body(path: str, expanded: bool) -> None:
    st.session_state[state.EXPANDED] = {**st.session_state[state.EXPANDED], path: expanded}


def body_actions(model, path: str, drawing: Drawing) -> None:
    """Drill into, expand or collapse the bodies of the selected node."""
    shown = drawing.shows(path)
    for body in model.node(path).subgraphs:
        drill, fold = st.columns(2)
        drill.button(f"Drill into {md(body.attribute)}", key=state.keyed(state.K_DRILL, body.path), on_click=set_focus,
                     args=(body.path,), width="stretch")
        if not shown:
            continue
        expanded = body.path in drawing.bodies
        fold.button(f"{'Collapse' if expanded else 'Expand'} {md(body.attribute)}", key=state.keyed(state.K_FOLD, body.path),
                    on_click=toggle_body, args=(body.path, not expanded), width="stretch")


def go_to(model, path: str) -> None:
    """Selects a node and draws the part of the model holding it (the current focus when it covers the node)."""
    state.select_node(path)
    if not contains(model, st.session_state[state.GRAPH_PATH], path):
        st.session_state[state.GRAPH_PATH] = ""


def search_results(model, trace, query: str) -> list[str]:
    """The matches of the search box, listed with their paths; choosing one goes to it."""
    found = search(model, query, trace=trace, limit=SEARCH_LIMIT) if query else []
    if not query:
        return []
    more = f" (first {SEARCH_LIMIT})" if len(found) == SEARCH_LIMIT else ""
    if not found:
        st.caption("No node matches" + ("" if trace is not None else " (NaN and time searches need a run)"))
        return []
    labels = {hit.path: f"{hit.path} · {hit.field}: {hit.text}" for hit in found}
    st.selectbox(f"{len(found)} node(s) match{more}: go to one", list(labels), index=None,
                 format_func=labels.__getitem__, key=state.keyed(state.W_SEARCH_PICK, query),
                 placeholder="Choose a match to bring it into view",
                 on_change=lambda: go_to(model, st.session_state[state.keyed(state.W_SEARCH_PICK, query)]))
    return list(labels)


def navigator(model, focus: str) -> None:
    """One level of the hierarchy below the current focus (scopes, blocks, bodies): open one to draw only it."""
    below = parts(model, focus)
    if not below:
        return
    titles = {key: f"{title} · {size} nodes" for key, title, size in below}
    st.selectbox(f"Inside this view: {len(below)} part(s)", list(titles), index=None, format_func=titles.__getitem__,
                 key=state.keyed(state.W_PART, focus), placeholder="Open a scope, block or body",
                 on_change=lambda: set_focus(st.session_state[state.keyed(state.W_PART, focus)]))


def draw(model, trace, report: bool = False) -> None:
    """Breadcrumbs and controls (with the hierarchy navigator) across the page, the diagram across the whole
    width, the inspector under it. `report`: the canvas reruns the page once its drawing is on screen."""
    focus = st.session_state[state.GRAPH_PATH]
    try:
        crumbs = breadcrumb(model, focus)
    except (KeyError, ValueError):
        focus, crumbs = "", breadcrumb(model, "")
    if len(crumbs) > 1:
        for column, (target, title) in zip(st.columns(len(crumbs)), crumbs):
            column.button(md(title), key=state.keyed(state.K_CRUMB, target), on_click=set_focus, args=(target,),
                          disabled=target == focus, width="stretch")
    mode_column, colour_column = st.columns([1, 2], vertical_alignment="bottom")
    search_column, pick_column, part_column = st.columns(3, vertical_alignment="bottom")
    mode = mode_column.segmented_control("Bodies", list(BODIES), format_func=BODIES.__getitem__, default="auto",
                                         key=state.W_BODIES) or "auto"
    query = search_column.text_input("Search", key=state.W_SEARCH, placeholder="name, op:Conv, shape:1x64, nan",
                                     help=SEARCH_HELP)
    compared_key, compared = work.last_comparison() or ("", None)
    framework_key, framework = framework_comparison(model)
    overlays = {**OVERLAY_TITLES, **({ERROR: f"error vs {compared.b_label}"} if compared is not None else {}),
                **({OWN: "own error vs framework", CARRIED: "carried error"} if framework is not None else {})}
    colour = colour_column.segmented_control("Colour by", list(overlays), format_func=overlays.__getitem__,
                                             key=state.W_COLOUR, disabled=trace is None and framework is None,
                                             help="Time spent, largest |value| written, NaN/Inf written; once the "
                                                  "Compare page has compared this run, the error against B; once it "
                                                  "has compared this model with its framework model, each node's "
                                                  "own error (where error starts) or the error it carries")
    selected = state.selected_node()
    path = selected if selected in model.index.nodes else None
    hits = search_results(model, trace, query)
    if colour == ERROR and compared is not None:
        values: NodeValues | None = error_values(compared)
        colour = f"{ERROR}:{compared_key}"
    elif colour in (OWN, CARRIED) and framework is not None:
        values = own_and_carried_values(framework)[colour == CARRIED]
        colour = f"{colour}:{framework_key}"
    else:
        values = state.node_values(colour) if colour in OVERLAY_TITLES else None
    overrides = st.session_state[state.EXPANDED]
    rule = mode if mode != "auto" else (dict(overrides) or None)
    failed = trace is not None and trace.error is not None and trace.error.node
    cursor = TraceOverlay.from_trace(trace) if trace is not None and failed else None
    key = repr((hits, path, focus, rule, (state.run_key(), colour) if values else None,
                state.run_key() if cursor else None))
    ahead = report and diagram.show_ahead(model, key, canvas=state.W_GRAPH_CLICK, height=HEIGHT)
    if ahead:  # its frame loads while the drawing is made; the rerun it asks for once loaded shows the drawing
        state.put_off_again()
    drawing = diagram.drawing(model, key, highlight=hits, reveal=[path] if path else [], focus=focus or None,
                              expand=rule, cursor=cursor, values=values, edge_labels=None, max_boxes=OVERVIEW_BOXES)
    with pick_column:
        widgets.node_selector(model, "Inspect a node (or click one in the diagram)",
                              drawn=drawing.shown)
    if not ahead:
        diagram.show(drawing, key=state.W_GRAPH_CLICK, on_click=on_diagram_click, reveal=path, mark=True,
                     hits=hits, values=values, height=HEIGHT, report=report)
    with part_column:
        navigator(model, focus)
    if path is None:
        st.caption("Click a node in the diagram, or search for one above, to inspect it here.")
        return
    body_actions(model, path, drawing)
    panels.node_inspector(model, trace, path)
    runs = trace.events_of(path) if trace is not None else []
    if runs and st.button("Step through from its first run", key=state.W_GOTO_STEP):
        state.set_cursor(runs[0].index)
        st.switch_page("explorer/ui/pages/step.py")


st.title("Graph", help=more("The model with its nested bodies: expand, search, colour and inspect its nodes.", "graph"))
model = state.active_model()
if model is None:
    st.info("Choose a model in the sidebar.")
elif state.run_ready():
    draw(model, state.current_trace())
elif state.put_off_run(model):
    draw(model, None, report=True)  # the overview first: its canvas's report of the drawing reruns the page to run
else:  # a run not done yet: the drawing is on screen while it runs, then the page shows what the run adds
    draw(model, None)
    if state.current_run() is not None and state.run_ready():
        st.rerun()
