"""The HTML report on a real model (gtcrn, 14 GRUs, from ../shared/models; skipped with a reason without it):
against onnxruntime at tolerances tight enough that its GRUs' gates depart, the page stays under 5 MB, refers to
nothing outside itself and holds the highlighted node and the departing GRUs' gate heatmaps."""
from __future__ import annotations

from pathlib import Path

import pytest

from explorer.cli import main
from tests.support.report_checks import outside_references

GTCRN = Path(__file__).resolve().parents[3] / "shared" / "models" / "Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx"


@pytest.mark.skipif(not GTCRN.exists(), reason="gtcrn lives in ../shared/models")
def test_gtcrn_report_stays_small(tmp_path):
    out = tmp_path / "gtcrn.html"
    assert main(["report", str(GTCRN), "--against", "onnxruntime", "--rtol", "1e-7", "--atol", "1e-9",
                 "-o", str(out)]) == 0
    page = out.read_text()
    assert len(page.encode("utf-8")) <= 5_000_000
    assert outside_references(page) == []
    assert page.count('class="node departing"') == 1 and 'class="node on-path"' in page
    assert page.count('class="heatmap"') >= 4
