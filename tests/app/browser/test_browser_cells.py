"""Recurrent cells written as loops, in a real browser: a Keras Bidirectional GRU with masking (tf2onnx's two
Loops) on the Gates page, with its heatmaps and its report naming Keras's weights, and on the Loops page, which
says what the loop is and fills the cell's equations in. Screenshots go to artifacts/e2e_cells_*.png."""
from __future__ import annotations

import urllib.parse

import pytest

from tests.support.app_server import ROOT, settle

pytestmark = pytest.mark.e2e
ARTIFACTS = ROOT / "artifacts"
BIGRU = ROOT / "tests" / "models" / "keras_exports" / "keras_embedding_bigru.onnx"


def open_model(page, server: str, path: str) -> None:
    page.goto(server + path + "?" + urllib.parse.urlencode({"model": str(BIGRU)}))
    settle(page)


def shot(page, name: str) -> None:
    """A screenshot once the page's charts are drawn."""
    for chart in page.locator(".js-plotly-plot").all():
        chart.locator(".main-svg").first.wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"e2e_cells_{name}.png"), full_page=True)


def test_gates_page_shows_a_keras_bidirectional_gru_loop(page, server):
    open_model(page, server, "gates")
    page.get_by_text("GRU · Keras loop, bidirectional, reset_after=True, masked, hidden 4").first.wait_for()
    page.get_by_alt_text("z [forward, batch 0]").first.wait_for()
    page.get_by_text("Keras's equations, recomputed from the recorded inputs").first.wait_for()
    assert page.get_by_test_id("stException").count() == 0
    shot(page, "gates")


def test_loops_page_says_the_loop_is_a_gru_cell(page, server):
    open_model(page, server, "loops")
    page.get_by_text("is a GRU cell, Keras reset_after=True, masked, hidden 4").first.wait_for()
    page.get_by_text("The GRU cell's equations at iteration 0").first.wait_for()
    assert page.get_by_test_id("stException").count() == 0
    shot(page, "loops")
