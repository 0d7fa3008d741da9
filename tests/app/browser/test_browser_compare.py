"""The Compare page in a real browser on the nested-loop sample: against onnxruntime every value agrees; against
reference values that depart at the third Scan iteration the first divergence is named, outlined in the diagram
and stepped to in lockstep; then the Graph page colours the nodes by that error, with its legend. Screenshots
go to artifacts/e2e_compare_*.png."""
from __future__ import annotations

import io
import re

import numpy as np
import pytest
from playwright.sync_api import expect

import explorer
from explorer.inputs.samples import sample_inputs, sample_path
from tests.support.app_server import diagram, settle
from tests.support.browser_pages import choose_sample, no_exception, open_page, open_path, shot

pytestmark = pytest.mark.e2e
SQUASH = "enc/body/squash"


def reference_npz() -> bytes:
    """The Scan body's `s_out` of every iteration, 0.25 off at the third (as an .npz of reference values)."""
    trace = explorer.run(explorer.load(sample_path("nested_loops")), sample_inputs("nested_loops"))
    stacked = np.stack([e.outputs["s_out"] for e in trace.events_of(SQUASH)])
    stacked[2] += np.float32(0.25)
    buffer = io.BytesIO()
    np.savez(buffer, s_out=stacked)
    return buffer.getvalue()


def texts(page) -> str:
    return "\n".join(page.get_by_test_id("stText").all_inner_texts())


def in_view(page, locator) -> bool:
    """Whether an element lies within the window as the page opens (no scrolling, no zooming)."""
    box = locator.bounding_box()
    size = page.viewport_size
    return box is not None and size is not None and box["y"] >= 0 and box["y"] + box["height"] <= size["height"] \
        and box["x"] + box["width"] <= size["width"]


def test_compare_names_outlines_and_steps_to_the_first_divergence(page):
    choose_sample(page, "nested_loops")  # side A, on its own inputs
    open_page(page, "Compare")
    agree = page.get_by_test_id("stAlertContentSuccess").filter(has_text="and onnxruntime agree")
    agree.wait_for()
    assert in_view(page, agree)  # the verdict, first, without scrolling
    diagram(page).locator("#content svg").wait_for()
    no_exception(page)
    shot(page, "compare_onnxruntime")

    page.get_by_test_id("stRadio").get_by_text("Reference values (.npz)").click()
    settle(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        files=[{"name": "ref.npz", "mimeType": "application/octet-stream", "buffer": reference_npz()}])
    settle(page)
    verdict = page.get_by_test_id("stAlertContentError").filter(has_text=f"part at node '{SQUASH}' (Tanh)")
    verdict.wait_for()
    assert "iteration (2,), value 's_out'" in verdict.inner_text() and in_view(page, verdict)
    assert f"node '{SQUASH}' (Tanh) at iteration (2,), value 's_out'" in texts(page)
    node = diagram(page).locator(f'g.node[id="node:{SQUASH}"]')
    expect(node).to_have_class(re.compile(r"\bexplorer-selected\b"))  # zoomed to and outlined
    shot(page, "compare_divergence")

    page.get_by_role("tab", name="Step both").click()
    page.get_by_role("button", name="Go to the first divergence").click()
    settle(page)
    page.get_by_text(f"A: {SQUASH} (Tanh) at iteration (2,)").wait_for()
    no_exception(page)

    open_page(page, "Graph")
    page.get_by_role("radio", name="error vs reference values").click()
    settle(page)
    legend = diagram(page).locator("#legend")
    expect(legend).to_contain_text("max abs error against reference values")
    expect(legend).to_contain_text("0.25")
    no_exception(page)
    shot(page, "compare_graph_error")


def test_an_exporter_bug_is_one_verdict_with_the_gates_tab_on_its_gate_at_1000_px(browser, server, tmp_path):
    """A PyTorch GRU exported with linear_before_reset=0, against PyTorch's equations, in a 1000 px window: the
    banner names the node, gate h and step 0 with the diagnosis, within the window, and the Gates tab is open
    on gate h with where it departs."""
    import onnx

    from tests.support.app_server import RUN_TIMEOUT
    from tests.support.compare_models import exported_rnn, torch_parameters

    model = exported_rnn("GRU", torch_parameters("GRU"), linear_before_reset=0)
    model.producer_name = "pytorch"
    onnx.save(model, tmp_path / "gru.onnx")
    context = browser.new_context(viewport={"width": 1000, "height": 1100})
    page = context.new_page()
    page.set_default_timeout(RUN_TIMEOUT)
    try:
        page.goto(server)
        settle(page)
        open_path(page, tmp_path / "gru.onnx")
        open_page(page, "Compare")
        page.get_by_test_id("stRadio").get_by_text("PyTorch's equations (GRU/LSTM/RNN)").click()
        settle(page)
        verdict = page.get_by_test_id("stAlertContentError").filter(has_text="part at node 'rnn' (GRU), gate h")
        verdict.wait_for()
        assert "(a known exporter bug)" in verdict.inner_text() and in_view(page, verdict)
        expect(page.get_by_role("tab", name="Gates")).to_have_attribute("aria-selected", "true")
        page.get_by_text("Gate h departs first at time step 0").wait_for()
        expect(page.get_by_test_id("stRadio").filter(has_text="Gate").get_by_role("radio", name="h", exact=True)).to_be_checked()
        no_exception(page)
        shot(page, "compare_gru_exporter_bug_1000")
    finally:
        context.close()


def test_a_float16_lstm_agrees_with_onnxruntime(page):
    from pathlib import Path

    open_path(page, Path(__file__).resolve().parents[2] / "models" / "torch_exports" / "ts_lstm_2layer_fp16.onnx")
    open_page(page, "Compare")
    agree = page.get_by_test_id("stAlertContentSuccess").filter(has_text="and onnxruntime agree")
    agree.wait_for()
    assert in_view(page, agree)
    no_exception(page)
    shot(page, "compare_fp16_lstm")
