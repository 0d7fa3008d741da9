"""The Sweep page in a real browser: the planted pair (a Loop and the same Loop parting from iteration PART_AT
on) swept over T and two seeds on a local Dask cluster the server starts; the progress bar, the rows worst first
and the error against T; a differing input opened in the Compare page at its first divergence, with the sidebar
keeping the model and showing that input. Screenshots go to artifacts/e2e_sweep_*.png."""
from __future__ import annotations

import re

import pytest

from tests.support.app_server import settle
from tests.support.browser_pages import no_exception, open_page, shot
from tests.support.sweep_models import ACC, PART_AT, planted_pair

pytestmark = pytest.mark.e2e


def fill(page, label: str | re.Pattern[str], text: str) -> None:
    field = page.get_by_label(label, exact=True) if isinstance(label, str) else page.get_by_label(label)
    field.fill(text)
    field.press("Enter")
    settle(page)


def test_sweep_then_open_an_input_at_its_divergence(page, tmp_path):
    a, b = planted_pair(tmp_path)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Local path", exact=True).click()
    settle(page)
    fill(page, "Path to an .onnx file", str(a))
    open_page(page, "Sweep")
    fill(page, re.compile(r"^Sizes of `?T`?$"), f"2,{PART_AT},{PART_AT + 1},{PART_AT + 3}")  # T as code
    fill(page, "Seeds", "0,1")
    page.get_by_text("A model at a local path", exact=True).click()
    settle(page)
    fill(page, "Path of model B", str(b))
    page.get_by_role("button", name="Start the sweep").click()
    page.get_by_test_id("stProgress").wait_for()
    page.get_by_text("8 of 8 inputs:").wait_for(timeout=240_000)
    settle(page)
    no_exception(page)
    page.locator("img.chart").first.wait_for()  # the error chart: an inline SVG image
    assert page.locator("img.chart").first.evaluate("(i) => i.complete && i.naturalWidth > 0")  # the SVG decodes
    assert page.get_by_test_id("stPlotlyChart").count() == 0  # plotly only with Interactive charts on
    shot(page, "sweep_rows")

    page.get_by_test_id("stMain").get_by_test_id("stSelectbox").last.click()
    page.get_by_role("option", name=f"T={PART_AT + 3} seed 1 · differs", exact=False).click()
    settle(page)
    page.get_by_role("button", name="Open in Compare", exact=True).click()
    settle(page)
    page.get_by_text("First divergence, in A's execution order:").wait_for(timeout=120_000)
    texts = "\n".join(page.get_by_test_id("stText").all_inner_texts())
    assert f"node '{ACC}' (Add) at iteration ({PART_AT},), value 's_out'" in texts
    assert page.get_by_label("Path to an .onnx file", exact=True).input_value() == str(a)
    no_exception(page)
    shot(page, "sweep_opened")
