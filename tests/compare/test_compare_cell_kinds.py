"""A cell recognized as a "recurrence" (a state updated through a learned product of itself, here an RNN step
whose update goes through an If on the iteration number) compared with the same cell recognized as an RNN: by
their carried state, in compare and in sweeps, never a foreign error."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import explorer
from explorer.compare import compare
from explorer.compare.gate_departures import first_departure

STEPS, BATCH, INPUT, HIDDEN = 5, 2, 3, 4


def _weights(seed: int = 0) -> dict[str, np.ndarray]:
    r = np.random.default_rng(seed)
    return {"W": r.normal(0, 0.5, (INPUT, HIDDEN)).astype(np.float32),
            "R": r.normal(0, 0.5, (HIDDEN, HIDDEN)).astype(np.float32),
            "b": r.normal(0, 0.1, (HIDDEN,)).astype(np.float32)}


def rnn_loop(through_if: bool, scale_at: int | None = None, seed: int = 0) -> onnx.ModelProto:
    """H_t = tanh(x_t W + H_t-1 R + b) over a Loop. With `through_if`, the body writes H through an If on the
    iteration number (both branches the same update, or with `scale_at` the then branch doubles the
    pre-activation at that iteration): explorer sees a "recurrence" there and an RNN without the If."""
    w = _weights(seed)
    pre = [h.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
           h.make_node("MatMul", ["x_t", "W"], ["xw"]),
           h.make_node("MatMul", ["h_in", "R"], ["hr"]),
           h.make_node("Add", ["xw", "hr"], ["s"]),
           h.make_node("Add", ["s", "b"], ["a"])]
    if through_if:
        at = -1 if scale_at is None else scale_at
        then = h.make_graph([h.make_node("Mul", ["a", "two"], ["a2"]), h.make_node("Tanh", ["a2"], ["h_then"])],
                            "then", [], [h.make_tensor_value_info("h_then", T.FLOAT, None)],
                            [nh.from_array(np.array(2.0 if scale_at is not None else 1.0, np.float32), "two")])
        other = h.make_graph([h.make_node("Tanh", ["a"], ["h_else"])], "else", [],
                             [h.make_tensor_value_info("h_else", T.FLOAT, None)])
        update = [h.make_node("Equal", ["i", "at"], ["is_at"]),
                  h.make_node("If", ["is_at"], ["h_out"], then_branch=then, else_branch=other)]
        consts = [nh.from_array(np.array(at, np.int64), "at")]
    else:
        update, consts = [h.make_node("Tanh", ["a"], ["h_out"])], []
    body = h.make_graph(
        [*pre, *update, h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Identity", ["h_out"], ["h_scan"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("h_in", T.FLOAT, [BATCH, HIDDEN])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("h_out", T.FLOAT, [BATCH, HIDDEN]),
         h.make_tensor_value_info("h_scan", T.FLOAT, [BATCH, HIDDEN])],
        consts)
    graph = h.make_graph(
        [h.make_node("Shape", ["X"], ["shape"]), h.make_node("Gather", ["shape", "zero"], ["steps"], axis=0),
         h.make_node("Loop", ["steps", "", "h0"], ["H", "Y"], body=body)],
        "rnn_loop",
        [h.make_tensor_value_info("X", T.FLOAT, ["T", BATCH, INPUT]),
         h.make_tensor_value_info("h0", T.FLOAT, [BATCH, HIDDEN])],
        [h.make_tensor_value_info("H", T.FLOAT, [BATCH, HIDDEN]),
         h.make_tensor_value_info("Y", T.FLOAT, ["T", BATCH, HIDDEN])],
        [nh.from_array(np.array(0, np.int64), "zero"), *(nh.from_array(v, k) for k, v in w.items())])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def feeds(seed: int = 1) -> dict[str, np.ndarray]:
    r = np.random.default_rng(seed)
    return {"X": r.normal(0, 1, (STEPS, BATCH, INPUT)).astype(np.float32),
            "h0": np.zeros((BATCH, HIDDEN), np.float32)}


def kinds(model: onnx.ModelProto) -> list[str]:
    return [c.kind for c in explorer.recurrent_cells(explorer.load(model))]


def test_the_pair_is_recognized_as_a_recurrence_and_as_an_rnn():
    assert kinds(rnn_loop(through_if=True)) == ["recurrence"]
    assert kinds(rnn_loop(through_if=False)) == ["RNN"]


@pytest.mark.parametrize("a_if", [True, False], ids=["recurrence-vs-RNN", "RNN-vs-recurrence"])
def test_cells_recognized_differently_agree_when_their_states_do(a_if):
    result = compare(rnn_loop(through_if=a_if), rnn_loop(through_if=not a_if), feeds())
    assert not result.differs, result.lines()
    assert any("carried state" in note for note in result.notes), result.notes


@pytest.mark.parametrize("a_if", [True, False], ids=["recurrence-vs-RNN", "RNN-vs-recurrence"])
def test_cells_recognized_differently_part_at_the_planted_step(a_if):
    planted = rnn_loop(through_if=True, scale_at=2)
    a, b = (planted, rnn_loop(through_if=False)) if a_if else (rnn_loop(through_if=False), planted)
    result = compare(a, b, feeds())
    assert result.differs
    departures = result.gates
    assert departures, result.lines()
    assert departures[0].gate == "H" and departures[0].step == 2, departures[0].describe()


def test_a_recurrence_against_itself_is_compared_by_its_state():
    plain, planted = rnn_loop(through_if=True), rnn_loop(through_if=True, scale_at=3)
    result = compare(plain, planted, feeds())
    departure = result.gates[0]
    assert (departure.op_type, departure.gate, departure.step) == ("recurrence", "H", 3)


def test_a_sweep_of_the_pair_finds_the_inputs_where_they_part(sweep_scheduler, tmp_path):
    a, b = tmp_path / "recurrence.onnx", tmp_path / "rnn.onnx"
    onnx.save(rnn_loop(through_if=True, scale_at=3), a)
    onnx.save(rnn_loop(through_if=False), b)
    result = explorer.sweep(a, b, {"T": [2, 3, 4, 6]}, seeds=[0], scheduler=sweep_scheduler)
    assert [r["status"] for r in result.rows] == ["ok"] * 4, result.rows
    assert {r["dims"]["T"]: r["differs"] for r in result.rows} == {2: False, 3: False, 4: True, 6: True}
    assert result.exit_code == 1


def test_first_departure_of_a_recurrence_by_hand():
    ours = {"H": np.zeros((4, 1, 2, 3))}
    theirs = {"H": np.zeros((4, 1, 2, 3))}
    theirs["H"][2, 0, 1, 2] = 1.0
    found = first_departure("recurrence", "loop", (), ours, theirs, [False], "B", 1e-5, 1e-6)
    assert found is not None and (found.step, found.gate, found.batch_item, found.unit) == (2, "H", 1, 2)
