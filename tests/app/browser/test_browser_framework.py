"""The Compare page against the framework model in a real browser, on the dynamo export of the tagger with its GRU's
gate blocks swapped and the stored PyTorch capture: the verdict names the first departing module; the module tree
stands beside the export, the cause's node zoomed to and outlined; a row picked in the tree and a node clicked in
the export each show that module's ONNX node and source line; the fix is drawn before and after with its node
marked, and the fixed model offered. Screenshots go to artifacts/e2e_framework_*.png."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.app_server import diagram, settle
from tests.support.browser_pages import no_exception, open_page, open_path, shot

pytestmark = pytest.mark.e2e
BRIDGE = Path(__file__).resolve().parents[2] / "models" / "bridge"
CAUSE, LSTM, NORM = "node_GRU_80", "node_lstm__2", "node_layer_norm"
ROW = 35  # px: a row of Streamlit's data grid (and its header)


def details(page) -> str:
    return "\n".join(page.get_by_test_id("stText").all_inner_texts())


def test_the_module_tree_beside_the_export_and_the_fix_drawn(page):
    open_path(page, BRIDGE / "faults" / "dynamo_tagger_gru_gates.onnx")
    open_page(page, "Compare")
    page.get_by_test_id("stRadio").get_by_text("The PyTorch or Keras model it came from").click()
    settle(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").last.set_input_files(
        files=[{"name": "tagger.npz", "mimeType": "application/octet-stream",
                "buffer": (BRIDGE / "tagger.npz").read_bytes()}])
    settle(page)
    verdict = page.get_by_test_id("stAlertContentError").filter(has_text="First departing module: gru layer 0")
    verdict.wait_for()
    assert "make_bridge_models.py:44" in verdict.inner_text().replace("\u200b", "")
    canvas = diagram(page)
    cause = canvas.locator(f'g.node[id="node:{CAUSE}"]')
    expect(cause).to_have_class(re.compile(r"\bexplorer-selected\b"))  # the cause: zoomed to and outlined
    assert f"gru layer 0 is ONNX node {CAUSE}" in details(page)
    no_exception(page)
    shot(page, "framework_tree")

    # a node clicked in the export picks its module
    canvas.locator(f'g.node[id="node:{NORM}"]').click()
    settle(page)
    page.get_by_text(f"norm is ONNX node {NORM}").wait_for()
    assert "source: make_bridge_models.py:46" in details(page)
    expect(diagram(page).locator(f'g.node[id="node:{NORM}"]')).to_have_class(re.compile(r"\bexplorer-selected\b"))

    # a row picked in the tree (its row marker, the grid's first column) shows where that module is
    grid = page.get_by_test_id("stDataFrame").first
    box = grid.bounding_box()
    assert box is not None
    grid.click(position={"x": 12, "y": ROW + 5 * ROW + ROW / 2})  # row 5: lstm layer 0
    settle(page)
    page.get_by_text(f"lstm layer 0 is ONNX node {LSTM}").wait_for()
    expect(diagram(page).locator(f'g.node[id="node:{LSTM}"]')).to_have_class(re.compile(r"\bexplorer-selected\b"))
    no_exception(page)

    # the diagnosis: the fix before and after, its node marked on both, the fixed model offered
    page.get_by_text("→ fixed and proven").wait_for()
    before, after = diagram(page, 1), diagram(page, 2)
    for drawn in (before, after):
        expect(drawn.locator(f'g.node[id="node:{CAUSE}"]')).to_have_count(1)
    removed = before.locator(f'g.node[id="node:{CAUSE}"] path, g.node[id="node:{CAUSE}"] polygon').first
    added = after.locator(f'g.node[id="node:{CAUSE}"] path, g.node[id="node:{CAUSE}"] polygon').first
    expect(removed).to_have_css("stroke", "rgb(201, 42, 42)")  # styles.NODE_STATES["removed"]
    expect(added).to_have_css("stroke", "rgb(43, 138, 62)")  # styles.NODE_STATES["added"]
    download = page.get_by_role("button", name="Download the fixed model")
    download.scroll_into_view_if_needed()
    no_exception(page)
    shot(page, "framework_fix")
