"""Recurrent cells inside models that do other work, from real torch.onnx exports (tests/models/
torch_cells_in_context, recipe export_models.py): RAFT's ConvGRU unrolled over refinement iterations (its gates
convolutions over [h, x], its update gate weighing the candidate), torchaudio's RNN-T predictor (two
layer-normalized LSTM layers unrolled per time step) and a greedy decoder whose GRU cell is written out inside
the decoding Loop beside the argmax and the end test (its input the embedding of the token fed back). Each is
found with every step, and its recorded gates equal the module's own equations, computed in float64 by the
recipe from PyTorch's parameters."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import explorer
from explorer.compare import compare
from explorer.compare.cell_check import check_cell

FOLDER = Path(__file__).parents[1] / "models" / "torch_cells_in_context"

# file -> [(kind, form, steps, reference name of its gates)] in model order
EXPECTED = {
    "ts_raft_convgru": [("GRU", "unrolled", 3, "gru")],
    "dynamo_raft_convgru": [("GRU", "unrolled", 3, "gru")],
    "ts_rnnt_predictor": [("LSTM", "unrolled", 4, "lstm_layers.0"), ("LSTM", "unrolled", 4, "lstm_layers.1")],
    "dynamo_rnnt_predictor": [("LSTM", "unrolled", 4, "lstm_layers.0"), ("LSTM", "unrolled", 4, "lstm_layers.1")],
    "ts_greedy_gru_decoder": [("GRU", "loop", 6, "cell")],
}


def _load(name: str) -> tuple[explorer.Model, np.lib.npyio.NpzFile, dict[str, np.ndarray]]:
    reference = np.load(FOLDER / "reference" / f"{name}.npz")
    feeds = {k.removeprefix("inputs/"): reference[k] for k in reference.files if k.startswith("inputs/")}
    return explorer.load(FOLDER / f"{name}.onnx"), reference, feeds


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_cell_is_found_with_its_gates_as_the_module_computes_them(name):
    model, reference, feeds = _load(name)
    cells = explorer.recurrent_cells(model)
    assert [(c.kind, c.form) for c in cells] == [(k, f) for k, f, _, _ in EXPECTED[name]]
    trace = explorer.run(model, feeds)
    for cell, (kind, _, steps, stored) in zip(cells, EXPECTED[name]):
        gates = trace.gates(cell.path)
        letters = "zrhH" if kind == "GRU" else "iofcCH"
        for letter in letters:
            want = reference[f"gates/{stored}/{letter}"]
            assert gates[letter].shape[0] == steps
            np.testing.assert_allclose(gates[letter], want.reshape(gates[letter].shape), atol=2e-6,
                                       err_msg=f"{cell.path} gate {letter}")


def test_the_convgru_is_a_conv_cell_resetting_before_its_product():
    model, _, _ = _load("ts_raft_convgru")
    (cell,) = explorer.recurrent_cells(model)
    assert cell.conv and cell.reset_after is False and cell.hidden_size == 6 * 5 * 5  # positions x channels


@pytest.mark.parametrize("name", ["ts_rnnt_predictor", "dynamo_rnnt_predictor"])
def test_the_layer_normalized_lstm_is_not_held_to_equations_without_its_norms(name):
    model, _, feeds = _load(name)
    trace = explorer.run(model, feeds)
    for cell in explorer.recurrent_cells(model):
        assert cell.normalized and cell.hidden_size == 5
        check = check_cell(model, trace, cell.path)
        assert check.divergence is None and any("layer-normalized" in n for n in check.notes), check.notes


def test_the_decoder_cell_follows_pytorchs_equations_with_the_fed_back_embedding_as_input():
    model, _, feeds = _load("ts_greedy_gru_decoder")
    (cell,) = explorer.recurrent_cells(model)
    assert cell.framework == "PyTorch" and cell.hidden_size == 6 and cell.inputs[0].node.endswith("/embedding/Gather")
    trace = explorer.run(model, feeds)
    check = check_cell(model, trace, cell.path)
    assert check.theirs and check.divergence is None and check.against == "PyTorch", check.notes


def _planted_decoder(unit: int) -> onnx.ModelProto:
    """The decoder with one element of its recurrent bias's z block changed (PyTorch's gate order r, z, n)."""
    proto = onnx.load(FOLDER / "ts_greedy_gru_decoder.onnx")
    bias = next(t for t in proto.graph.initializer if t.name == "cell.bias_hh")
    values = onnx.numpy_helper.to_array(bias).copy()
    values[6 + unit] += 0.5
    bias.CopyFrom(onnx.numpy_helper.from_array(values, bias.name))
    return proto


def test_a_planted_bias_in_the_decoder_cell_is_found_at_gate_z_of_the_first_step():
    clean, _, feeds = _load("ts_greedy_gru_decoder")
    result = compare(clean, _planted_decoder(unit=2), feeds)
    assert result.differs
    departure = result.gates[0]
    assert (departure.gate, departure.step, departure.unit) == ("z", 0, 2), departure.describe()
