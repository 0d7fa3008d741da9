"""Drawings readable at first sight, in Chromium at 1400 and 1000 px: GPT-2 with past (optimum's export) opens as its
layers (the embeddings' run, h.0, h.1, ln_f) inside the canvas, each box whole in view without scrolling or zooming
and at a zoom whose labels read; the default sample's Graph and Step through pages open readable too; the minimap
never lies over a node drawn at open. Screenshots: artifacts/e2e_layers_*.png."""
from __future__ import annotations

import urllib.parse

import pytest

from tests.support.app_server import ROOT, RUN_TIMEOUT, canvas_frame, diagram, painted, settle

pytestmark = pytest.mark.e2e
GPT2 = ROOT / "tests" / "models" / "generation" / "gpt2" / "decoder_with_past_model.onnx"
ARTIFACTS = ROOT / "artifacts"
READABLE = 0.7  # the canvas's zoom at open: graphviz's 10 pt labels at 7 px or more
WIDTHS = (1400, 1000)

# The opening view as the user sees it: the canvas's zoom, its stage in the page, each box's place in the page
# (`boxes`: ids starting with the prefix), and whether the minimap is shown over any node
VIEW_JS = """(prefix) => {
    const stage = document.getElementById("stage").getBoundingClientRect();
    const scale = +/scale\\(([-0-9.e]+)\\)/.exec(document.getElementById("content").style.transform)[1];
    const rect = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const boxes = {};
    for (const g of document.querySelectorAll("g.node")) if (g.id.startsWith(prefix)) boxes[g.id] = rect(g);
    const map = document.getElementById("minimap");
    const shown = !map.classList.contains("hidden");
    const m = map.getBoundingClientRect();
    const covered = shown ? [...document.querySelectorAll("g.node")].filter((g) => {
        const r = g.getBoundingClientRect();
        return r.right > m.left && r.left < m.right && r.bottom > m.top && r.top < m.bottom; }).map((g) => g.id) : [];
    return {scale, stage: [stage.left, stage.top, stage.right, stage.bottom], boxes, covered};
}"""


def _open(browser, server: str, width: int, path: str = "", **params: str):
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.set_default_timeout(RUN_TIMEOUT)
    page.goto(server + path + ("?" + urllib.parse.urlencode(params) if params else ""))
    settle(page)
    diagram(page).locator("#content svg").wait_for(timeout=RUN_TIMEOUT)
    canvas_frame(page).wait_for_function("() => document.body.dataset.drawn", timeout=RUN_TIMEOUT)
    page.wait_for_selector("[data-test-script-state=notRunning]", timeout=RUN_TIMEOUT)
    painted(page)
    return page


def _view(page, prefix: str) -> dict:
    """The opening view, with each box's place in the page's coordinates (the canvas's frame is offset)."""
    frame = page.locator('iframe[title="explorer.ui.diagram.explorer_diagram"]').first.bounding_box()
    view = canvas_frame(page).evaluate(VIEW_JS, prefix)
    shift = lambda r: [r[0] + frame["x"], r[1] + frame["y"], r[2] + frame["x"], r[3] + frame["y"]]  # noqa: E731
    view["stage"] = shift(view["stage"])
    view["boxes"] = {k: shift(r) for k, r in view["boxes"].items()}
    return view


def _wholly_in(box: list[float], area: list[float]) -> bool:
    return area[0] <= box[0] and box[2] <= area[2] and area[1] <= box[1] and box[3] <= area[3]


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"e2e_layers_{name}.png"))


@pytest.mark.parametrize("width", WIDTHS)
def test_gpt2_with_past_opens_as_its_layers_in_view(browser, server, width):
    page = _open(browser, server, width, model=str(GPT2))
    try:
        view = _view(page, "scope:")
        window = [0, 0, width, 900]
        layers = [f"scope:/transformer/h.{i}" for i in range(2)] + ["scope:/transformer/ln_f"]
        for layer in layers:  # each block's box whole on screen: inside the canvas and the window, unscrolled
            assert layer in view["boxes"], sorted(view["boxes"])
            assert _wholly_in(view["boxes"][layer], view["stage"]) and _wholly_in(view["boxes"][layer], window), (
                layer, view)
        assert view["scale"] >= READABLE, view["scale"]
        assert view["covered"] == []
        assert page.evaluate("() => window.scrollY") == 0
        _shot(page, f"gpt2_{width}")
    finally:
        page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", ["", "step"])
def test_the_default_sample_opens_readable_with_nothing_hidden(browser, server, width, path):
    page = _open(browser, server, width, path)
    try:
        view = _view(page, "node:")
        assert view["boxes"] and view["scale"] >= READABLE, view["scale"]
        assert view["covered"] == []  # the minimap lies over no node drawn at open
        if path == "step":
            _step_canvas_in_view(page, view, width)
        _shot(page, f"{path or 'graph'}_{width}")
    finally:
        page.context.close()


def _step_canvas_in_view(page, view: dict, width: int) -> None:
    """Step through at open: the drawing starts under the tour box, in the window's upper two thirds, with nodes
    in view; in a page too narrow for the canvas beside the values (1000 px) the canvas takes the whole width
    (beside them it had a third of the window, its step bar wrapped to three rows and the drawing below the
    window)."""
    tour = page.locator('[data-testid="stVerticalBlock"]').filter(has_text="Tour of").last.bounding_box()
    canvas = page.locator('iframe[title="explorer.ui.diagram.explorer_diagram"]').first.bounding_box()
    stage = view["stage"]
    assert tour["y"] + tour["height"] <= canvas["y"] and stage[1] <= 900 * 2 / 3, (tour, stage)
    assert any(box[1] < 900 and box[3] > stage[1] for box in view["boxes"].values()), view
    if width < 1400:
        assert canvas["width"] >= 0.95 * tour["width"], (canvas, tour)
