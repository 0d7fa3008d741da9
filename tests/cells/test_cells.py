"""Recurrent cells written as loops and scans: found by their dataflow, their gates gathered per time step as
`Trace.gates` gives them for the operators, judged by Keras's equations in float64 NumPy (tests/support/cell_models.py)
and by onnxruntime's outputs; loops that are not cells are not called cells."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import explorer
from explorer.cells import recurrent_cells
from explorer.compare.cell_check import check_cell
from explorer.reports.rnn_report import rnn_report
from explorer.views.names import shortened
from tests.support.cell_models import keras_loop, keras_reference, unrolled_rnn

TORCH_EXPORTS = Path(__file__).parents[1] / "models" / "torch_exports"

CASES = [(kind, opts) for kind in ("GRU", "LSTM", "RNN") for opts in (
    {}, {"reset_after": False}, {"masked": True}, {"go_backwards": True}, {"scan": True},
    {"scan": True, "masked": True}, {"hard_sigmoid": True}) if kind == "GRU" or "reset_after" not in opts]


def _feeds(masked: bool) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    x = np.random.default_rng(1).standard_normal((2, 5, 3)).astype(np.float32)
    if not masked:
        return {"X": x}, None
    mask = np.ones((2, 5), bool)
    mask[1, 3:] = False  # padding at the end
    mask[0, 1] = False  # and a step skipped inside the sequence
    return {"X": x, "M": mask}, mask


@pytest.mark.parametrize("kind,opts", CASES, ids=lambda v: v if isinstance(v, str) else "-".join(v) or "plain")
def test_loop_cell_gates_follow_keras_equations(kind, opts):
    proto, weights = keras_loop(kind, **opts)
    feeds, mask = _feeds(opts.get("masked", False))
    model = explorer.load(proto)
    cells = recurrent_cells(model)
    assert [(c.kind, c.form) for c in cells] == [(kind, "scan" if opts.get("scan") else "loop")]
    cell = cells[0]
    assert cell.path == ("rnn_scan" if opts.get("scan") else "while_loop")
    assert cell.hidden_size == 4 and cell.num_directions == 1 and cell.framework == "Keras"
    assert cell.masked == bool(opts.get("masked"))
    if kind == "GRU":
        assert cell.reset_after == opts.get("reset_after", True)
    if kind != "RNN":
        assert cell.gate_activation == ("HardSigmoid" if opts.get("hard_sigmoid") else "Sigmoid")
        assert cell.weights[0].order == {"GRU": ("z", "r", "h"), "LSTM": ("i", "f", "c", "o")}[kind]
    trace = explorer.run(model, feeds)
    (expected_y,) = ort.InferenceSession(proto.SerializeToString()).run(None, feeds)
    np.testing.assert_allclose(trace.outputs["Y"], expected_y, atol=1e-5)
    gates = trace.gates(cell.path)
    reference = keras_reference(kind, weights, feeds["X"], mask, reset_after=opts.get("reset_after", True),
                                go_backwards=opts.get("go_backwards", False),
                                hard_sigmoid=opts.get("hard_sigmoid", False))
    assert set(gates) == set(reference) | {"mask"}
    for name, expected in reference.items():
        assert gates[name].shape == (5, 1, 2, 4), name
        np.testing.assert_array_equal(np.isnan(gates[name][:, 0]), np.isnan(expected), err_msg=name)
        np.testing.assert_allclose(gates[name][:, 0], expected, atol=1e-5, err_msg=name)
    expected_mask = np.ones((5, 2), bool) if mask is None else mask.T
    np.testing.assert_array_equal(gates["mask"][:, 0], expected_mask)


def test_cell_layout_survives_save_and_load(tmp_path):
    proto, _ = keras_loop("LSTM", masked=True)
    feeds, _ = _feeds(True)
    trace = explorer.run(explorer.load(proto), feeds)
    trace.save(tmp_path / "trace.npz")
    loaded = explorer.Trace.load(tmp_path / "trace.npz")
    assert loaded.cells == trace.cells
    for name, values in trace.gates("while_loop").items():
        np.testing.assert_array_equal(loaded.gates("while_loop")[name], values)


def test_planted_gate_order_is_read_from_the_graph():
    proto, _ = keras_loop("GRU", order="rzh")
    cell = recurrent_cells(explorer.load(proto))[0]
    assert cell.kind == "GRU" and cell.weights[0].order == ("r", "z", "h")


def test_elman_loop_of_a_torchscript_export():
    model = explorer.load(TORCH_EXPORTS / "ts_time_loop.onnx")
    (cell,) = recurrent_cells(model)
    assert (cell.path, cell.kind, cell.form, cell.hidden_size, cell.framework) == ("/Loop", "RNN", "loop", 16,
                                                                                  "PyTorch")
    x = np.random.default_rng(0).standard_normal((2, 5, 3, 4)).astype(np.float32)
    trace = explorer.run(model, {"x": x})
    gates = trace.gates("/Loop")
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in model.proto.graph.initializer}
    h = np.zeros((2, 16))
    for t in range(5):
        a = x[:, t].reshape(2, -1) @ weights["ih.weight"].T + weights["ih.bias"] + h @ weights["hh.weight"].T \
            + weights["hh.bias"]
        h = np.tanh(a)
        np.testing.assert_allclose(gates["a"][t, 0], a, atol=1e-5)
        np.testing.assert_allclose(gates["H"][t, 0], h, atol=1e-5)


def test_a_loop_with_no_input_is_not_a_cell():
    """n steps of h = tanh(W h + c): a state through a learned product of itself, but nothing read or fed back
    as the cell's input."""
    assert recurrent_cells(explorer.load(TORCH_EXPORTS / "dynamo_while_loop.onnx")) == []


@pytest.mark.parametrize(("name", "fed_back"), [("ts_rnn_decoder", "y.9"),
                                                ("ts_greedy_tokens", "/Loop/body//emb/Gather")])
def test_a_decoder_cell_reads_what_the_loop_feeds_back(name, fed_back):
    """A decoder reads no sequence: its RNN cell's input is its own output fed back (h = tanh(W y + U h)), or the
    embedding of the token it chose (h = tanh(W [emb(token), h] + b), one product over both)."""
    (cell,) = recurrent_cells(explorer.load(TORCH_EXPORTS / f"{name}.onnx"))
    assert (cell.kind, cell.form, cell.path, cell.hidden_size) == ("RNN", "loop", "/Loop", 16)
    assert fed_back in (cell.inputs[0].value, cell.inputs[0].node)


def _map_loop() -> onnx.ModelProto:
    """TimeDistributed(Dense): a loop over time steps with no state; and a counter doubling a value."""
    body = helper.make_graph(
        [helper.make_node("Gather", ["X", "i"], ["x_t"], axis=1),
         helper.make_node("MatMul", ["x_t", "W"], ["y_t"]),
         helper.make_node("Mul", ["acc", "two"], ["acc_next"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("acc", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_next", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("y_t", TensorProto.FLOAT, None)])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["T", "", "one"], ["acc", "ys"], body=body)], "map",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4, 3]),
         helper.make_tensor_value_info("T", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("ys", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, [])],
        [onnx.numpy_helper.from_array(np.ones((3, 5), np.float32), "W"),
         onnx.numpy_helper.from_array(np.array(2.0, np.float32), "two"),
         onnx.numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_time_distributed_map_and_counter_are_not_cells():
    assert recurrent_cells(explorer.load(_map_loop())) == []


@pytest.mark.parametrize("kind,opts", [(k, o) for k, o in CASES if k != "RNN" or not o.get("hard_sigmoid")],
                         ids=lambda v: v if isinstance(v, str) else "-".join(v) or "plain")
def test_framework_equations_agree_with_a_faithful_export(kind, opts):
    proto, _ = keras_loop(kind, **opts)
    feeds, _ = _feeds(opts.get("masked", False))
    model = explorer.load(proto)
    check = check_cell(model, explorer.run(model, feeds), recurrent_cells(model)[0].path)
    assert check.against == "Keras" and check.notes == [] and check.divergence is None


@pytest.mark.parametrize("kind,opts,gate", [
    ("GRU", {"order": "rzh"}, "z"), ("GRU", {"order": "rzh", "reset_after": False}, "z"),
    ("LSTM", {"order": "icfo"}, "f"), ("LSTM", {"order": "ifoc", "scan": True}, "c"),
    ("GRU", {"wrong_bias": True}, "h")])
def test_framework_equations_find_a_planted_gate_order_or_bias_split(kind, opts, gate):
    """The graph cuts the fused projection in another order than Keras stores it, or swaps Keras's input and
    recurrent biases (found against the Keras layer's own weights, given as reference values): the first step
    departs, at the gate that is wrong."""
    proto, weights = keras_loop(kind, **opts)
    feeds, _ = _feeds(False)
    model = explorer.load(proto)
    path = recurrent_cells(model)[0].path
    trace = explorer.run(model, feeds)
    reference = {f"gru/{name}": value for name, value in weights.items()}
    assert check_cell(model, trace, path, reference=reference).weights_from == "the Keras layer's weights"
    divergence = check_cell(model, trace, path, reference=reference).divergence
    assert divergence is not None
    assert (divergence.step, divergence.gate, divergence.direction) == (0, gate, 0)
    errors = np.abs(trace.gates(path)[gate][0, 0] - check_cell(model, trace, path).theirs[gate][0, 0])
    assert (divergence.batch_item, divergence.unit) == np.unravel_index(np.argmax(errors > 1e-5 + 1e-4 * np.abs(
        check_cell(model, trace, path).theirs[gate][0, 0])), errors.shape)


def test_report_names_each_gate_block_as_keras_stores_it():
    proto, weights = keras_loop("GRU")
    model = explorer.load(proto)
    trace = explorer.run(model, _feeds(False)[0])
    report = rnn_report(model, "while_loop", trace)
    rows = {(b.onnx, b.where): b.keras for b in report.blocks}
    assert rows[("Wz", "kernel[:, 0:4]")] == "kernel[:, 0:4]"
    assert rows[("Rh", "recurrent_kernel[:, 8:12]")] == "recurrent_kernel[:, 8:12]"
    assert rows[("Rbr", "recurrent_bias[4:8]")] == "bias[1, 4:8]"
    block = next(b for b in report.blocks if b.onnx == "Wr")
    np.testing.assert_array_equal(block.values, weights["kernel"][:, 4:8])
    assert not [f for f in report.findings if f.level == "error"]
    assert any("agree with every recorded gate" in f.message for f in report.findings)


def test_report_flags_a_gate_order_keras_does_not_store():
    proto, _ = keras_loop("GRU", order="rzh")
    model = explorer.load(proto)
    report = rnn_report(model, "while_loop", explorer.run(model, _feeds(False)[0]))
    errors = [f.message for f in report.findings if f.level == "error"]
    assert any("cuts its fused input product as [r, z, h]" in m for m in errors)
    assert any("gate z departs first from Keras, at time step 0" in m for m in errors)
    # the graph's first block is what Keras stores as r: named so
    assert next(b for b in report.blocks if b.where == "kernel[:, 0:4]").keras == "kernel[:, 4:8]"


def test_unrolled_rnn_is_one_bidirectional_cell_with_its_steps_in_time_order():
    proto, w = unrolled_rnn()
    model = explorer.load(proto)
    (cell,) = recurrent_cells(model)
    assert (cell.kind, cell.form, cell.num_directions, cell.hidden_size) == ("RNN", "unrolled", 2, 4)
    assert cell.path.startswith("unrolled:")
    x = np.random.default_rng(2).standard_normal((4, 2, 3)).astype(np.float32)
    gates = explorer.run(model, {"X": x}).gates(cell.path)
    for d, (suffix, steps) in enumerate((("", range(4)), ("_rev", range(3, -1, -1)))):
        h = np.zeros((2, 4))
        for t in steps:
            a = x[t] @ w[f"W{suffix}"] + w[f"b{suffix}"] + h @ w[f"R{suffix}"] + w[f"b_hh{suffix}"]
            h = np.tanh(a)
            np.testing.assert_allclose(gates["a"][t, d], a, atol=1e-5)
            np.testing.assert_allclose(gates["H"][t, d], h, atol=1e-5)


@pytest.mark.parametrize("opts", [{}, {"masked": True}, {"scan": True}, {"go_backwards": True}],
                         ids=lambda o: "-".join(o) or "plain")
def test_compare_aligns_loop_cell_gates_with_onnxruntime_and_another_run(opts):
    proto, _ = keras_loop("GRU", **opts)
    model = explorer.load(proto)
    feeds, _ = _feeds(opts.get("masked", False))
    path = recurrent_cells(model)[0].path
    for other in ("onnxruntime", model):
        result = explorer.compare(model, other, feeds)
        assert any(path in checked for checked in result.gates_checked)
        assert result.gates == []


def test_compare_finds_where_a_loop_cell_departs():
    """B cuts the fused projection in another gate order: its gates depart from A's at the first step."""
    feeds, _ = _feeds(False)
    a, b = (explorer.load(keras_loop("GRU", order=order)[0]) for order in ("zrh", "rzh"))
    (departure,) = explorer.compare(a, b, feeds).gates
    assert (departure.node, departure.step, departure.gate, departure.against) == ("while_loop", 0, "z", "B")


def test_compare_with_the_keras_layers_weights_finds_swapped_biases():
    proto, weights = keras_loop("GRU", wrong_bias=True)
    feeds, _ = _feeds(False)
    reference = {f"gru/{name}": value for name, value in weights.items()}
    (departure,) = explorer.compare(explorer.load(proto), reference, feeds).gates
    assert (departure.step, departure.gate, departure.against) == (0, "h", "Keras")


def test_exporter_names_are_shortened_to_the_part_that_differs():
    names = ["sequential_6_1_gru_2_1_while_placeholder_2:0", "sequential_6_1_gru_2_1_while_placeholder_3:0",
             "sequential_6_1_gru_2_1_while_maximum_iterations:0", "sequential_6_1/gru_2_1/while/Identity_2:0",
             "sequential_6_1/gru_2_1/while/Identity_3:0", "cond:0"]
    assert shortened(names) == {
        names[0]: "placeholder_2", names[1]: "placeholder_3", names[2]: "maximum_iterations",
        names[3]: "Identity_2", names[4]: "Identity_3", "cond:0": "cond:0"}
    # what two names share at both ends goes, what tells them apart stays
    assert shortened(["a_long_prefix_of_it/x_1:0", "another_long_prefix/x_1:0"]) == {
        "a_long_prefix_of_it/x_1:0": "a_long_prefix_of_it", "another_long_prefix/x_1:0": "another_long_prefix"}
