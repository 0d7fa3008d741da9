"""explorer.compare on real model pairs from ../shared/models (skipped with a reason without it): silero-vad's
opset-15 export against its opset-18 If-less re-export (same function, different graphs), against its
'half' variant (other weights: a real difference), against onnxruntime inside its If bodies; gtcrn against its
own optimized form."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.optimizer import optimize

SHARED = Path(__file__).resolve().parents[3] / "shared" / "models"
SILERO = SHARED / "snakers4__silero-vad/src/silero_vad/data"
GTCRN = SHARED / "Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx"
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="the real models live in ../shared/models")


@pytest.fixture(scope="module")
def silero_feeds():
    rng = np.random.default_rng(0)
    return {"input": (rng.standard_normal((1, 512)) * 0.1).astype(np.float32),
            "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}


@pytest.fixture(scope="module")
def op15():
    return explorer.load(SILERO / "silero_vad_16k_op15.onnx")


def test_op18_ifless_reexport_computes_the_same_function(op15, silero_feeds):
    """The opset-18 export (one top-level If on sr, the LSTM written out as Gemm/Sigmoid/Tanh) shares almost no
    node with the opset-15 one: only the outputs align, and they agree; the rest is listed, not dropped."""
    result = explorer.compare(op15, SILERO / "silero_vad_op18_ifless.onnx", silero_feeds)
    assert [d.name for d in result.outputs] == ["output", "stateN"] and all(d.ok for d in result.outputs)
    assert result.first is None and not result.differs
    assert len(result.unaligned) > 200 and {u.side for u in result.unaligned} == {"A", "B"}


def test_half_variant_carries_other_weights(op15, silero_feeds):
    """silero_vad_half holds other trained weights (its conv and LSTM weights differ by up to 55): the outputs
    differ, and the first aligned value computed from those weights is named."""
    half = explorer.load(SILERO / "silero_vad_half.onnx")
    result = explorer.compare(op15, half, silero_feeds)
    assert not all(d.ok for d in result.outputs)
    first = result.first
    assert first is not None and first.node.endswith("/model/decoder/rnn/Slice") and first.max_abs > 1
    assert explorer.compare(half, "onnxruntime", silero_feeds).first is None  # the difference is the model's


def test_onnxruntime_inside_the_if_bodies(op15, silero_feeds):
    result = explorer.compare(op15, "onnxruntime", silero_feeds)
    assert result.first is None and not result.unaligned
    inside = [v for v in result.values if "/then_branch/" in v.node or "/else_branch/" in v.node]
    assert len(inside) > 50 and all(v.how == "node and name" for v in inside)
    assert any(v.op_type == "LSTM" for v in inside)


def test_gtcrn_against_its_optimized_form():
    model = explorer.load(GTCRN)
    rewritten = optimize(model)
    optimized = explorer.load(rewritten.optimized)
    result = explorer.compare(model, optimized, model.example_inputs(seed=0))
    assert result.first is None and all(d.ok for d in result.outputs)
    assert len(result.gates_checked) == 14  # every GRU, gate by gate
    # every value the optimized model computes has its counterpart, but the pieces of `x[:, :, a:b] = u` that the
    # rewrites of its ScatterNDs slice out (the original never computes them); what it no longer computes is listed
    pieces = {u for u in result.unaligned if u.side == "B"}
    assert result.values and pieces and all(u.op_type == "Slice" and u.node in rewritten.added_paths() for u in pieces)
    produced = explorer.run(optimized, model.example_inputs(seed=0))
    assert len(result.values) + len(pieces) == len({(e.node, name) for e in produced.events for name in e.outputs})


@pytest.mark.parametrize("path", [GTCRN.with_name("gtcrn_simple.onnx"), SILERO / "silero_vad_openvino_16k.onnx"])
def test_float32_rounding_inside_real_models_is_no_divergence(path):
    """gtcrn's ConvTranspose and silero-vad's Conv over large activations differ from onnxruntime's by rel 1e-3,
    abs 3e-5 and 2e-4: the rounding of their accumulations (epsilon · Σ|a|·|b|), and the outputs agree: so does
    the comparison, and it says within what."""
    model = explorer.load(path)
    result = explorer.compare(model, "onnxruntime", model.example_inputs(seed=0))
    assert all(d.ok for d in result.outputs)
    assert result.first is None and not result.differs
    assert any("accumulation" in within for within in result.within)


def test_an_lstm_whose_rounding_its_recurrence_carries_agrees():
    """KInference's bidirectional LSTM on random weights (pre-activations summing magnitudes of 50 and more)
    over 64 steps: explorer's and onnxruntime's Y drift apart by 6e-4 as float32 rounding feeds back, though
    each side's every step is the spec's equations from its own previous state within the rounding of its
    sums: no divergence (was gate c at step 29)."""
    path = SHARED / "JetBrains-Research__kinference/utils/utils-testing/src/commonMain/resources/lstm" \
        / "test_bilstm_with_bias/model.onnx"
    # in a fresh process: within the whole suite's worker the drift came out otherwise (an order dependence not
    # yet found; the comparison on its own gives the same figures every run)
    code = ("import json, sys, explorer; model = explorer.load(sys.argv[1]); "
            "r = explorer.compare(model, 'onnxruntime', model.example_inputs(seed=0)); "
            "print(json.dumps([r.first is None, r.differs, bool(r.gates), r.value('LSTM_0').max_abs, list(r.within)]))")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                          timeout=600)
    first_none, differs, gates, drift, within = json.loads(done.stdout.strip().splitlines()[-1])
    assert first_none and not differs and not gates
    assert drift > 1e-4
    assert any("recurrence" in text for text in within)
