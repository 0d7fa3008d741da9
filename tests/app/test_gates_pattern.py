"""Gates: units selected by pattern (on through a time range, as LSTMVis selects them) and saturation per unit as
left/right fractions, judged on hand-made series; and the Gates page's controls through AppTest."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import numpy_helper

import explorer
from explorer.ui import state
from explorer.views import gates
from tests.support.apptest import array, figures, interactive, record_tables, start
from tests.support.rnn_reference import reference

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"

NAN = np.nan


def test_saturation_sides_count_time_below_10_and_above_90_percent():
    values = np.array([[0.05, 0.5, 0.95], [0.02, 0.95, 0.99], [0.5, 0.97, 0.5], [NAN, NAN, NAN]])
    left, right = gates.saturation_sides(values, (0.0, 1.0))
    np.testing.assert_allclose(left, [2 / 3, 0, 0])
    np.testing.assert_allclose(right, [0, 2 / 3, 2 / 3])
    left, right = gates.saturation_sides(np.array([[-0.85, 0.85]]), (-1.0, 1.0))  # tanh: 10 % is -0.8
    np.testing.assert_allclose(left, [1, 0])
    np.testing.assert_allclose(right, [0, 1])


def test_units_on_through_a_range_best_first():
    values = np.array([  # 5 steps x 4 units
        [0.9, 0.9, 0.1, 0.9],
        [0.9, 0.1, 0.8, 0.9],
        [0.9, 0.8, 0.8, 0.9],
        [0.1, 0.1, 0.8, 0.9],
        [NAN, NAN, NAN, NAN]])
    # on at >= 0.7 through steps 2..3: units 2 and 3; unit 2 is off outside the range more often (1 of 2 valid
    # steps outside vs 0 of 2), so it leads
    assert gates.units_on(values, 2, 3, 0.7) == [2, 3]
    assert gates.units_on(values, 0, 0, 0.7) == [1, 0, 3]  # off outside: 2 of 3 steps, 1 of 3, none
    assert gates.units_on(values, 4, 4, 0.7) == []  # only padded steps in range


def _reference_gates(sample: str) -> dict[str, np.ndarray]:
    """The gates of the sample's GRU on the app's default inputs (seed 0), batch item 0, forward, by the spec's
    equations written apart from explorer (tests/support/rnn_reference.py): name -> [step, unit]."""
    model = explorer.load(SAMPLES / f"{sample}.onnx")
    feeds = model.example_inputs(seed=0)
    weights = {t.name: numpy_helper.to_array(t) for t in model.proto.graph.initializer}
    _, _, _, recorded = reference("GRU", feeds["input"].transpose(1, 0, 2), weights["W"], weights["R"], weights["B"],
                                  initial_h=feeds["h0"], linear_before_reset=1)
    return {name: values[:, 0, 0, :] for name, values in recorded.items() if name != "mask"}


def test_the_gates_page_picks_units_by_pattern():
    expected = _reference_gates("gru_pytorch_batch_first")
    at = start("gru_pytorch_batch_first")
    at.switch_page("explorer/ui/pages/gates.py").run()
    path = at.session_state[state.W_RNN]
    at.toggle(key=state.keyed(state.W_RNN_PATTERN, path)).set_value(True).run()
    gate = at.selectbox(key=state.keyed("w_rnn_gate", path)).value
    # a threshold in the widest gap between the units' lowest values over the 6 steps: it splits the units
    lowest = expected[gate].min(axis=0)
    ranked = np.sort(lowest)
    gap = int(np.argmax(np.diff(ranked)))
    threshold = round(float(ranked[gap] + ranked[gap + 1]) / 2, 2)
    assert ranked[gap] < threshold - 0.01 and threshold + 0.01 < ranked[gap + 1]
    picked = [unit for unit in range(5) if lowest[unit] >= threshold]  # on at every step; none off outside
    assert 0 < len(picked) < 5
    at.slider(key=state.keyed(state.W_RNN_THRESHOLD, path, gate)).set_value(threshold).run()
    assert not at.exception
    captions = "\n".join(c.value for c in at.caption)
    assert f"{len(picked)} of 5 units stay ≥ {threshold:.3g} from step 0 to 5" in captions
    [chosen] = [f for f in figures(interactive(at)) if f.layout.title.text == f"{gate}: chosen units"]
    assert [trace.name for trace in chosen.data] == [f"unit {unit}" for unit in picked]
    for trace, unit in zip(chosen.data, picked):
        np.testing.assert_allclose(array(trace.y), expected[gate][:, unit], rtol=1e-5, atol=1e-6)


def test_the_gates_page_tells_each_gates_saturated_share():
    expected = _reference_gates("gru_pytorch_batch_first")
    at = start("gru_pytorch_batch_first")
    at.switch_page("explorer/ui/pages/gates.py").run()
    [table] = [d for d in record_tables(at) if "left saturated (< 0.1)" in d.columns]
    assert list(table["gate"]) == ["z", "r", "h"]
    for gate, low in (("z", 0.0), ("r", 0.0), ("h", -1.0)):  # sigmoid in [0, 1], tanh in [-1, 1]
        share = (expected[gate] - low) / (1.0 - low)
        assert not np.isclose(share, 0.1, atol=1e-4).any() and not np.isclose(share, 0.9, atol=1e-4).any()
        row = table.set_index("gate").loc[gate]
        assert row["left saturated (< 0.1)"] == pytest.approx(float((share < 0.1).mean()), rel=1e-5)  # 6 digits shown
        assert row["right saturated (> 0.9)"] == pytest.approx(float((share > 0.9).mean()), rel=1e-5)
