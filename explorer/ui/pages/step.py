"""Step through: a cursor over the recorded events, with the current node's values."""
from __future__ import annotations

import streamlit as st

from explorer.docs_links import more
from explorer.model.model import Model
from explorer.trace.trace import Event, Trace
from explorer.ui import diagram, jobs, learning, panels, state, url, work
from explorer.ui.report_button import download_report
from explorer.views import step_moves as steps
from explorer.views import value_html
from explorer.views.html_blocks import text_block
from explorer.views.markup import md

WHOLE_MODEL_LIMIT = 150  # nodes: above this the diagram shows only the current node's surroundings by default
SIDE_BY_SIDE_PX = 800  # the canvas and the values side by side when the page's content is at least this wide
# In a narrower page (a 1000 px window with the sidebar open) the canvas beside the values got a third of the
# width: its step bar wrapped to three rows and pushed the drawing below the window, under the tour box. There the
# values (with their toggles) go under the canvas, which takes the whole width.
LAYOUT_CSS = f"""<style>
.st-key-{state.C_STEP_VIEW} {{ container-type: inline-size; }}
@container (max-width: {SIDE_BY_SIDE_PX - 1}px) {{
  .st-key-{state.C_STEP_VIEW} [data-testid="stColumn"] {{ min-width: 100%; }}
  .st-key-{state.C_STEP_VIEW} [data-testid="stColumn"] [data-testid="stColumn"] {{ min-width: auto; }}
}}
</style>"""


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


def _known_frames(context: tuple) -> tuple[str, dict[int, dict]]:
    """The frames computed for earlier steps on the same layout, run, selected node and learner's answers (a
    step computes only the frames that came into its window), and a name for them that changes when they do."""
    kept = st.session_state.get(state.STEP_FRAMES)
    if kept is None or kept[0] != context or len(kept[1]) > 500:
        generation = kept[2] + 1 if kept is not None else 0
        kept = st.session_state[state.STEP_FRAMES] = (context, {}, generation)
    return str(kept[2]), kept[1]


def default_view(model: Model) -> str:
    return "model" if len(model.index.nodes) <= WHOLE_MODEL_LIMIT else "around"


def options() -> None:
    """How much of the model to draw: chosen rarely, so outside the stepper (a step does not send it again); a
    change reruns the page."""
    model = state.active_model()
    if model is None:
        return
    st.segmented_control("Draw", list(steps.VIEWS), format_func=steps.VIEWS.__getitem__,
                         default=default_view(model), key=state.W_STEP_VIEW)


def value_options() -> None:
    """Whether to table the inputs and plot the values, above the values they change (under the canvas in a narrow
    page); a change reruns the stepper."""
    full_inputs, plots = st.columns(2)
    full_inputs.toggle("Inputs in full", key=state.W_STEP_INPUTS_IN_FULL,
                       help="Each step shows what the node wrote as tables, and what it read as statistics; tables "
                            "of the inputs make stepping slower")
    plots.toggle("Plots", key=state.W_STEP_PLOTS,
                 help="Plot the values shown as tables (heatmap, bars or line); plots make stepping slower")


def draw(model: Model, trace: Trace, index: int, held: bool) -> None:
    """The diagram with the current node, its inputs and outputs, and what ran before it, under the stepper's
    moves and slider. The canvas also gets the frames of the events around this one drawn on the same layout:
    a move to one of them shows at once, and the server follows."""
    view = st.session_state.get(state.W_STEP_VIEW) or default_view(model)
    focus, key = steps.drawing_key(model, trace, index, view)
    # drawn without the cursor, so every step in the same part of the model reuses one layout; the step's
    # states are marks the canvas applies to it
    error = trace.error.node if trace.error else None
    drawing = diagram.drawing(model, key, focus=focus or None, edge_labels=None,
                              reveal=[p for p in (trace.events[index].node, error) if p])
    selected = state.selected_node()
    name, known = _known_frames((state.run_key(), key, selected, learning.fingerprint()))
    if index not in known:
        known[index] = steps.frame(model, trace, drawing, index, selected, held)
    here = known[index]
    frames = {index: here}
    for other in steps.neighbours(trace, index, [move[4] for move in here["moves"]]):
        if other not in known and steps.drawing_key(model, trace, other, view)[1] == key:
            known[other] = steps.frame(model, trace, drawing, other, selected, learning.holds(model, trace, other))
        if other in known:
            frames[other] = known[other]
    diagram.show(drawing, key=state.W_STEP_DIAGRAM, on_click=_clicked, reveal=trace.events[index].node,
                 marks=here["marks"], step=index, on_step=_go,
                 stepper={"at": index, "last": len(trace.events) - 1, "frames": frames, "set": name})


@st.fragment
def stepper() -> None:
    """A step reruns only this: the canvas first (its marks, position line, moves and slider leave before the
    rest; it has shown the step already when the move was to a frame it had), then the values. Parts that come and go sit in fixed slots, so what follows them keeps its place from step to step:
    the canvas and the values are then updated in place instead of being made anew."""
    model, trace = state.active_model(), state.current_trace()
    if model is None or trace is None or not trace.events:
        st.info("No recorded events: choose a model and inputs in the sidebar.")
        return
    index = state.cursor(trace)
    quiz = st.container()
    left, right = st.container(key=state.C_STEP_VIEW).columns([2, 1])
    with left:
        draw(model, trace, index, learning.holds(model, trace, index))
    with quiz:
        learning.branch_quiz(model, trace, index)  # learning mode: predict the branch before entering it
    with right:
        value_options()
        values_panel(trace.events[index])
        download_report(model, "step", trace, event_index=index)
    url.publish(model)  # a fragment rerun moves the cursor without running the whole app


def values_panel(event: Event) -> None:
    """What the current node read and wrote: statistics of each value, tables of its outputs (and of its inputs
    on request), as one HTML element the browser swaps at each step; plots on request (see `value_options`)."""
    inputs_in_full = bool(st.session_state.get(state.W_STEP_INPUTS_IN_FULL))
    plotted = bool(st.session_state.get(state.W_STEP_PLOTS))
    parts = ['<p class="caption">Values past the trace memory budget are kept as summaries.</p>'
             if event.summarized else ""]
    for title, values, side in (("Inputs", event.inputs, "in"), ("Outputs", event.outputs, "out")):
        full = side == "out" or inputs_in_full
        for position, (name, value, html) in enumerate(value_html.section(title, values, full)):
            parts.append(html)
            if plotted and full and name:
                st.html(value_html.wrapped(parts))
                parts = []
                panels.plot_panel(name, value, state.keyed(state.K_STEP_VALUE, side, position - 1))
    if any(parts):
        st.html(value_html.wrapped(parts))


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
        st.html(text_block("\n".join(job.result.lines() or ["the model has no outputs"])))


st.title("Step through", help=more("A cursor over every recorded node execution, inside loops and branches too.", "step"))
st.html(LAYOUT_CSS)
learning.tour_panel()
output_check()
options()
stepper()
