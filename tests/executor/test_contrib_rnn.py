"""onnxruntime's DynamicQuantizeLSTM runs on the LSTM cell loops: its gates are recorded as LSTM's are, the Gates
page lists it and the RNN report reads its quantized weights (its values against onnxruntime:
tests/differential/cases_contrib_rnn.py)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

import explorer
from explorer.reports.rnn_report import rnn_report
from explorer.spec.rnn import dequantized_weights
from explorer.views import gates
from tests.differential.cases_contrib_rnn import BATCH, HIDDEN, SEQ, _lstm
from tests.differential.gen import rng
from tests.differential.harness import build_model


def _model() -> tuple[onnx.ModelProto, dict, list]:
    case = _lstm(rng("DynamicQuantizeLSTM gates"), "bidirectional", np.int8, per_column=True, states=True)
    model, feeds = build_model([case])
    graph = model.graph
    for name in ("c0_i1", "c0_i2", "c0_i8", "c0_i9", "c0_i10", "c0_i11"):  # the weights as initializers
        index = next(i for i, v in enumerate(graph.input) if v.name == name)
        graph.initializer.append(onnx.numpy_helper.from_array(feeds.pop(name), name))
        del graph.input[index]
    graph.node[0].name = "lstm"
    return model, feeds, case.inputs


def test_its_gates_are_recorded_like_an_lstms():
    model, feeds, _ = _model()
    trace = explorer.run(model, feeds)
    recorded = trace.gates("lstm")
    assert set(recorded) == {"i", "o", "f", "c", "C", "H", "mask"}
    assert recorded["H"].shape == (SEQ, 2, BATCH, HIDDEN)
    y, y_h, y_c = (trace.outputs[f"c0_o{j}"] for j in range(3))
    np.testing.assert_array_equal(recorded["H"], y)
    np.testing.assert_array_equal(recorded["C"][-1, 0], y_c[0])  # forward: the last step's cell state
    np.testing.assert_array_equal(recorded["C"][0, 1], y_c[1])  # reverse: the first position's
    for gate in "iof":
        assert ((recorded[gate] > 0) & (recorded[gate] < 1)).all()


def test_the_gates_view_and_the_rnn_report_read_it():
    model, feeds, inputs = _model()
    loaded = explorer.load(model)
    assert gates.recurrent_nodes(loaded) == {"lstm": "DynamicQuantizeLSTM · lstm"}
    assert gates.gate_bounds(loaded, "lstm", 1)["i"] == (0.0, 1.0)
    report = rnn_report(loaded, "lstm")
    assert report.hidden_size == HIDDEN and report.input_size == inputs[0].shape[2]
    w = dequantized_weights(inputs[1], inputs[8], inputs[9])
    block = next(b for b in report.blocks if b.tensor == "W" and b.gate == "f" and b.direction == 1)
    np.testing.assert_array_equal(block.values, w[1, 2 * HIDDEN:3 * HIDDEN])
    assert "dequantized" in report.findings[0].message


@pytest.mark.usefixtures("fresh_app")
def test_the_gates_page_shows_it():
    from explorer.ui import state
    from tests.support.apptest import assert_clean, start, upload

    model, _, _ = _model()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "T"
    at = upload(start(), "quantized_lstm.onnx", model.SerializeToString())
    at.switch_page("explorer/ui/pages/gates.py").run()
    assert_clean(at)
    assert at.session_state[state.W_RNN] == "lstm"
    captions = "\n".join(c.value for c in at.caption)
    assert "gates i, o, f, c" in captions and f"hidden size {HIDDEN}" in captions


