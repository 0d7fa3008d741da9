"""Real models written by onnxruntime's own tools (tests/models/ort_tools: its transformer optimizer, its
quantization tools, skl2onnx's text pipeline), run by explorer against onnxruntime on the same feeds."""
from __future__ import annotations

import collections
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import explorer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from real_models import project_models  # noqa: E402

MODELS = {name.split("/", 1)[1]: (path, feeds) for name, path, feeds in project_models() if name.startswith("ort_tools/")}
# the operators of onnxruntime's own each file must hold (what the tool wrote)
EXPECTED = {
    "bert_optimized.onnx": {"EmbedLayerNormalization", "Attention", "SkipLayerNormalization", "BiasGelu"},
    "gpt2_optimized.onnx": {"SkipLayerNormalization", "FastGelu"},
    "bert_quantize_dynamic.onnx": {"QEmbedLayerNormalization", "QAttention", "SkipLayerNormalization", "BiasGelu"},
    "bert_matmul_4bits.onnx": {"MatMulNBits"},
    "cnn_qoperator.onnx": {"QLinearAdd", "QLinearMul", "QLinearLeakyRelu", "QLinearSigmoid", "QLinearConcat",
                           "QLinearAveragePool", "QLinearGlobalAveragePool", "QGemm", "QLinearSoftmax"},
    "cnn_qdq.onnx": {"QuantizeLinear", "DequantizeLinear"},
    "lstm_quantize_dynamic.onnx": {"DynamicQuantizeLSTM"},
    "tfidf_tokenizer.onnx": {"Tokenizer"},
}
# onnxruntime fuses the QDQ model's quantize/dequantize pairs into integer kernels, rounding once more: one step
# of the output's quantization (1/255) apart
TOLERANCE = {"cnn_qdq.onnx": 1 / 255 + 1e-6}


def test_every_model_has_its_feeds_and_its_operators():
    files = {p.name for p in (Path(__file__).parent / "models" / "ort_tools").glob("*.onnx")}
    assert files == set(MODELS) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_explorer_matches_onnxruntime(name):
    path, feeds = MODELS[name]
    model = onnx.load(str(path))
    contrib = collections.Counter(n.op_type for n in model.graph.node if n.domain == "com.microsoft")
    assert EXPECTED[name] <= set(contrib), f"{name} lacks {EXPECTED[name] - set(contrib)}"
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    got = explorer.run(str(path), feeds).outputs
    atol = TOLERANCE.get(name, 1e-5)
    for key, value in want.items():
        assert got[key].shape == value.shape and got[key].dtype == value.dtype, key
        np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=atol, err_msg=f"{name}: {key}")


def test_the_quantized_lstms_gates_are_recorded():
    path, feeds = MODELS["lstm_quantize_dynamic.onnx"]
    trace = explorer.run(str(path), feeds)
    [node] = [n.path for n in explorer.load(str(path)).nodes() if n.op_type == "DynamicQuantizeLSTM"]
    gates = trace.gates(node)
    assert gates["H"].shape == (5, 2, 2, 8)
    np.testing.assert_array_equal(gates["H"], trace.outputs["y"])
