"""The HTML report in Chromium with the network off: it draws, the departing node is highlighted and in view,
the gates are heatmaps, nothing is requested but the file itself, and it reads at 1400 px and at a phone's width.
The screenshots are kept in the test's folder."""
from __future__ import annotations

from pathlib import Path

import pytest

from explorer.cli import main

KERAS = Path(__file__).resolve().parents[2] / "models" / "keras_exports"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", str(KERAS / "keras_lstm.onnx"), "--against", str(KERAS / "keras_lstm_fp16.onnx"),
                 "--rtol", "1e-4", "--atol", "1e-5", "-o", str(out)]) == 0
    return out


def _open(chromium, report: Path, width: int):
    context = chromium.new_context(viewport={"width": width, "height": 900}, offline=True)
    page = context.new_page()
    requests: list[str] = []
    failures: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda error: failures.append(str(error)))
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    return context, page, requests, failures


@pytest.mark.parametrize("width", [1400, 390])
def test_report_offline(chromium, report, width):
    context, page, requests, failures = _open(chromium, report, width)
    try:
        page.screenshot(path=str(report.with_name(f"report_{width}.png")), full_page=True)
        assert requests == [report.as_uri()] and failures == []
        departing = page.locator("g.node.departing")
        assert departing.count() == 1
        graph = page.locator("#graph").bounding_box()
        node = departing.bounding_box()
        assert graph and node and node["width"] > 0
        centre_x, centre_y = node["x"] + node["width"] / 2, node["y"] + node["height"] / 2
        assert graph["x"] <= centre_x <= graph["x"] + graph["width"]  # brought into view
        assert graph["y"] <= centre_y <= graph["y"] + graph["height"]
        stroke = departing.locator("path, polygon").first.evaluate("e => getComputedStyle(e).stroke")
        assert stroke == "rgb(201, 42, 42)"  # the departing colour of views/styles.py
        heatmaps = page.locator("svg.heatmap")
        assert heatmaps.count() >= 8 and heatmaps.first.bounding_box()["width"] > 50
        assert page.locator("svg.heatmap rect.marked-step").count() >= 8
        assert page.get_by_text("First divergence: node").is_visible()
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"the page is {overflow}px wider than a {width}px window"
        before = page.evaluate("document.querySelector('#graph > svg').style.transform")
        page.locator("#graph").hover()
        page.mouse.wheel(0, -300)
        assert page.evaluate("document.querySelector('#graph > svg').style.transform") != before  # zooms
    finally:
        context.close()
