"""The Compare page's framework side (explorer.bridge): the export against the PyTorch or Keras model it came from,
given as its capture (.npz, no framework code runs) or, where the operator allows it, as its code (a .py file's
factory or a .keras file, run here on side A's inputs; a shared app runs no uploaded code). The module tree beside
the export, each module coloured by its own or carried error; a module picked in the tree or clicked in the
diagram shows its ONNX node, iteration and source line; the diagnosis with each fix drawn before and after, and
the fixed model to download."""
from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

import onnx
import pandas as pd
import streamlit as st

from ..bridge import captured_side, keras, pytorch
from ..bridge.api import factory_names, load_factory
from ..bridge.fix import FixReport, fixed_model
from ..compare.stats import ATOL, RTOL
from ..docs_links import more
from ..files.atomic_write import write_bytes
from ..files.scratch import scratch_folder
from ..model.model import Model
from ..views import framework as views
from ..views.framework_fix import Change, change_rows, fix_changes, fix_drawings
from ..views.markup import md
from . import diagram, jobs, owned, reach, state, uploads, widgets
from .report_button import download_report

SOURCES = {"capture": "Its capture (.npz)", "code": "Its code (a .py factory or a .keras file)"}
LIBRARIES = {"PyTorch": "torch", "Keras": "keras"}
DRAW_LIMIT = 400  # nodes: bigger exports are drawn on request
TREE_ROWS = 18  # the module tree shows this many rows whole; more scroll beside the export
CODE_OFF = ("Running the framework model's code is off: this app is shared, and runs no uploaded code. Capture the "
            "model where it runs (explorer.bridge.capture.capture(module, inputs).save(path)) and upload the "
            "capture, or compare on your machine (explorer compare --pytorch / --keras).")


def section(model: Model, feeds: dict[str, Any] | None, feeds_key: str, rtol: float | None,
            atol: float | None) -> None:
    """The framework side chosen, compared in the background (with its fixes proven), and the answer shown."""
    shared = reach.access().shared
    labels = {**SOURCES, "code": SOURCES["code"] + (" — off: this app is shared" if shared else "")}
    how: str = widgets.chosen(st.radio("The framework model", list(labels), format_func=labels.__getitem__,
                                  horizontal=True, key=state.W_COMPARE_FRAMEWORK))
    tolerances = (RTOL if rtol is None else rtol, ATOL if atol is None else atol)
    if how == "code":
        if shared:
            st.warning(CODE_OFF, icon=":material/block:")
            return
        asked = _code(model, feeds, feeds_key, tolerances)
    else:
        asked = _capture(model, tolerances)
    if asked is None:
        return
    key, job = asked
    jobs.progress(job, key)
    if job.state == "failed":
        st.error("The framework comparison failed:")
        st.text(job.error)
    elif job.state == "done" and job.result is not None:
        shown(model, key, *job.result)


def _capture(model: Model, tolerances: tuple[float, float]) -> tuple[str, Any] | None:
    upload = uploads.uploader("The framework's capture (.npz from explorer.bridge.capture)", type=["npz"],
                              key=state.W_COMPARE_CAPTURE)
    if upload is None:
        st.info(more("Upload the capture of the PyTorch or Keras model this export came from (saved by "
                     "explorer.bridge.capture): the app runs no framework code for it.", "framework"))
        return None
    data = upload.getvalue()
    key = f"framework:{model.sha256}:npz:{hashlib.sha256(data).hexdigest()}:{tolerances}"
    limits = state.session_limits()
    return key, jobs.job(key, "Framework comparison", lambda: fixed_model(model, captured_side(data, limits), None,
                                                                          rtol=tolerances[0], atol=tolerances[1]))


def _code(model: Model, feeds: dict[str, Any] | None, feeds_key: str,
          tolerances: tuple[float, float]) -> tuple[str, Any] | None:
    upload = uploads.uploader("The framework model: a .py file with a function that builds it, or a .keras file",
                              type=["py", "keras"], key=state.W_COMPARE_CODE)
    if upload is None:
        st.info(more("Upload the Python file whose function returns the nn.Module (or keras.Model) this export came "
                     "from, or the .keras file: it runs here, on side A's inputs, with every module's values "
                     "captured.", "framework"))
        return None
    data = upload.getvalue()
    factory = ""
    library = "Keras"
    if not upload.name.endswith(".keras"):
        names = factory_names(data.decode("utf-8", "replace"))
        if not names:
            st.error(md(f"{upload.name} defines no function at its top level (or does not parse)."))
            return None
        left, right = st.columns([3, 2])
        factory = widgets.chosen(left.selectbox("The function that builds the model", names,
                                                key=state.W_COMPARE_FACTORY))
        library = widgets.chosen(right.radio("It builds a", list(LIBRARIES), horizontal=True,
                                             key=state.W_COMPARE_LIBRARY))
    if importlib.util.find_spec(LIBRARIES[library]) is None:
        st.error(md(f"{library} is not installed in the app's Python ({LIBRARIES[library]} does not import): "
                    "install it there, or upload the model's capture instead."))
        return None
    if feeds is None:
        st.info("Run side A first: the framework model runs on its inputs.")
        return None
    digest = hashlib.sha256(data).hexdigest()
    key = f"framework:{model.sha256}:code:{digest}:{factory}:{library}:{feeds_key}:{tolerances}"
    asked = st.button(md(f"Run {factory or upload.name} and compare"), key=state.W_COMPARE_RUN_CODE, type="primary",
                      help="Runs the uploaded code in the app's Python, on side A's inputs")
    if not asked and key not in st.session_state.get(state.JOBS, {}):
        return None
    return key, jobs.job(key, f"{library} model and comparison",
                         lambda: _run_code(model, upload.name, data, factory, library, feeds, tolerances))


def _run_code(model: Model, name: str, data: bytes, factory: str, library: str, feeds: dict[str, Any],
              tolerances: tuple[float, float]) -> tuple[FixReport, bytes | None]:
    """The uploaded code run (its file kept under its own name, so that source lines name it), captured on the
    feeds, compared, and its fixes proven on the feeds and on random inputs."""
    path = scratch_folder("explorer-code-") / Path(name).name
    write_bytes(path, data)
    built = load_factory(f"{path}:{factory}" if factory else str(path), library)
    side = keras(built) if library == "Keras" else pytorch(built)
    return fixed_model(model, side, feeds, rtol=tolerances[0], atol=tolerances[1])


def shown(model: Model, key: str, report: FixReport, data: bytes | None) -> None:
    """The verdict, the module tree beside the export, the diagnosis with its fixes and the fixed model."""
    result = report.comparison
    st.session_state[state.FRAMEWORK_COMPARED] = (model.sha256, key, result)
    (st.success if result.agree else st.error)(md(views.headline(result)))
    for label, message in result.errors.items():
        st.caption(f"{md(label)}:")
        st.text(message)
    for note in result.notes:
        st.caption(md(note))
    tree, drawing = st.columns([2, 3])
    with tree:
        row = _tree(result, key)
    with drawing:
        _drawing(model, result, key, row)
    _diagnosis(model, report, data)
    download_report(model, "framework", framework=result)


def _tree(result, key: str) -> int | None:
    """The module tree as a table, rows filled by status; the row picked (the cause until another is)."""
    rows = views.module_rows(result)
    if not rows:
        st.info("The capture holds no module value.")
        return None
    fills = views.row_fills(result)
    table = pd.DataFrame(rows).style.apply(lambda row: [f"background-color: {fills[row.name]}"] * len(row), axis=1,
                                           subset=["module", "status"]) \
        .format("{:.3g}", subset=["error", "own error", "handed"], na_rep="")
    tree_key = state.keyed(state.W_COMPARE_MODULES, key)
    first = views.first_pick(result)
    if tree_key not in st.session_state and first is not None:
        st.session_state[tree_key] = _selection(first)
    st.markdown("##### Modules, in the framework's order")
    event = st.dataframe(table, hide_index=True, key=tree_key, on_select="rerun", selection_mode="single-row",
                         height="content" if len(rows) <= TREE_ROWS else diagram.HEIGHT,
                         column_order=["module", "status", "error", "own error", "handed", "source", "ONNX node",
                                       "iteration", "step", "direction", "gate", "ONNX value", "why not aligned"])
    st.caption(" · ".join(f"{status}: {meaning}" for status, _, meaning in views.status_legend(result))
               + ". Pick a row, or click a node of the export, to see where it is.")
    picked = event.selection.rows if event is not None else []
    row = picked[0] if picked else first
    if row is not None:
        st.text("\n".join(views.point_lines(result.checks[row])))
        _step_cursor(result, tree_key, row)
    return row


def _step_cursor(result, tree_key: str, row: int) -> None:
    """A module chosen in the tree (or in the export's drawing) moves the Step page's cursor to its first
    departing event in the app's run (the module value's node at its loop iteration); the pick shown first, the
    cause, leaves the cursor where it is until the button asks for it."""
    trace = state.current_trace()
    check = views.departing_check(result, row)
    node = check.point.onnx_node
    if trace is None or node is None:
        return
    try:
        index = trace.event(node, check.point.iteration).index
    except KeyError:
        st.caption(md(f"The app's run has no event of {node} at iteration {check.point.iteration}: its inputs are "
                      "not the capture's."))
        return
    stepped = st.session_state.setdefault(state.COMPARE_MODULE_STEPPED, {})
    if tree_key in stepped and stepped[tree_key] != row:
        state.set_cursor(index)
    stepped[tree_key] = row
    at = f" at loop iteration {views.iteration_text(check)}" if check.point.iteration else ""
    if st.button(md(f"Step through from {check.point.label} ({node}{at}), event {index}"),
                 key=state.W_COMPARE_MODULE_STEP, icon=":material/footprint:"):
        state.set_cursor(index)
        st.switch_page("explorer/ui/pages/step.py")


def _selection(row: int) -> dict[str, Any]:
    return {"selection": {"rows": [row], "columns": [], "cells": []}}


def _drawing(model: Model, result, key: str, row: int | None) -> None:
    """The export, the departing nodes filled by their error, the causes outlined, the picked module's node
    zoomed to; a click on a node picks its module."""
    if not st.toggle("Draw the export", value=len(model.index.nodes) <= DRAW_LIMIT, key=state.W_COMPARE_DRAW_EXPORT,
                     help="Laying out a big model takes graphviz seconds"):
        return
    node = result.checks[row].point.onnx_node if row is not None else None
    values, causes = views.error_values(result), views.cause_nodes(result)
    drawn = diagram.drawing(model, f"framework:{key}:{node}", values=values, highlight=causes,
                            reveal=[node] if node else [])
    tree_key = state.keyed(state.W_COMPARE_MODULES, key)

    def clicked(kind: str, keys: tuple[str, ...]) -> None:
        found = views.row_of_node(result, keys[0]) if kind == "node" else None
        if found is not None:
            st.session_state[tree_key] = _selection(found)

    st.caption("The export: nodes whose values depart from the framework filled by their error, those departing by "
               "their own error outlined; the picked module's node zoomed to.")
    diagram.show(drawn, key=state.W_COMPARE_MODULE_DIAGRAM, on_click=clicked, reveal=node, mark=True, hits=causes,
                 values=values)


def _diagnosis(model: Model, report: FixReport, data: bytes | None) -> None:
    """Each finding with its fix and whether it was proven; the fixed export before and after; its download."""
    result = report.comparison
    if not result.diagnosis:
        return
    st.markdown("##### Diagnosis")
    for outcome in report.outcomes:
        finding = outcome.finding
        status = "fixed and proven" if outcome.proven else "applied, not proven" if outcome.applied else "not fixed"
        st.text(finding.finding + (f"\nFix: {finding.fix}" if finding.fix else "\nNo fix explorer can prove.")
                + (f"\n→ {status}" + (f" ({outcome.why})" if outcome.why else "") if finding.fix else ""))
    for proof in report.proofs:
        st.caption(md(f"Proof on {proof}"))
    if data is None:
        return
    fixed = state.proto_model(onnx.load_from_string(data), model.lenient)
    changes = fix_changes(model, fixed)
    st.markdown("##### The fix, before and after")
    st.dataframe(pd.DataFrame(change_rows(changes)), hide_index=True)
    if changes and st.toggle("Draw the export before and after the fix", value=len(model.index.nodes) <= DRAW_LIMIT,
                             key=state.W_COMPARE_DRAW_FIX, help="Laying out a big model takes graphviz seconds"):
        _fix_drawn(model, fixed, changes)
    st.download_button("Download the fixed model", data, file_name="fixed.onnx", mime="application/octet-stream",
                       key=state.W_COMPARE_FIXED)


def _fix_drawn(model: Model, fixed: Model, changes: list[Change]) -> None:
    """The export before the fix and after it, side by side, zoomed to the first node it rewrites."""
    before, after = owned.held("drawings", (model.sha256, f"fix:{fixed.sha256}"),
                               lambda: fix_drawings(model, fixed, changes, edge_labels=None))
    left, right = st.columns(2)
    with left:
        st.caption("The export (the nodes the fix rewrites marked)")
        diagram.show(before, key=state.W_COMPARE_FIX_BEFORE, reveal=changes[0].node)
    with right:
        st.caption("Fixed (the rewritten nodes marked)")
        diagram.show(after, key=state.W_COMPARE_FIX_AFTER, reveal=changes[0].node)
