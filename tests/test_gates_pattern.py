"""Gates: units selected by pattern (on through a time range, as LSTMVis selects them) and saturation per unit as
left/right fractions, judged on hand-made series; and the Gates page's controls through AppTest."""
from __future__ import annotations

import numpy as np
from app_support import start

from explorer.ui import state
from explorer.views import gates

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


def test_the_gates_page_picks_units_by_pattern():
    at = start("gru_pytorch_batch_first")
    at.switch_page("explorer/ui/pages/gates.py").run()
    path = at.session_state[state.W_RNN]
    at.toggle(key=state.keyed(state.W_RNN_PATTERN, path)).set_value(True).run()
    gate = at.selectbox(key=state.keyed("w_rnn_gate", path)).value
    at.slider(key=state.keyed(state.W_RNN_THRESHOLD, path, gate)).set_value(0.0).run()  # a sigmoid gate is never below 0
    assert not at.exception
    captions = "\n".join(c.value for c in at.caption)
    assert "5 of 5 units stay ≥ 0 from step 0 to 5" in captions
    [table] = [d.value for d in at.dataframe if "left saturated (< 0.1)" in d.value.columns]
    assert set(table["gate"]) >= {"z", "r"}
    assert ((table["left saturated (< 0.1)"] >= 0) & (table["right saturated (> 0.9)"] <= 1)).all()
