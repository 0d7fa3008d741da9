"""The Compare page in a real browser: the default sample against onnxruntime (every value agrees), then a GRU
against PyTorch's equations (its gate view). Screenshots go to artifacts/e2e_compare_*.png."""
from __future__ import annotations

import pytest
from app_server import settle
from test_browser import ARTIFACTS, choose_sample, diagram, no_exception, open_page

pytestmark = pytest.mark.e2e


def shot(page, name: str) -> None:
    """A screenshot once charts are drawn (tables in tabs not shown never draw their canvas: no waiting on them)."""
    page.wait_for_timeout(2000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"e2e_{name}.png"), full_page=True)


def test_compare_page_against_onnxruntime_and_pytorch(page):
    open_page(page, "Compare")
    page.get_by_text("Every aligned value agrees").wait_for()
    diagram(page).locator("svg").first.wait_for()
    no_exception(page)
    shot(page, "compare_onnxruntime")
    choose_sample(page, "gru_pytorch_batch_first")
    page.get_by_text("PyTorch's equations (GRU/LSTM/RNN)").click()
    settle(page)
    page.get_by_role("tab", name="Gates").click()
    page.locator(".js-plotly-plot .hm").first.wait_for()
    no_exception(page)
    shot(page, "compare_gates")
