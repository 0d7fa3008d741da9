"""The app in a real browser: choose the nested-loop sample, click a node inside a body and see its inspector,
step to an iteration inside a loop, look at the gates of a GRU, upload a garbage file and see the error.
Screenshots go to artifacts/e2e_*.png."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.app_server import DIAGRAM_FRAME, diagram, settle
from tests.support.browser_pages import choose_sample, no_exception, open_page, shot

pytestmark = pytest.mark.e2e

ADD_X = "enc/body/inner/body/branch/then_branch/add_x"


def test_click_a_node_inside_a_body_opens_its_inspector(page):
    choose_sample(page, "nested_loops")
    canvas = diagram(page)
    canvas.locator("#content svg").wait_for()
    canvas.locator(f'g.node[id="node:{ADD_X}"]').click()
    settle(page)
    page.get_by_role("heading", name="Add 'add_x'").wait_for()
    page.get_by_text("Ran 8 times").wait_for()  # its executions: 4 Scan steps x 2 even inner iterations
    no_exception(page)
    shot(page, "graph_inspector")


def test_step_to_an_iteration_inside_a_loop(page):
    choose_sample(page, "nested_loops")
    open_page(page, "Step through")
    diagram(page).locator("#content svg").wait_for()
    expect(diagram(page).locator("#stepbar .position")).to_contain_text("Loop 'inner' · iteration 0")
    next_iteration(page)
    expect(page.locator(".xv b", has_text="parity")).to_be_visible()  # the new step's values
    # the canvas marks the current node as it appears on screen (views.styles: the "current" state's outline
    # colour #e8590c), and its iterations beside it
    canvas = diagram(page)
    current = canvas.locator('g.node[id="node:enc/body/inner/body/parity"] path, '
                             'g.node[id="node:enc/body/inner/body/parity"] polygon').first
    expect(current).to_have_css("stroke", "rgb(232, 89, 12)")
    expect(canvas.locator("#badge")).to_have_text("▶ iteration 0, 1")
    expect(canvas.locator("#badge")).to_have_css("color", "rgb(232, 89, 12)")  # styles.LABEL_TINTS["iteration"]
    no_exception(page)
    shot(page, "step_iteration")


def next_iteration(page) -> None:
    """A click on the canvas's "next iteration" move: the canvas shows the step at once (its position line),
    then the server's rerun follows."""
    canvas = diagram(page)
    canvas.locator('#stepbar button[data-name="next_iteration"]').click()
    expect(canvas.locator("#stepbar .position")).to_contain_text(
        "Event 5 of 0–72 · Scan 'enc' · iteration 0 › Loop 'inner' · iteration 1 › Mod 'parity' · ")
    settle(page)


def current_outline(canvas, node: str):
    box = f'g.node[id="node:{node}"]'
    return canvas.locator(f"{box} path, {box} polygon").first


def test_a_step_sends_the_canvas_only_its_marks_and_a_new_canvas_gets_the_drawing_back(page):
    received: list = []
    page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: received.append(frame)))
    page.reload()  # the app's connection again, now listened to
    settle(page)
    choose_sample(page, "nested_loops")
    open_page(page, "Step through")
    diagram(page).locator("#content svg").wait_for()
    settle(page)  # a rerun the drawing's arrival caused (a canvas that was sent no drawing yet asks for it) is over
    assert any(b"<svg" in frame for frame in received)  # the page's first run sent the drawing
    received.clear()
    next_iteration(page)
    expect(current_outline(diagram(page), "enc/body/inner/body/parity")).to_have_css("stroke", "rgb(232, 89, 12)")
    assert received and not any(b"<svg" in frame for frame in received)  # the step: marks only
    step = b"".join(f if isinstance(f, bytes) else f.encode() for f in received)
    # and of the frames around event 5 only those the canvas lacks: 17 came into its window, 3 it has had
    assert b"Event 17 of 0" in step and b"Event 5 of 0" in step and b"Event 3 of 0" not in step
    # a canvas made anew (here: reloaded) has lost the drawing: it asks for it and shows the step again
    page.frame_locator(DIAGRAM_FRAME).first.locator("body").evaluate("() => location.reload()")
    expect(current_outline(diagram(page), "enc/body/inner/body/parity")).to_have_css("stroke", "rgb(232, 89, 12)")
    expect(diagram(page).locator("#badge")).to_have_text("▶ iteration 0, 1")
    no_exception(page)

def test_gates_page_shows_heatmaps_for_a_gru(page):
    choose_sample(page, "gru_pytorch_batch_first")
    open_page(page, "Gates")
    page.get_by_alt_text("z [forward, batch 0]").wait_for()  # the charts: inline SVG images
    assert page.locator("img.chart").count() >= 4
    assert page.locator("img.chart").first.evaluate("(i) => i.complete && i.naturalWidth > 0")  # the SVG decodes
    assert page.locator(".js-plotly-plot").count() == 0
    no_exception(page)
    shot(page, "gates")


def test_garbage_upload_shows_the_error_and_keeps_the_model(page):
    choose_sample(page, "tiny_mlp")
    page.get_by_test_id("stSidebar").get_by_text("Upload", exact=True).click()
    settle(page)
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": "garbage.onnx", "mimeType": "application/octet-stream", "buffer": b"\x00garbage\xff" * 20}])
    settle(page)
    alert = page.get_by_test_id("stAlertContentError").first
    alert.wait_for()
    assert "garbage.onnx is not an ONNX model" in alert.inner_text()
    assert "Still showing tiny_mlp" in alert.inner_text()
    diagram(page).locator("#content svg").wait_for()  # the previous model is still drawn
    no_exception(page)
    shot(page, "garbage_upload")


def test_a_big_model_shows_its_overview_then_its_run(browser, server, tmp_path):
    """A model of over 2,000 nodes opened from its address: the canvas goes ahead of the overview, asks for it once
    loaded and shows it; then the canvas's report runs the model (Colour by turns on). A canvas that never asked
    would stay at "drawing…"."""
    import urllib.parse

    import onnx

    from tests.support.diagrams import synthetic_model

    proto = synthetic_model(2_200)
    proto.doc_string = "a model no other browser test opens"
    onnx.save(proto, tmp_path / "big.onnx")
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    try:
        page.goto(server + "?" + urllib.parse.urlencode({"model": str(tmp_path / "big.onnx")}))
        diagram(page).locator('#content g.node[id^="scope:"]').first.wait_for(timeout=120_000)
        page.wait_for_function(  # the run followed the drawing: "Colour by" time spent needs it
            "() => [...document.querySelectorAll('[data-testid=stButtonGroup] button')]"
            ".some(b => b.textContent.includes('time spent') && !b.disabled)", timeout=120_000)
        settle(page)
        assert diagram(page).locator("#status").inner_text() != "drawing…"
        no_exception(page)
    finally:
        page.context.close()
