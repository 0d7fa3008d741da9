"""The optimizer on the real models of ../shared/models: each optimized model gives onnxruntime's outputs of the
original (and explorer's, where explorer runs the original) on feeds of the shapes onnxruntime accepted, and the
rewrites of the smaller models hold one by one."""
from __future__ import annotations

from pathlib import Path

import pytest
from real_models import manifest_entries, manifest_feeds

from explorer.optimizer import optimize
from explorer.optimizer.verify import check_steps, verify

ROOT = Path(__file__).resolve().parents[3] / "shared" / "models"
STEP_CHECK_LIMIT = 400  # nodes: above this only the whole model is proven (each step check runs two models)
ENTRIES = manifest_entries(ROOT)
# models the original of which neither judge can run on these feeds (invalid sequence lengths, empty crops, ...)
NO_VERDICT = {"test_lstm_with_peepholes", "bad_graph_conditionally_invalid", "crop_and_resize"}


@pytest.mark.skipif(not ENTRIES, reason="../shared/models is not available")
@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"].rsplit("/", 2)[-2] + "/" + e["file"].rsplit("/", 1)[-1]
                                                for e in ENTRIES])
def test_optimized_real_model_matches_the_original(entry):
    path = ROOT / entry["file"]
    feeds = manifest_feeds(entry)
    result = optimize(path)
    verdict = verify(result, feeds)
    if any(key in entry["file"] for key in NO_VERDICT):
        assert verdict.status == "inconclusive"
        return
    assert verdict.status == "equivalent", "\n".join(verdict.lines())
    assert next(r for r in verdict.reports if r.judge == "onnxruntime").unavailable is None
    before, after = result.node_counts()
    assert after <= before
    assert len(result.optimized.SerializeToString()) <= path.stat().st_size * 1.10
    if before <= STEP_CHECK_LIMIT:
        assert not [c for c in check_steps(result, feeds) if c.status == "different"]


@pytest.mark.skipif(not ENTRIES, reason="../shared/models is not available")
def test_exported_models_shrink():
    sizes = {}
    for entry in ENTRIES:
        if entry["file"].endswith(("silero_vad.onnx", "gtcrn.onnx", "silero_vad_16k_op15.onnx")):
            result = optimize(ROOT / entry["file"])
            sizes[entry["file"].rsplit("/", 1)[-1]] = result.node_counts()
    assert sizes["silero_vad.onnx"][1] < sizes["silero_vad.onnx"][0] * 0.5
    assert sizes["silero_vad_16k_op15.onnx"][1] < sizes["silero_vad_16k_op15.onnx"][0] * 0.5
    assert sizes["gtcrn.onnx"][1] < sizes["gtcrn.onnx"][0] * 0.8
