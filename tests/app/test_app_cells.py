"""The app on recurrent cells written as loops: the Gates page lists them with their form and draws their gates
(the values Keras's equations give), the exported-RNN report names Keras's weights, and the Loops page says what
the loop is and fills the cell's equations in with an iteration's values."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.cells import recurrent_cells
from explorer.ui import state
from explorer.views import gates
from tests.support.apptest import (
    PAGES,
    array,
    assert_clean,
    chart_titles,
    figures,
    interactive,
    record_tables,
    start,
    text_blocks,
    texts,
    upload,
)
from tests.support.cell_models import keras_loop, keras_reference


def _opened(kind: str, **opts):
    proto, weights = keras_loop(kind, **opts)
    at = upload(start(), f"keras_{kind.lower()}.onnx", proto.SerializeToString())
    assert_clean(at)
    return at, weights


def test_gates_page_shows_a_keras_gru_loop():
    at, weights = _opened("GRU")
    at.switch_page(PAGES["gates"]).run()
    assert_clean(at)
    assert at.selectbox(key=state.W_RNN).value == "while_loop"
    assert "GRU · Keras loop, reset_after=True, hidden 4" in at.selectbox(key=state.W_RNN).format_func("while_loop")
    interactive(at)
    heatmaps = {f.layout.title.text: f.data[0] for f in figures(at) if f.data[0].type == "heatmap"}
    assert set(heatmaps) == {f"{g} [forward, batch 0]" for g in ("z", "r", "h", "H")}
    x = explorer.load(keras_loop("GRU")[0]).example_inputs()["X"]  # the app's first inputs: seed 0
    expected = keras_reference("GRU", weights, x)["z"][:, 0, :]  # [time, unit] of batch item 0
    np.testing.assert_allclose(array(heatmaps["z [forward, batch 0]"].z), expected.T, atol=1e-5)
    [table] = [f for f in record_tables(at) if "Keras" in f.columns]
    assert table.set_index("slice").loc["kernel[:, 0:4]", "Keras"] == "kernel[:, 0:4]"
    assert "agree with every recorded gate" in texts(at)


def test_loops_page_says_which_cell_the_loop_is_and_fills_its_equations():
    at, _ = _opened("LSTM", masked=False)
    at.switch_page(PAGES["loops"]).run()
    assert_clean(at)
    assert "This Loop is an LSTM cell, Keras hidden 4" in texts(at)
    code = "\n".join(text_blocks(at))
    assert "C  = f ⊙ C_prev + i ⊙ c~" in code and "H  = o ⊙ tanh(C)" in code
    assert "// LSTM cell, iteration 0, batch item 0" in code


EXPORTS = Path(__file__).parents[1] / "models"
CELL_EXPORTS = ["keras_exports/keras_lstm_masking.onnx", "keras_exports/keras_convlstm2d.onnx",
                "torch_cells/ts_lstmcell_loop.onnx", "torch_cells/dynamo_rnn_2layer_bidirectional.onnx",
                "torch_cells/dynamo_scan_gru.onnx", "torch_cells_in_context/ts_raft_convgru.onnx",
                "torch_cells_in_context/dynamo_rnnt_predictor.onnx", "torch_cells_in_context/ts_greedy_gru_decoder.onnx"]


@pytest.mark.parametrize("name", CELL_EXPORTS)
def test_gates_and_loops_pages_on_real_exports(name):
    """Every form on both pages: a masked Keras LSTM loop, a ConvLSTM, TorchScript's LSTM operator inside a
    loop, dynamo's unrolled two-layer bidirectional RNN and its scan over a GRU cell; RAFT's ConvGRU, RNN-T's
    layer-normalized LSTMs and a GRU inside a greedy decoder."""
    at = start()
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(EXPORTS / name)).run()
    model = explorer.load(EXPORTS / name)
    cells = recurrent_cells(model)
    at.switch_page(PAGES["gates"]).run()
    assert_clean(at)
    assert list(at.selectbox(key=state.W_RNN).options) == [gates.cell_label(c) for c in cells]
    for cell in cells:
        at.selectbox(key=state.W_RNN).set_value(cell.path).run()
        assert_clean(at)
        titles = chart_titles(at)
        assert "H [forward, batch 0]" in titles, (cell.path, titles)
    if any(c.loops for c in cells):
        at.switch_page(PAGES["loops"]).run()
        assert_clean(at)
        loop = next(c for c in cells if c.loops).loops[0]
        at.selectbox(key="w_loop").set_value(loop).run()
        assert_clean(at)
        assert "cell's equations at iteration 0" in "\n".join(m.value for m in at.markdown)
