"""Real models written by onnxruntime's own tools (tests/models/ort_tools: its transformer optimizer, its
quantization tools, skl2onnx's text pipeline), run by explorer against onnxruntime on the same feeds.

The quantized ones are judged by what they are. Every integer-product node explorer ran is recomputed from the
inputs it recorded by exact integer arithmetic written from the spec (tests/support/quantized_reference.py) and must equal
explorer's value, on any CPU. onnxruntime judges the whole model only where its kernels are exact: a CPU with VNNI,
or no integer product that can saturate; elsewhere its u8s8 kernel saturates pair sums to int16, and then compare
must name that saturation as the only cause of every difference (explorer/compare/saturation.py), or, for the
single-node LSTM, onnxruntime's outputs must be the saturated reference's. The QDQ model is judged by onnxruntime
with its graph optimizations off: the spec's float path (fused into QLinearConv, it saturates too)."""
from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from real_models import project_models

import explorer
from tests.differential.harness import Case
from tests.differential.quantized_judge import can_saturate, cpu_has_vnni, exact_outputs
from tests.support.quantized_reference import REFERENCES

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
QUANTIZED = {"bert_quantize_dynamic.onnx", "cnn_qoperator.onnx", "lstm_quantize_dynamic.onnx"}
UNFUSED = {"cnn_qdq.onnx"}  # judged by onnxruntime's float path: its fused integer kernels round and saturate


def test_every_model_has_its_feeds_and_its_operators():
    files = {p.name for p in (Path(__file__).parents[1] / "models" / "ort_tools").glob("*.onnx")}
    assert files == set(MODELS) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_explorer_matches_onnxruntime(name):
    path, feeds = MODELS[name]
    model = onnx.load(str(path))
    contrib = collections.Counter(n.op_type for n in model.graph.node if n.domain == "com.microsoft")
    assert EXPECTED[name] <= set(contrib), f"{name} lacks {EXPECTED[name] - set(contrib)}"
    options = ort.SessionOptions()
    options.log_severity_level = 3
    if name in UNFUSED:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    trace = explorer.run(str(path), feeds)
    got = trace.outputs
    if name in QUANTIZED and not onnxruntime_exact(trace):
        judge_saturated(name, path, feeds, trace, want)
        return
    for key, value in want.items():
        assert got[key].shape == value.shape and got[key].dtype == value.dtype, key
        np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-5, err_msg=f"{name}: {key}")


def integer_events(trace: explorer.Trace, model: onnx.ModelProto) -> list[tuple[onnx.NodeProto, Any, list]]:
    """Each execution of an integer-product node: its node, its event and its inputs as recorded."""
    nodes = {n.name: n for n in model.graph.node}
    found = []
    for event in trace.events:
        node = nodes.get(event.node)
        if node is not None and (node.domain, node.op_type) in REFERENCES:
            found.append((node, event, [event.inputs.get(k) if k else None for k in node.input]))
    return found


def _case(node: onnx.NodeProto, inputs: list) -> Case:
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    return Case(node.op_type, 1, inputs, attrs, domain=node.domain, outputs=len(node.output))


def onnxruntime_exact(trace: explorer.Trace) -> bool:
    """Whether onnxruntime's integer kernels are exact on this run: a VNNI CPU, or no product that can saturate."""
    model = onnx.load(trace.model_source) if trace.model_source else None
    assert model is not None
    return cpu_has_vnni() or not any(can_saturate(_case(node, inputs)) for node, _, inputs in
                                     integer_events(trace, model))


def judge_saturated(name: str, path: Path, feeds: dict, trace: explorer.Trace, want: dict) -> None:
    """Where onnxruntime's u8s8 kernel saturates: compare must explain every difference by it (explorer follows
    the spec), or, for the LSTM (a single node), onnxruntime's outputs are the saturated reference's."""
    if name == "lstm_quantize_dynamic.onnx":
        [(node, _, inputs)] = integer_events(trace, onnx.load(str(path)))
        saturated = exact_outputs(_case(node, inputs), saturate=True)
        for key, value in zip(node.output, saturated):
            np.testing.assert_allclose(want[key], value, rtol=1e-5, atol=1e-5, err_msg=f"{name}: {key} saturated")
        return
    result = explorer.compare(trace, "onnxruntime", model=explorer.load(str(path)))
    assert result.saturation is not None and result.saturation.complete, "\n".join(result.lines())
    assert not result.differs and result.first is not None and result.first.saturated


@pytest.mark.parametrize("name", sorted(QUANTIZED))
def test_integer_nodes_equal_exact_integer_arithmetic(name):
    """Every integer-product node of the run, recomputed from its recorded inputs by the spec-written reference."""
    path, feeds = MODELS[name]
    model = onnx.load(str(path))
    trace = explorer.run(str(path), feeds)
    found = integer_events(trace, model)
    assert found, f"{name} runs no integer-product node"
    for node, event, inputs in found:
        case = _case(node, inputs)
        for key, want in zip(node.output, exact_outputs(case)):
            got = event.outputs[key]
            assert got.dtype == np.asarray(want).dtype, f"{name}: {node.name} {key}"
            if got.dtype.kind in "iu":
                np.testing.assert_array_equal(got, want, err_msg=f"{name}: {node.name} {key}")
            else:
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{name}: {node.name} {key}")


def test_the_quantized_lstms_gates_are_recorded():
    path, feeds = MODELS["lstm_quantize_dynamic.onnx"]
    trace = explorer.run(str(path), feeds)
    [node] = [n.path for n in explorer.load(str(path)).nodes() if n.op_type == "DynamicQuantizeLSTM"]
    gates = trace.gates(node)
    assert gates["H"].shape == (5, 2, 2, 8)
    np.testing.assert_array_equal(gates["H"], trace.outputs["y"])
