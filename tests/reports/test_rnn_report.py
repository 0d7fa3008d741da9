"""The exported-RNN report: PyTorch/Keras names checked by running PyTorch's documented equations on the
parameters they name, and the warnings each exporter pitfall raises."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import explorer
from explorer.reports.rnn_report import rnn_report, rnn_reports

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT.parent / "shared" / "models"
HIDDEN, INPUT, SEQ, BATCH = 3, 2, 4, 2


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def pytorch_parameters(op: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    blocks = {"GRU": 3, "LSTM": 4}[op]
    shapes = {"weight_ih_l0": (blocks * HIDDEN, INPUT), "weight_hh_l0": (blocks * HIDDEN, HIDDEN),
              "bias_ih_l0": (blocks * HIDDEN,), "bias_hh_l0": (blocks * HIDDEN,)}
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}


def pytorch_forward(op: str, p: dict, x: np.ndarray) -> np.ndarray:
    """PyTorch's documented GRU/LSTM equations, gates stacked [r, z, n] / [i, f, g, o]."""
    h = np.zeros((x.shape[1], HIDDEN))
    c = np.zeros_like(h)
    for xt in x:
        gi = xt @ p["weight_ih_l0"].T + p["bias_ih_l0"]
        gh = h @ p["weight_hh_l0"].T + p["bias_hh_l0"]
        if op == "GRU":
            r = sigmoid(gi[:, :HIDDEN] + gh[:, :HIDDEN])
            z = sigmoid(gi[:, HIDDEN:2 * HIDDEN] + gh[:, HIDDEN:2 * HIDDEN])
            n = np.tanh(gi[:, 2 * HIDDEN:] + r * gh[:, 2 * HIDDEN:])
            h = (1 - z) * n + z * h
        else:
            g = gi + gh
            i, f = sigmoid(g[:, :HIDDEN]), sigmoid(g[:, HIDDEN:2 * HIDDEN])
            cell, o = np.tanh(g[:, 2 * HIDDEN:3 * HIDDEN]), sigmoid(g[:, 3 * HIDDEN:])
            c = f * c + i * cell
            h = o * np.tanh(c)
    return h


def exported(op: str, p: dict, linear_before_reset: int = 1, producer: str = "pytorch",
             **attrs) -> onnx.ModelProto:
    """The node a PyTorch exporter writes: gates reordered to ONNX's [z, r, h] / [i, o, f, c]."""
    order = {"GRU": [1, 0, 2], "LSTM": [0, 3, 1, 2]}[op]

    def reorder(a):
        return np.concatenate([a[k * HIDDEN:(k + 1) * HIDDEN] for k in order])

    weights = {"W": reorder(p["weight_ih_l0"])[None], "R": reorder(p["weight_hh_l0"])[None],
               "B": np.concatenate([reorder(p["bias_ih_l0"]), reorder(p["bias_hh_l0"])])[None]}
    if op == "GRU":
        attrs["linear_before_reset"] = linear_before_reset
    node = helper.make_node(op, ["X", "W", "R", "B"], ["", "Y_h"], name="rnn", hidden_size=HIDDEN, **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [SEQ, BATCH, INPUT])],
        [helper.make_tensor_value_info("Y_h", onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], producer_name=producer)


def named(parameters: dict, name: str) -> np.ndarray:
    """The slice a report name like `weight_ih_l0[3:6] (W_iz)` designates."""
    param, start, stop = re.match(r"(\w+)\[(\d+):(\d+)\]", name).groups()
    return parameters[param][int(start):int(stop)]


@pytest.mark.parametrize("op", ["GRU", "LSTM"])
def test_pytorch_names_designate_the_blocks_and_the_equations_agree(op):
    params = pytorch_parameters(op, np.random.default_rng(0))
    model = explorer.load(exported(op, params))
    x = np.random.default_rng(1).standard_normal((SEQ, BATCH, INPUT)).astype(np.float32)
    trace = explorer.run(model, {"X": x})
    want = pytorch_forward(op, params, x)
    np.testing.assert_allclose(trace.outputs["Y_h"][0], want, rtol=1e-5, atol=1e-6)
    report = rnn_report(model, "rnn")
    assert report.origin == "PyTorch" and report.hidden_size == HIDDEN and report.input_size == INPUT
    assert len(report.blocks) == 4 * len(report.config.cell.gates)  # W, R, Wb, Rb per gate
    for block in report.blocks:
        np.testing.assert_array_equal(block.values, named(params, block.pytorch), err_msg=block.onnx)
    names = {b.onnx: b.pytorch.split(" ")[1] for b in report.blocks}
    if op == "GRU":
        assert names["Wz"] == "(W_iz)" and names["Rh"] == "(W_hn)" and names["Rbr"] == "(b_hr)"
    else:
        assert names["Wo"] == "(W_io)" and names["Rc"] == "(W_hg)" and names["Wbf"] == "(b_if)"


def test_keras_names_designate_the_blocks():
    """Keras keeps kernel [input, 4*hidden], columns [i, f, c, o]; the exporter transposes and reorders."""
    rng = np.random.default_rng(2)
    kernel = rng.standard_normal((INPUT, 4 * HIDDEN)).astype(np.float32)
    order = [0, 3, 1, 2]
    w = np.concatenate([kernel[:, k * HIDDEN:(k + 1) * HIDDEN].T for k in order])[None]
    node = helper.make_node("LSTM", ["X", "W", "R"], ["Y"], name="rnn", hidden_size=HIDDEN)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [SEQ, BATCH, INPUT])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W"),
         numpy_helper.from_array(np.zeros((1, 4 * HIDDEN, HIDDEN), np.float32), "R")])
    model = explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                                            producer_name="tf2onnx"))
    report = rnn_report(model, "rnn")
    assert report.origin == "TensorFlow/Keras"
    for block in (b for b in report.blocks if b.tensor == "W"):
        start, stop = map(int, re.search(r"\[:, (\d+):(\d+)\]", block.keras).groups())
        np.testing.assert_array_equal(block.values, kernel[:, start:stop].T, err_msg=block.onnx)


def warnings_of(model: onnx.ModelProto) -> list[str]:
    return rnn_report(explorer.load(model), "rnn").warnings


def test_pytorch_gru_with_linear_before_reset_0_is_flagged():
    params = pytorch_parameters("GRU", np.random.default_rng(0))
    flagged = warnings_of(exported("GRU", params, linear_before_reset=0))
    assert len(flagged) == 1 and "linear_before_reset=0 in a GRU exported from PyTorch" in flagged[0]
    assert warnings_of(exported("GRU", params, linear_before_reset=1)) == []
    other = rnn_report(explorer.load(exported("GRU", params, linear_before_reset=0, producer="")), "rnn")
    assert other.warnings == [] and any("reset_after=False" in f.message for f in other.findings)


@pytest.mark.parametrize("attrs,fragment", [
    ({"layout": 1}, "onnxruntime's CPU kernels refuse it"),
    ({"clip": 2.5}, "clip=2.5 bounds every gate's pre-activation"),
    ({"activations": ["Sigmoid", "ThresholdedRelu", "Tanh"]}, "ThresholdedRelu take default alpha/beta"),
])
def test_exporter_pitfalls_are_flagged(attrs, fragment):
    params = pytorch_parameters("LSTM", np.random.default_rng(0))
    assert any(fragment in w for w in warnings_of(exported("LSTM", params, **attrs)))


def test_sequence_lens_and_peepholes():
    report = rnn_report(explorer.load(ROOT / "sample_models" / "lstm_bidirectional_ragged.onnx"), "lstm")
    assert any("sequence_lens is given" in w for w in report.warnings)
    assert {b.onnx for b in report.blocks if b.direction == 1} >= {"WBi", "RBo", "WBbf", "RBbc"}
    assert all(b.pytorch.startswith(("weight", "bias")) and "_reverse[" in b.pytorch
               for b in report.blocks if b.direction == 1)


def test_invalid_attributes_become_an_error_finding():
    path = MODELS / "ROCm__AMDMIGraphX" / "test" / "onnx" / "onnx_gru_bi_1.onnx"
    if not path.exists():
        pytest.skip("shared models not present")
    (report,) = rnn_reports(explorer.load(path))
    assert report.config is None and report.findings[0].level == "error"
    assert "attribute 'clip' is INT" in report.findings[0].message


def test_weights_computed_at_run_time_take_values_from_a_trace():
    """PyTorch exports often build W from Slices of a bigger tensor; the values then come from a trace."""
    rng = np.random.default_rng(4)
    big = rng.standard_normal((2, 3 * HIDDEN, INPUT)).astype(np.float32)
    nodes = [helper.make_node("Slice", ["big", "zero", "one", "zero"], ["W"], name="slice"),
             helper.make_node("RNN", ["X", "W", "R"], ["Y"], name="rnn", hidden_size=3 * HIDDEN)]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [SEQ, BATCH, INPUT])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(big, "big"), numpy_helper.from_array(np.array([0]), "zero"),
         numpy_helper.from_array(np.array([1]), "one"),
         numpy_helper.from_array(np.zeros((1, 3 * HIDDEN, 3 * HIDDEN), np.float32), "R")])
    model = explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]))
    static = rnn_report(model, "rnn")
    assert static.blocks[0].values is None
    assert any("computed at run time" in f.message for f in static.findings)
    trace = explorer.run(model, {"X": np.ones((SEQ, BATCH, INPUT), np.float32)})
    np.testing.assert_array_equal(rnn_report(model, "rnn", trace).blocks[0].values, big[0])


def test_a_node_reads_its_weights_from_initializers():
    report = rnn_report(explorer.load(ROOT / "sample_models" / "gru_pytorch_batch_first.onnx"), "gru")
    assert all(b.values is not None for b in report.blocks)


SILERO_16K = MODELS / "snakers4__silero-vad" / "src" / "silero_vad" / "data" / "silero_vad_16k_op15.onnx"


@pytest.mark.skipif(not SILERO_16K.exists(), reason="../shared/models (silero-vad) is absent")
def test_the_lstms_in_both_branches_of_an_if_are_reported():
    reports = rnn_reports(explorer.load(SILERO_16K))
    assert [r.node for r in reports] == ["/model/decoder/If_1/then_branch//model/decoder/rnn/LSTM",
                                         "/model/decoder/If_1/else_branch//model/decoder/rnn_1/LSTM"]
    assert reports[0].origin == "PyTorch" and reports[0].hidden_size == 128
    for report in reports:  # their W and R are computed at run time: the blocks give positions only
        assert [f.message for f in report.findings] == [
            "W is computed at run time: blocks show positions (a trace gives values)",
            "R is computed at run time: blocks show positions (a trace gives values)"]
        assert all(b.values is None for b in report.blocks)


def test_cli_prints_the_report():
    command = [sys.executable, "-m", "explorer", "rnn", "sample_models/lstm_bidirectional_ragged.onnx"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "LSTM 'lstm'" in out and "warning: sequence_lens is given" in out
    assert "RBbc  B[1, 35:40]  PyTorch bias_hh_l0_reverse[10:15] (b_hg)" in out
