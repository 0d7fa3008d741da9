"""The optimizer on the real exports kept in tests/models (torch.onnx, tf2onnx and optimum exports; the recipes are
in their folders): every result loads in onnxruntime, is proven equivalent by onnxruntime and explorer on each of
the file's feed sets, each at its own size and at another one (other values where the export fixes every size),
and has no more nodes than the best of onnxsim, onnxscript and onnxoptimizer as the bench measured them
(tests/models/anchors.json, written by the command it names: CI has none of those tools). An export onnxruntime
refuses is refused after too, and proven by explorer alone: "explorer only"."""
from __future__ import annotations

import json
import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from bench_optimizer_compare import real_nodes  # nodes other than Constant, bodies included
from real_models import PROJECT_MODELS, project_feed_sets, proof_sets, size_symbols

from explorer.optimizer import optimize
from explorer.optimizer.verify import verify
from tests.support.optimizer_models import proven

ANCHORS = json.loads((PROJECT_MODELS / "anchors.json").read_text())
# the exports the bench measured (an export added since is tested once its anchors are measured)
EXPORTS = {name: (path, sets) for name, path, sets in project_feed_sets() if name in ANCHORS["models"]}
TOOLS = ("onnxsim", "onnxscript", "onnxoptimizer")
OPTIMIZER_FOLDERS = ("keras_exports", "optimum_exports", "torch_cells", "torch_exports")
# exports onnxruntime refuses to load, and why (test_optimizer_onnxruntime.py checks this one against PyTorch's values)
REFUSED_BY_ONNXRUNTIME = {
    "torch_exports/ts_attention_bfloat16.onnx": "Could not find an implementation for MatMul(13)",
}


def test_every_export_has_its_anchors_measured_by_the_bench():
    assert sorted(EXPORTS) == sorted(ANCHORS["models"])  # every anchored export is there
    assert {name for name, _, _ in project_feed_sets() if name.split("/")[0] in OPTIMIZER_FOLDERS} <= set(EXPORTS)
    assert ANCHORS["command"].startswith("python bench/bench_optimizer_compare.py --project --anchors ")
    for name, counts in ANCHORS["models"].items():
        assert counts["nodes"] == real_nodes(onnx.load(str(EXPORTS[name][0])).graph), name
        assert any(counts.get(tool) is not None for tool in TOOLS), f"{name}: no tool's result to compare with"


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_no_more_nodes_than_the_best_other_tool_loaded_and_proven_on_two_sizes(name):
    path, sets = EXPORTS[name]
    result = optimize(str(path))
    counts = ANCHORS["models"][name]
    best = min(counts[tool] for tool in TOOLS if counts.get(tool) is not None)
    assert real_nodes(result.optimized.graph) <= best, result.stats_table()
    assert result.onnxruntime is not None
    refused = REFUSED_BY_ONNXRUNTIME.get(name)
    if refused is None:
        assert result.onnxruntime.status == "loads", result.onnxruntime
        ort.InferenceSession(result.optimized.SerializeToString(), providers=["CPUExecutionProvider"])
    else:
        assert result.onnxruntime.status == "original refused" and refused in result.onnxruntime.detail
        with pytest.raises(Exception, match=re.escape(refused)):
            ort.InferenceSession(result.optimized.SerializeToString(), providers=["CPUExecutionProvider"])
    judged = proof_sets(path, sets)
    assert len(judged) == 2 * len(sets), f"{name}: no second input size the export runs with"
    model = onnx.load(str(path))
    if any(size_symbols(model, feeds) for feeds in sets):  # else every size is fixed: other values instead
        sizes = {tuple(np.shape(v) for v in feeds.values()) for feeds in judged}
        assert len(sizes) == len(judged), f"{name}: a second set of the same size"
    for feeds in judged:
        if refused is None:
            proven(result, feeds)
        else:
            verdict = verify(result, feeds)
            assert verdict.status == "explorer only", "\n".join(verdict.lines())
            assert [r.judge for r in verdict.reports if r.ok] == ["explorer"], "\n".join(verdict.lines())


MASKED = sorted(name for name, (_, sets) in EXPORTS.items() if any("mask" in key for key in sets[0]))


@pytest.mark.parametrize("name", MASKED)
def test_models_with_an_attention_mask_stay_equivalent_on_a_padded_batch(name):
    """optimum's decoders and the BERTs read a mask that the recorded feeds fill with ones, so a rewrite resting on
    that would pass the proofs above: with the first half of the first sequence masked out (padding), the
    original's outputs change, and the optimized model's with them."""
    path, sets = EXPORTS[name]
    result = optimize(str(path))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for feeds in sets:
        padded = dict(feeds)
        for key in (k for k in feeds if "mask" in k):
            mask = feeds[key].copy()
            mask[0, : mask.shape[1] // 2] = 0
            padded[key] = mask
        assert not np.allclose(session.run(None, feeds)[0], session.run(None, padded)[0], atol=1e-3)
        proven(result, padded)
