"""Loops: every Scan/Loop/SequenceMap/If — iterations, loop-carried values, scan slices, stop reasons, branches —
and onnxruntime's generation operators, step by step."""
from __future__ import annotations

from collections import Counter

import streamlit as st

from explorer.docs_links import more
from explorer.proto.graph import GENERATION_OPS
from explorer.ui import charts, diagram, learning, panels, state, widgets
from explorer.views import loops
from explorer.views.cell_equations import cell_equations
from explorer.views.charts import series_chart
from explorer.views.dot import model_to_dot
from explorer.views.draw_facts import ModelFacts
from explorer.views.draw_plan import body_max_boxes
from explorer.views.html_blocks import code_block
from explorer.views.learning import loop_mode_code
from explorer.views.markup import md, md_code
from explorer.views.names import shorten_text, shortened
from explorer.views.overlays import TraceOverlay
from explorer.views.pseudocode import pseudocode


def body_drawing(model, body_path: str, overlay: TraceOverlay | None):
    """A body drawn alone, at the box budget of its own size (a big one as the overview of its layers)."""
    return model_to_dot(model, focus=body_path, cursor=overlay,
                        max_boxes=body_max_boxes(ModelFacts.of(model), body_path))


def branches(model, trace, path: str) -> None:
    rows = loops.branch_rows(trace, path)
    failed_at = trace.error.node or "" if trace.error is not None else ""
    failed = failed_at.startswith(f"{path}/")
    if failed:
        st.warning(f"The run failed inside this If, at {md_code(failed_at)}: it did not finish.")
    if not rows:
        if not failed:
            st.info("This If did not run in the recorded trace.")
        return
    taken = Counter(r["branch"] for r in rows).most_common()
    st.markdown(" · ".join(f"**{md(name)}** ran {count}×" for name, count in taken))
    widgets.listed_table(rows, state.keyed(state.W_ALL_ROWS, path), "executions")
    runs = [e for e in trace.events_of(path) if "branch" in e.info]
    if not runs:
        return
    run = widgets.pick_execution(runs, state.keyed(state.K_IF_EXEC, path))
    ran = trace.children(run)
    for column, branch in zip(st.columns(2), ("then_branch", "else_branch")):
        with column:
            chosen = branch == run.info["branch"]
            st.markdown(f"##### {branch} · {'taken' if chosen else 'not taken'}")
            overlay = TraceOverlay.from_trace(trace, ran[-1].index) if chosen and ran else None
            diagram.show(body_drawing(model, f"{path}/{branch}", overlay),
                         key=state.keyed(state.K_IF_DIAGRAM, path, branch))


def _code(code, model, trace, path: str, index: tuple[int, ...], cell) -> None:
    """The spec's pseudo-code of a Loop or Scan filled in at one iteration, its cell's equations and its C-style
    equivalent."""
    node = model.node(path)
    if node.op_type not in ("Loop", "Scan"):
        return
    opset = model.opsets.get("", 21)
    code.markdown(f"##### The spec's pseudo-code, filled in at iteration {index[-1]}")
    code.html(code_block(shorten_text(pseudocode(node, trace, index, opset), loops.loop_names(model, path))))
    if cell is not None:
        code.markdown(f"##### The {cell.kind} cell's equations at iteration {index[-1]}")
        code.html(code_block(cell_equations(cell, trace, path, index)))
    mode = loop_mode_code(node.proto, opset)
    if mode is not None:
        code.markdown(f"##### Its C-style equivalent in the spec: {mode[0]}")
        code.html(code_block(mode[1]))


def iterating(model, trace, path: str) -> None:
    runs = loops.executions(model, trace, path)
    if not runs:
        st.info("This node did not run in the recorded trace.")
        return
    cell = loops.cell_loops(model).get(path)
    if cell is not None:
        st.info(f"This {model.node(path).op_type} is {md(loops.cell_sentence(cell, path))}: its gates over time are "
                f"on the Gates page.")
    run = widgets.pick_execution(runs, state.keyed(state.K_LOOP_EXEC, path))
    body = loops.body_values(model, path)
    iterations = loops.iterations_of(trace, run)
    reason = loops.stop_reason(run)
    count = len(iterations)
    ended = "did not finish" if run.event is None else "stopped"  # an Execution: its event may be None
    st.markdown(f"**{count} iteration{'s' if count != 1 else ''}**" + (f" · {ended}: {md(reason)}" if reason else ""))
    if not iterations:
        return
    if learning.enabled():  # iterations revealed one by one, each after a prediction
        position = learning.carried_quiz(path, body, iterations, state.keyed(state.LEARN_POSITION, path, run.iteration))
        iterations = iterations[:position + 1]
    shown = iterations[:loops.MAX_SHOWN]
    if len(shown) < count and not learning.enabled():
        st.caption(f"The table and the plots show the first {len(shown)} iterations; the slider reaches all {count}.")
    widgets.listed_table(loops.iteration_rows(body, shown), state.keyed(state.W_ALL_ROWS, path, run.iteration),
                         "iterations", titles={label: name for label, (name, _) in loops.iteration_columns(body).items()})
    position = len(iterations) - 1 if learning.enabled() else 0
    if len(iterations) > 1 and not learning.enabled():
        position = st.slider("Iteration", 0, len(iterations) - 1, key=state.keyed(state.K_LOOP_ITERATION, path, run.iteration))
    chosen = iterations[position]
    code, drawing = st.columns(2)
    _code(code, model, trace, path, chosen.index, cell)
    ran = loops.iteration_events(trace, run, chosen.index)
    with drawing:
        st.markdown(f"##### The body at the end of iteration {chosen.index[-1]}")
        overlay = TraceOverlay.from_trace(trace, ran[-1].index) if ran else None
        diagram.show(body_drawing(model, f"{path}/body", overlay), key=state.keyed(state.K_LOOP_DIAGRAM, path))
    carried = loops.carried_series(body, shown)
    short = shortened([*carried, *body.scan_in, *body.scan_out])
    if carried:
        st.markdown("##### Loop-carried values (before the first iteration, then after each)")
        columns = st.columns(min(len(carried), 2))
        for k, (name, values) in enumerate(carried.items()):
            chart = series_chart(values, short[name], x=["init", *range(len(shown))])
            with columns[k % len(columns)]:
                if chart is None:
                    st.caption(f"{md_code(short[name])}: not numeric", help=name)
                else:
                    charts.show(chart, key=state.keyed(state.K_CARRIED_PLOT, path, name))
    scans = [(name, "inputs", "slice read") for name in body.scan_in]
    scans += [(name, "outputs", "element written") for name in body.scan_out]
    if scans:
        st.markdown(f"##### Scan slices and outputs: across iterations, and at iteration {chosen.index[-1]}")
        for name, side, what in scans:
            across, here = st.columns(2)
            with across:
                chart = series_chart(loops.per_iteration(shown, name, side), f"{short[name]} ({what})")
                if chart is not None:
                    charts.show(chart, key=state.keyed(state.K_SCAN_SERIES_PLOT, path, name))
            with here:
                panels.value_panel(f"{short[name]} ({what})", getattr(chosen, side).get(name),
                                    key=state.keyed(state.K_SCAN_PLOT, path, name, position))


def generating(model, trace, path: str) -> None:
    """A GreedySearch, BeamSearch, WhisperBeamSearch or Sampling: its decode steps, each row's token (and beam and score), and the
    decoder at the chosen step."""
    runs = loops.executions(model, trace, path)
    if not runs:
        st.info("This node did not run in the recorded trace.")
        return
    run = widgets.pick_execution(runs, state.keyed(state.K_LOOP_EXEC, path))
    steps = loops.iterations_of(trace, run)
    reason = loops.stop_reason(run)
    st.markdown(f"**{len(steps)} decode step{'s' if len(steps) != 1 else ''}**" + (f" · stopped: {md(reason)}" if reason else ""))
    if not steps:
        return
    shown = steps[:loops.MAX_SHOWN]
    widgets.listed_table(loops.step_rows(shown), state.keyed(state.W_ALL_ROWS, path, run.iteration), "rows")
    position = 0
    if len(steps) > 1:
        position = st.slider("Step", 0, len(steps) - 1, key=state.keyed(state.K_LOOP_ITERATION, path, run.iteration))
    chosen = steps[position]
    ran = loops.iteration_events(trace, run, chosen.index)
    subgraph = chosen.info.get("subgraphs", ["decoder"])[-1]
    st.markdown(f"##### The {subgraph} at the end of step {chosen.index[-1]}")
    overlay = TraceOverlay.from_trace(trace, ran[-1].index) if ran else None
    diagram.show(body_drawing(model, f"{path}/{subgraph}", overlay),
                 key=state.keyed(state.K_LOOP_DIAGRAM, path))


st.title("Loops", help=more("Each Loop, Scan, If and SequenceMap: its iterations, what they carried, the spec's pseudo-code.", "loops"))
learning.tour_panel()
subject = widgets.page_subject(loops.control_flow_nodes, "Scan, Loop, If, SequenceMap or generation operator", state.W_LOOP,
                               "Control-flow node")
if subject is not None:
    model, trace, path = subject
    if model.node(path).op_type == "If":
        branches(model, trace, path)
    elif model.node(path).op_type in GENERATION_OPS:
        generating(model, trace, path)
    else:
        iterating(model, trace, path)
