"""Step through: a cursor over the recorded events, with the current node's values."""
from __future__ import annotations

import streamlit as st

from explorer.model import Model
from explorer.trace import Event, Trace
from explorer.ui import diagram, jobs, learning, panels, state, url, work
from explorer.views import cursor as moves
from explorer.views.markup import md, md_code
from explorer.views.overlays import TraceOverlay
from explorer.views.trace_marks import trace_marks

WHOLE_MODEL_LIMIT = 150  # nodes: above this the diagram shows only the current node's surroundings by default
VIEWS = {"around": "around the node", "graph": "its graph", "model": "whole model"}


def _go(index: int | None) -> None:
    if index is not None:
        state.set_cursor(index)


def _clicked(kind: str, keys: tuple[str, ...]) -> None:
    """A click on a node selects it and moves the cursor to its next execution (or its first)."""
    if kind not in ("node", "wrapper", "exit"):
        return
    trace = state.current_trace()
    state.select_node(keys[0])
    runs = trace.events_of(keys[0]) if trace is not None else []
    if trace is not None and runs:
        here = state.cursor(trace)
        state.set_cursor(next((e.index for e in runs if e.index > here), runs[0].index))


def draw(model, trace, index: int) -> None:
    """The diagram with the current node, its inputs and outputs, and what ran before it."""
    event = trace.events[index]
    default = "model" if len(model.index.nodes) <= WHOLE_MODEL_LIMIT else "around"
    view = st.segmented_control("Draw", list(VIEWS), format_func=VIEWS.__getitem__, default=default,
                                key=state.W_STEP_VIEW) or default
    focus = {"model": "", "graph": model.node(event.node).graph.path,
             "around": moves.surroundings(model, event.node)}[view]
    cursor = TraceOverlay.from_trace(trace, index)
    # drawn without the cursor, so every step in the same part of the model reuses one layout; the step's
    # states are marks the canvas applies to it
    reveal = [p for p in (event.node, cursor.error) if p]
    drawing = diagram.drawing(model, repr((focus, reveal)), focus=focus or None, reveal=reveal, edge_labels=None)
    diagram.show(drawing, key=state.W_STEP_DIAGRAM, on_click=_clicked, reveal=event.node,
                 marks=trace_marks(model, drawing, cursor), step=index)


def iteration_moves(model, trace, index: int) -> None:
    """Previous / next iteration of each loop around the current event, outermost first, in one row."""
    event = trace.events[index]
    levels = moves.loop_levels(model, event.node)[:len(event.iteration)]
    if not levels:
        return
    columns = iter(st.columns([4, 1, 1] * len(levels) + [max(0, 3 - len(levels)) * 6 + 0.01],
                              vertical_alignment="center"))
    for level, (owner, _) in enumerate(levels):
        next(columns).caption(f"{md(moves.node_label(owner))} · iteration {event.iteration[level]}")
        for step, icon in ((-1, ":material/chevron_left:"), (+1, ":material/chevron_right:")):
            target = moves.move_iteration(model, trace, index, level, step)
            next(columns).button("", key=state.keyed(state.K_ITERATION_MOVE, level, step), icon=icon, width="stretch",
                                 help=f"{'Previous' if step < 0 else 'Next'} iteration of {md(moves.node_label(owner))}",
                                 disabled=target is None, on_click=_go, args=(target,))


def toolbar(model: Model, trace: Trace, index: int, held: bool) -> None:
    """The moves (first, back, next, last, by iteration, by node, to the first NaN/Inf) and the event slider."""
    event = trace.events[index]
    last = len(trace.events) - 1
    selected = state.selected_node() or event.node
    jumps = {  # key: (label, icon, target, help)
        "first": ("", ":material/first_page:", 0, "First event"),
        "back": ("", ":material/chevron_left:", index - 1 if index > 0 else None, "Previous event"),
        "next": ("", ":material/chevron_right:", index + 1 if index < last and not held else None, "Next event"),
        "last": ("", ":material/last_page:", None if held else last, "Last event"),
        "prev_iteration": ("prev iteration", ":material/undo:", moves.previous_iteration(model, trace, index),
                           "Same node, previous iteration of its innermost loop"),
        "next_iteration": ("next iteration", ":material/redo:", moves.next_iteration(model, trace, index),
                           "Same node, next iteration of its innermost loop"),
        "next_run": ("next run of node", ":material/replay:", moves.next_execution(trace, index, selected),
                     f"Next execution of the selected node {md_code(selected)}"),
        "nonfinite": ("first NaN/Inf", ":material/warning:", moves.first_nonfinite(trace),
                      "First event whose outputs hold NaN or Inf"),
    }
    for column, (name, (label, icon, target, help_text)) in zip(st.columns([1, 1, 1, 1, 2.6, 2.6, 2.6, 2.4]),
                                                                 jumps.items()):
        column.button(label, key=state.keyed(state.K_STEP_MOVE, name), icon=icon, help=help_text, width="stretch",
                      disabled=target is None or target == index, on_click=_go, args=(target,))
    if last > 0:
        if st.session_state.get(state.W_CURSOR) != index:
            st.session_state[state.W_CURSOR] = index
        st.slider("Event", 0, last, key=state.W_CURSOR, label_visibility="collapsed",
                  on_change=lambda: state.set_cursor(st.session_state[state.W_CURSOR]))


@st.fragment
def stepper() -> None:
    """A step reruns only this: the canvas first (its marks leave before the rest), then the controls and the
    values. Parts that come and go sit in fixed slots, so what follows them keeps its place from step to step:
    the canvas, tables and toggles are then updated in place instead of being made anew."""
    model, trace = state.active_model(), state.current_trace()
    if model is None or trace is None or not trace.events:
        st.info("No recorded events: choose a model and inputs in the sidebar.")
        return
    index = state.cursor(trace)
    event = trace.events[index]
    quiz, controls, position = st.container(), st.container(), st.container()
    left, right = st.columns([2, 1])
    with left:
        draw(model, trace, index)
    with quiz:
        held = learning.branch_quiz(model, trace, index)  # learning mode: predict the branch before entering it
    with controls:
        toolbar(model, trace, index, held)
    with position:
        st.markdown(f"**Event {index}** of 0–{len(trace.events) - 1} · "
                    f"{md_code(moves.breadcrumb_text(model, event))} · {event.seconds * 1e3:.3f} ms")
        with st.container():
            iteration_moves(model, trace, index)
        if event.summarized:
            st.caption("Values past the trace memory budget are kept as summaries.")
    with right:
        values_panel(event)
    url.publish(model)  # a fragment rerun moves the cursor without running the whole app


def values_panel(event: Event) -> None:
    """What the current node read and wrote: statistics of each value, tables of its outputs (and of its inputs
    on request), plots on request."""
    full_inputs, plots = st.columns(2)
    inputs_in_full = full_inputs.toggle("Inputs in full", key=state.W_STEP_INPUTS_IN_FULL,
                                        help="Each step shows what the node wrote as tables, and what it read as "
                                             "statistics; tables of the inputs make stepping slower")
    plotted = plots.toggle("Plots", key=state.W_STEP_PLOTS,
                           help="Plot the values shown as tables (heatmap, bars or line); plots make stepping slower")
    for title, values, side in (("Inputs", event.inputs, "in"), ("Outputs", event.outputs, "out")):
        st.markdown(f"##### {title}")
        if not values:
            st.caption("none")
        for position, (name, value) in enumerate(values.items()):
            panels.value_panel(name, value, key=state.keyed(state.K_STEP_VALUE, side, position),
                               full=side == "out" or inputs_in_full, plot=plotted)


def output_check() -> None:
    """The run's outputs against onnxruntime's, on request, in the background."""
    if not st.toggle("Check the outputs against onnxruntime", key=state.W_STEP_CHECK,
                     help="onnxruntime runs the model on the same inputs, in a child process you can cancel"):
        return
    asked = work.output_check()
    if asked is None:
        st.caption("No finished run to check.")
        return
    key, job = asked
    jobs.progress(job, key)
    if job.state == "failed":
        st.error(f"The check failed: {md(job.error)}", icon=":material/error:")
    elif job.state == "done" and job.result is not None:
        st.code("\n".join(job.result.lines() or ["the model has no outputs"]), language=None)


st.title("Step through")
learning.tour_panel()
output_check()
stepper()
