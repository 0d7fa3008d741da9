"""One verdict, first: `explorer compare` prints one sentence (agree, and within what; or where the sides part,
with the diagnosis that explains it; or what was compared when nothing was) and writes it as JSON with --json.
A float16 copy of a real LSTM export (tests/models/torch_exports/fp16_models.py) agrees with onnxruntime, and
with its float32 original within float16 rounding."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx

from explorer.cli import main
from tests.support.compare_models import exported_rnn, rnn_feeds, torch_parameters

EXPORTS = Path(__file__).resolve().parents[1] / "models" / "torch_exports"
HALF, FULL = str(EXPORTS / "ts_lstm_2layer_fp16.onnx"), str(EXPORTS / "ts_lstm_2layer.onnx")


def _feeds(tmp_path):
    path = tmp_path / "feeds.npz"
    np.savez(path, x=np.random.default_rng(0).standard_normal((2, 5, 3)).astype(np.float32))
    return str(path)


def _run(capsys, *args):
    code = main(["compare", *args])
    return code, capsys.readouterr().out.splitlines()


def test_a_float16_lstm_agrees_with_onnxruntime(tmp_path, capsys):
    code, out = _run(capsys, HALF, "--ort", "--inputs", _feeds(tmp_path))
    assert code == 0 and out[0].endswith(".") and " and onnxruntime agree" in out[0]


def test_a_float16_lstm_agrees_with_its_float32_original_within_float16_rounding(tmp_path, capsys):
    feeds, report = _feeds(tmp_path), tmp_path / "verdict.json"
    code, out = _run(capsys, HALF, FULL, "--inputs", feeds, "--json", str(report))
    assert code == 0, out
    assert "agree within float16 rounding" in out[0]
    data = json.loads(report.read_text())
    assert data["agree"] is True and data["first"] is None and data["aligned"] > 30
    assert data["within"] == ["float16 rounding"] and data["diagnosis"] == []
    code, out = _run(capsys, HALF, FULL, "--inputs", feeds, "--rtol", "1e-4", "--atol", "1e-5")
    assert code == 1 and "part at node '/lstm/Transpose' (Transpose)" in out[0]  # float32's tolerance: rounding


def test_an_exporter_bug_is_one_verdict_with_its_diagnosis(tmp_path, capsys):
    """linear_before_reset=0 in a GRU PyTorch exported, against PyTorch's equations: no value aligns, gate h
    departs at step 0, and the recurrent node's finding is part of the verdict sentence and the JSON."""
    model = exported_rnn("GRU", torch_parameters("GRU"), linear_before_reset=0)
    model.producer_name = "pytorch"
    onnx.save(model, tmp_path / "gru.onnx")
    np.savez(tmp_path / "feeds.npz", **rnn_feeds())
    report = tmp_path / "verdict.json"
    code, out = _run(capsys, str(tmp_path / "gru.onnx"), "pytorch", "--inputs", str(tmp_path / "feeds.npz"),
                     "--json", str(report))
    assert code == 1
    assert "part at node 'rnn' (GRU), gate h at time step 0 (direction 0)" in out[0]
    assert "a known exporter bug" in out[0]
    assert not any(line.startswith("first divergence: none") for line in out)
    data = json.loads(report.read_text())
    assert data["agree"] is False and data["aligned"] == 0
    assert (data["first"]["onnx_node"], data["first"]["gate"], data["first"]["step"]) == ("rnn", "h", 0)
    assert any("linear_before_reset=0" in d for d in data["diagnosis"])


def test_nothing_aligned_says_what_was_compared(tmp_path, capsys):
    graph = onnx.helper.make_graph([onnx.helper.make_node("Abs", ["x"], ["y"])], "g",
                                   [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3])],
                                   [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [3])])
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)]), tmp_path / "m.onnx")
    np.savez(tmp_path / "other.npz", unrelated=np.zeros(3, np.float32))
    code, out = _run(capsys, str(tmp_path / "m.onnx"), str(tmp_path / "other.npz"))
    assert out[0] == "Nothing compared: no value aligned (A has 1, B 0)."
    assert not any(line.startswith("first divergence: none") for line in out)


def _projected_lstm(path):
    """An LSTM as an exporter that drops PyTorch's proj_size writes it: hidden_size 8, but R and initial_h 3
    units wide (the projected state)."""
    hidden, proj, width = 8, 3, 4
    rng = np.random.default_rng(0)
    weights = [onnx.numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
               for name, shape in (("W", (1, 4 * hidden, width)), ("R", (1, 4 * hidden, proj)),
                                   ("B", (1, 8 * hidden)))]
    info = onnx.helper.make_tensor_value_info
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("LSTM", ["X", "W", "R", "B", "", "h0", "c0"], ["Y", "Y_h", "Y_c"], name="lstm",
                               hidden_size=hidden)], "g",
        [info("X", onnx.TensorProto.FLOAT, [5, 2, width]), info("h0", onnx.TensorProto.FLOAT, [1, 2, proj]),
         info("c0", onnx.TensorProto.FLOAT, [1, 2, hidden])], [info("Y", onnx.TensorProto.FLOAT, None)], weights)
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])
    model.producer_name = "pytorch"
    onnx.save(model, path)
    return {"X": rng.standard_normal((5, 2, width)).astype(np.float32), "h0": np.zeros((1, 2, proj), np.float32),
            "c0": np.zeros((1, 2, hidden), np.float32)}


def test_a_dropped_projection_is_diagnosed_not_a_foreign_error(tmp_path, capsys):
    """Against PyTorch's equations: no NumPy broadcasting error, no verdict, and the node's diagnosis (was
    "operands could not be broadcast together with shapes (2,3) (2,8)")."""
    feeds = _projected_lstm(tmp_path / "lstm.onnx")
    np.savez(tmp_path / "feeds.npz", **feeds)
    report = tmp_path / "verdict.json"
    code, out = _run(capsys, str(tmp_path / "lstm.onnx"), "pytorch", "--inputs", str(tmp_path / "feeds.npz"),
                     "--json", str(report))
    assert code == 2 and out[0].startswith("No verdict: a side did not finish")
    assert "PyTorch's LSTM with proj_size=3 projects h from 8 to 3 units" in out[0]
    data = json.loads(report.read_text())
    assert data["agree"] is None and "at any input size" in data["diagnosis"][0]


def test_a_size_hint_only_where_other_sizes_would_run(tmp_path):
    import explorer
    from explorer.views.hints import failure_hint

    _projected_lstm(tmp_path / "lstm.onnx")
    hint = failure_hint(explorer.load(tmp_path / "lstm.onnx"), "lstm")
    assert hint is not None and "other sizes" not in hint and "proj\\_size=3" in hint
