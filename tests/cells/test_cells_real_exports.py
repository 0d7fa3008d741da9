"""Recurrent cells in real exports (tests/models/keras_exports: tf2onnx on Keras 3; tests/models/torch_cells:
TorchScript and dynamo): each recurrent layer is found once, in the form the exporter wrote it, and its gates
are the framework's own at every step (the reference files hold them, computed by the recipe from the
framework's equations and checked there against the framework's outputs); the framework's equations
recomputed by explorer agree; loops that are no cell are not called one."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.cells import recurrent_cells
from explorer.compare.cell_check import check_cell

MODELS = Path(__file__).parents[1] / "models"
FOLDERS = ("keras_exports", "torch_cells")
EXPORTS = sorted(p for folder in FOLDERS for p in (MODELS / folder).glob("*.onnx")
                 if (p.parent / "reference" / f"{p.stem}.npz").exists())
# model -> (kind, form, directions) of each recurrent layer, in the order of the reference's layers
EXPECTED = {
    "keras_gru": [("GRU", "loop", 1)], "keras_gru_opset17": [("GRU", "loop", 1)],
    "keras_gru_reset_before": [("GRU", "loop", 1)], "keras_gru_hard_sigmoid": [("GRU", "loop", 1)],
    "keras_simple_rnn": [("RNN", "loop", 1)], "keras_lstm_masking": [("LSTM", "loop", 1)],
    "keras_embedding_bigru": [("GRU", "loop", 2)], "keras_convlstm2d": [("LSTM", "loop", 1)],
    "keras_lstm": [("LSTM", "op", 1)], "keras_lstm_fp16": [("LSTM", "op", 1)],
    "keras_lstm_stacked": [("LSTM", "op", 1), ("LSTM", "op", 1)], "keras_bilstm": [("LSTM", "op", 2)],
    "keras_time_distributed": [], "tf_while_doubling": [], "tf_while_cumprod": [],
    "ts_grucell_loop": [("GRU", "loop", 1)], "ts_lstmcell_loop": [("LSTM", "loop", 1)],
    "ts_rnncell_loop": [("RNN", "loop", 1)], "dynamo_scan_gru": [("GRU", "scan", 1)],
    "dynamo_scan_lstm": [("LSTM", "scan", 1)], "dynamo_scan_rnn": [("RNN", "scan", 1)],
    "dynamo_grucell_loop": [("GRU", "unrolled", 1)], "dynamo_rnn": [("RNN", "unrolled", 1)],
    "dynamo_rnn_2layer_bidirectional": [("RNN", "unrolled", 2), ("RNN", "unrolled", 2)],
    "dynamo_gru": [("GRU", "op", 1)], "dynamo_lstm": [("LSTM", "op", 1)],
    "dynamo_lstm_2layer_bidirectional": [("LSTM", "op", 2), ("LSTM", "op", 2)],
}


def _reference(path: Path) -> dict[str, np.ndarray]:
    with np.load(path.parent / "reference" / f"{path.stem}.npz") as data:
        return dict(data)



@pytest.fixture(scope="module", params=EXPORTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def export(request):
    path = request.param
    model = explorer.load(path)
    reference = _reference(path)
    feeds = {spec.name: reference[f"inputs/{spec.name}"] for spec in model.inputs}
    return path, model, reference, explorer.run(model, feeds)


def test_there_are_exports_to_check():
    if not (MODELS / "keras_exports").exists():
        pytest.skip("tests/models/keras_exports is not in this checkout")
    assert {p.stem for p in EXPORTS} >= set(EXPECTED)


def test_each_recurrent_layer_is_found_once_in_its_form(export):
    path, model, _, _ = export
    found = [(c.kind, c.form, c.num_directions) for c in recurrent_cells(model)]
    assert found == EXPECTED[path.stem]


def test_gates_are_the_frameworks_own_at_every_step(export):
    path, model, reference, trace = export
    layers = sorted({"/".join(k.split("/")[1:-1]) for k in reference if k.startswith("gates/")})
    cells = recurrent_cells(model)
    assert len(cells) == len(layers), (path.stem, [c.path for c in cells], layers)
    for layer, cell in zip(layers, cells):
        gates = trace.gates(cell.path)
        letters = [k.split("/")[-1] for k in reference if k.startswith(f"gates/{layer}/")]
        assert set(letters) <= set(gates), (layer, letters)
        for letter in letters:
            expected = reference[f"gates/{layer}/{letter}"]
            if letter == "mask":
                np.testing.assert_array_equal(gates["mask"], expected)
                continue
            tolerance = 1e-3 if "fp16" in path.stem else 1e-5
            np.testing.assert_array_equal(np.isnan(gates[letter]), np.isnan(expected), err_msg=letter)
            np.testing.assert_allclose(gates[letter], expected, atol=tolerance, err_msg=f"{layer}/{letter}")


def test_framework_equations_agree_with_the_export(export):
    path, model, reference, trace = export
    for cell in recurrent_cells(model):
        if cell.form == "op":
            continue
        check = check_cell(model, trace, cell.path)
        if cell.conv or cell.operator:
            assert check.notes and check.divergence is None  # said why it was not recomputed
            continue
        assert check.notes == [] and check.divergence is None, (path.stem, check.notes, check.divergence)
        with_weights = check_cell(model, trace, cell.path, reference=reference)
        if with_weights.weights_from == "the Keras layer's weights":
            assert with_weights.divergence is None


H0_EXPORTS = sorted((MODELS / "torch_cells_h0").glob("*.onnx"))


@pytest.mark.parametrize("path", H0_EXPORTS, ids=lambda p: p.stem)
def test_unrolled_cell_loops_from_a_given_state(path):
    """dynamo's unrolled loops over LSTMCell, RNNCell (relu) and GRUCell from an h0 the model takes: one cell
    each, its H PyTorch's own output at every step, PyTorch's equations from that h0 agreeing."""
    model = explorer.load(path)
    with np.load(path.parent / "reference" / f"{path.stem}.npz") as data:
        reference = dict(data)
    trace = explorer.run(model, {"x": reference["x"], "h0": reference["h0"]})
    (cell,) = recurrent_cells(model)
    kind = {"lstmcell": "LSTM", "rnncell": "RNN", "grucell": "GRU"}[path.stem.split("_")[1]]
    assert (cell.kind, cell.form) == (kind, "unrolled")
    np.testing.assert_allclose(trace.gates(cell.path)["H"][:, 0].transpose(1, 0, 2), reference["y"], atol=1e-5)
    check = check_cell(model, trace, cell.path)
    assert check.notes == [] and check.divergence is None
