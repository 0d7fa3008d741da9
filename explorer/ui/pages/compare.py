"""Compare: the active run (A) against B — onnxruntime, the optimized model, another model, reference values,
PyTorch's recurrent equations, or the PyTorch or Keras model the export came from (ui/framework_side.py). First
divergence, the diagram coloured by error, both runs stepped in lockstep, error over iterations, gates of both
sides, the worst values and what could not be aligned."""
from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import streamlit as st

from explorer.compare import Comparison
from explorer.compare.both_gates import gates_of_both
from explorer.compare.verdict import Verdict
from explorer.docs_links import more
from explorer.errors import ExplorerError
from explorer.inputs.input_files import feeds_from_npz
from explorer.inputs.samples import list_samples
from explorer.model.model import Model
from explorer.sweep.task import reference_of
from explorer.ui import (
    charts,
    diagram,
    framework_side,
    jobs,
    reach,
    state,
    uploads,
    verdict_banner,
    widgets,
    work,
)
from explorer.ui.report_button import download_report
from explorer.views import compare as views
from explorer.views import generation
from explorer.views.charts import time_heatmap_chart
from explorer.views.dot import model_to_dot
from explorer.views.html_blocks import records_table
from explorer.views.markup import md
from explorer.views.overlays import TraceOverlay

CHOICES = {"onnxruntime": "onnxruntime", "optimized": "The optimized model", "sample": "A bundled sample",
           "upload": "An uploaded model", "path": "A local path", "reference": "Reference values (.npz)",
           "pytorch": "PyTorch's equations (GRU/LSTM/RNN)", "framework": "The PyTorch or Keras model it came from"}
SWEPT = "sweep"  # B: the reference values of the sweep input opened as the app's inputs
DRAW_LIMIT = 400  # nodes: bigger models are drawn on request


def swept_reference(model):
    """The sweep input opened as the app's inputs, when it comes with reference values (see ui/sweeping.py)."""
    swept = st.session_state.get(state.SWEPT_INPUT)
    if swept is None or swept[0] != model.sha256 or swept[1].reference is None \
            or st.session_state.get(state.W_INPUT_MODE) != widgets.SWEPT_INPUTS:
        return None
    return swept[1]


def side_b(model):
    """(B, B's content key) as chosen, or None while the choice is incomplete."""
    swept = swept_reference(model)
    choices = {**CHOICES, SWEPT: f"The reference of {swept.label} (from the sweep)"} if swept else CHOICES
    if st.session_state.get(state.W_COMPARE_B) not in choices:
        st.session_state[state.W_COMPARE_B] = next(iter(choices))
    choice = st.radio("Compare the current run with", list(choices), format_func=choices.__getitem__,
                      horizontal=True, key=state.W_COMPARE_B)
    if choice in ("onnxruntime", "pytorch"):
        return choice, choice
    if choice == "framework":  # framework_side.section, below the tolerances
        return None
    if choice == SWEPT:
        try:
            return reference_of(model, swept, state.session_limits(), reach.access().read_folders), f"sweep:{swept.reference}"
        except ExplorerError as exc:
            st.error(f"The sweep's reference values do not load: {md(exc)}")
            return None
    if choice == "optimized":
        result = work.optimization(model, ())
        return state.proto_model(result.optimized, model.lenient), f"optimized:{model.sha256}"
    if choice == "reference":
        upload = uploads.uploader("Reference values: an .npz keyed by ONNX value names", type=["npz"],
                                  key=state.W_COMPARE_NPZ)
        if upload is None:
            st.info(more("Upload an .npz of reference values keyed by ONNX value names, e.g. dumped from PyTorch.",
                         "reference values"))
            return None
        data = upload.getvalue()
        return feeds_from_npz(data, state.session_limits()), "npz:" + hashlib.sha256(data).hexdigest()
    if choice == "sample":
        samples = list(list_samples())
        if st.session_state.get(state.W_COMPARE_SAMPLE) not in samples:  # start from A's own sample
            active = model.source.rsplit("/", 1)[-1].removesuffix(".onnx")
            st.session_state[state.W_COMPARE_SAMPLE] = active if active in samples else samples[0]
        name: str = widgets.chosen(st.selectbox("Sample", samples, key=state.W_COMPARE_SAMPLE))
        source = state.sample_source(name)
    elif choice == "upload":
        upload = uploads.uploader("Model B (.onnx)", type=["onnx"], key=state.W_COMPARE_UPLOAD)
        if upload is None:
            return None
        source = state.upload_source(upload.name, upload.getvalue())
    else:
        text = st.text_input("Path of model B", key=state.W_COMPARE_PATH)
        if not text.strip():
            return None
        source = state.path_source(text, reach.access())
    loaded = state.load_source(source)
    if loaded.model is None:
        st.error("Model B does not load:")
        st.text(loaded.error)
        return None
    return loaded.model, source.key


def tokens_section(ours, theirs) -> None:
    """Two generations (runs of `explorer generate`'s loop model): the tokens each chose, step by step."""
    rows, first = generation.token_rows(generation.step_tokens(ours), generation.step_tokens(theirs))
    st.markdown("##### Tokens, step by step")
    st.caption("every token agrees" if first is None else f"the first token that differs: step {first}")
    st.html(records_table(rows))
    chart = generation.cache_error_chart(ours, theirs)
    if chart is not None:
        charts.show(chart, key=state.K_COMPARE_CACHE_PLOT)


def summary(result, verdict) -> None:
    """The verdict first (one banner), then what lies behind it."""
    verdict_banner.banner(verdict)
    first = result.first
    for label, message in result.errors.items():
        st.caption(f"{md(label)}:")
        st.text(message)
    if first is not None:
        st.text(("First difference" if first.saturated and not result.differs else "First divergence")
                + ", in A's execution order: " + first.describe())
    st.caption(f"Tolerance: {md(result.tolerance_text)}")
    if result.saturation is not None:
        st.text("\n".join(result.saturation.lines()))
    for gate in result.gates:
        st.text("Gates: " + gate.describe())
    if result.gates_checked and not result.gates:
        st.text(f"Gates compared step by step, all agree: {', '.join(result.gates_checked)}")
    for note in result.notes:
        st.caption(md(note))
    if result.outputs:
        st.html(records_table([{"output": d.name, "max abs": d.max_abs, "max rel": d.max_rel, "ok": d.ok,
                                "note": d.note} for d in result.outputs]))


def drawing_tab(model, result, verdict) -> None:
    marked = verdict_banner.marked_node(verdict)
    highlight = [marked] if marked is not None else []
    if not st.toggle("Draw the diagram", value=sum(1 for _ in model.nodes()) <= DRAW_LIMIT,
                     key=state.W_COMPARE_SIDE_BY_SIDE, persist_state="page",
                     help="Laying out a big model takes graphviz seconds"):
        return
    values = views.error_values(result)
    st.caption("Nodes whose values go beyond the tolerance are filled by their largest abs error against B "
               "(unfilled: within tolerance, or not aligned); the first divergence is zoomed to and outlined.")
    diagram.show(model_to_dot(model, values=values, highlight=highlight), key=state.W_COMPARE_DIAGRAM_A,
                 values=values, reveal=marked, mark=True, hits=highlight)


def lockstep_tab(model, result) -> None:
    trace = result.a.trace
    count = len(trace.events)
    if not count:
        st.info("The run recorded no event.")
        return
    start = views.divergence_index(result)
    if st.session_state.pop(state.AT_DIVERGENCE, False) and start is not None:  # opened from a sweep's input
        st.session_state[state.W_COMPARE_CURSOR] = start
    if start is not None and st.button("Go to the first divergence", key=state.W_COMPARE_GOTO):
        st.session_state[state.W_COMPARE_CURSOR] = start
    index = st.slider("Event (both runs step together)", 0, count - 1, key=state.W_COMPARE_CURSOR,
                      persist_state="page") if count > 1 else 0
    step = views.lockstep(result, index)
    st.text(f"A: {step.a.node} ({step.a.op_type})" + (f" at iteration {step.a.iteration}" if step.a.iteration
                                                        else "")
            + (f" · B: event {step.b_event}" if step.b_event is not None else ""))
    st.html(records_table(step.rows))
    if sum(1 for _ in model.nodes()) > DRAW_LIMIT:
        return
    b = result.b
    left, right = st.columns(2) if b.trace is not None and b.model is not None else (st.container(), None)
    with left:
        st.caption("A")
        diagram.show(model_to_dot(model, cursor=TraceOverlay.from_trace(trace, index)),
                     key=state.W_COMPARE_STEP_DIAGRAM)
    if right is not None:
        with right:
            st.caption("B" + ("" if step.b_event is not None else " (no counterpart of this step)"))
            cursor = TraceOverlay.from_trace(b.trace, step.b_event) if step.b_event is not None else None
            diagram.show(model_to_dot(b.model, cursor=cursor), key=state.W_COMPARE_DIAGRAM_B)


def result_tabs(model: Model, result: Comparison, verdict: Verdict) -> None:
    """The comparison's tabs. Only the open one runs: a new browser lays out what it shows, and a switch reruns
    the page."""
    shown: dict[str, Callable[[], object]] = {
        "Diagram": lambda: drawing_tab(model, result, verdict),
        verdict_banner.STEP_BOTH_TAB: lambda: lockstep_tab(model, result),
        "Error over time": lambda: growth_tab(result),
        verdict_banner.GATES_TAB: lambda: gates_tab(result, verdict),
        "Worst values": lambda: st.html(records_table(views.worst_rows(model, result, 50))),
        "Not aligned": lambda: st.html(records_table([vars(u) for u in result.unaligned]))}
    verdict_banner.open_tab(result, verdict, list(shown))
    for tab, show in zip(st.tabs(list(shown), key=state.W_COMPARE_TAB, on_change="rerun"), shown.values()):
        if tab.open:
            with tab:
                show()


def pick_one(choices: dict[str, str], label: str, key: str, none: str) -> str | None:
    """A selectbox over `choices` (key -> label); None, after saying `none`, when there is nothing to choose."""
    if not choices:
        st.info(none)
        return None
    return widgets.chosen(st.selectbox(label, list(choices), format_func=choices.__getitem__, key=key,
                                       persist_state="page"))


def growth_tab(result) -> None:
    key = pick_one(views.growth_choices(result), "Value", state.W_COMPARE_VALUE,
                   "No aligned value ran in a loop or is a recurrent node's output.")
    if key is None:
        return
    node, name = key.split("\x1f")
    charts.show(views.growth_chart(result.value(node, name)), key=state.W_COMPARE_GROWTH)


def gates_tab(result, verdict) -> None:
    verdict_banner.point_gates(result, verdict)
    pick = pick_one(views.recurrent_runs(result), "Recurrent node and execution", state.W_COMPARE_RNN,
                    "No GRU, LSTM or RNN ran in A.")
    if pick is None:
        return
    node, iteration = views.parse_run(pick)
    try:
        both = gates_of_both(result, node, iteration)
    except (KeyError, ExplorerError) as exc:
        st.info(f"No gates on both sides: {md(exc)}")
        return
    st.caption(f"B's gates: {md(both.source)}")
    departure = verdict_banner.departure_caption(verdict, node)
    if departure is not None:
        st.error(md(departure))
    names = [g for g in both.ours if g in both.theirs]
    if not names:
        st.info("B has none of these gates.")
        return
    left, middle, right = st.columns([3, 1, 1])
    gate: str = widgets.chosen(left.radio("Gate", names, horizontal=True,
                                               key=state.keyed(state.K_COMPARE_GATE, node), persist_state="page"))
    _, directions, batch, _ = both.ours[gate].shape
    direction = int(middle.number_input("Direction", 0, directions - 1, 0, key=state.keyed(state.K_COMPARE_DIR, node),
                                         persist_state="page"))
    item = int(right.number_input("Batch item", 0, batch - 1, 0, key=state.keyed(state.K_COMPARE_ITEM, node),
                                    persist_state="page"))
    ours, theirs = both.ours[gate][:, direction, item, :], both.theirs[gate][:, direction, item, :]
    columns = st.columns(3)
    for column, (title, values) in zip(columns, (("A", ours), ("B", theirs), ("|A − B|", np.abs(ours - theirs)))):
        with column:
            charts.show(time_heatmap_chart(values, f"{gate} · {title} (direction {direction}, batch item {item})",
                                           width=340),
                        key=state.keyed(state.K_COMPARE_GATE_PLOT, node, gate, title))


st.title("Compare", help=more("This run against a side B, down to the first value, iteration and gate where they part.", "compare"))
model, trace = state.active_model(), state.current_trace()
if model is None or trace is None:
    st.info("Choose a model and its inputs in the sidebar: its run is side A.")
else:
    chosen = side_b(model)
    with st.expander("Tolerance"):
        left, right = st.columns(2)
        st.caption("Empty: each value at its own precision (float32 rtol 1e-4, atol 1e-5; float16 2e-3, 1e-3; "
                   "bfloat16, float8 and quantized values at theirs), widened by its operation's rounding.")
        rtol = left.number_input("rtol", min_value=0.0, value=None, format="%g", placeholder="by type",
                                 key=state.W_COMPARE_RTOL)
        atol = right.number_input("atol", min_value=0.0, value=None, format="%g", placeholder="by type",
                                  key=state.W_COMPARE_ATOL)
    if st.session_state.get(state.W_COMPARE_B) == "framework":
        request = st.session_state.get(state.RUN_REQUEST)
        framework_side.section(model, trace.feeds, request.feeds_key if request is not None else "", rtol, atol)
    if chosen is not None:
        asked = work.comparison(chosen[0], chosen[1], rtol, atol)
        result = None
        if asked is not None:
            key, job = asked
            jobs.progress(job, key)
            if job.state == "failed":
                st.error("The comparison failed:")
                st.text(job.error)
            result = job.result if job.state == "done" else None
        if result is not None:
            verdict = verdict_banner.verdict_of(result)
            summary(result, verdict)
            if generation.is_generation(model) and result.b is not None and result.b.trace is not None:
                tokens_section(trace, result.b.trace)
            download_report(model, "compare", comparison=result)
            result_tabs(model, result, verdict)
