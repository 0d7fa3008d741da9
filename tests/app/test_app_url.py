"""Shareable state through AppTest: the address holds the sample or model path, the random inputs' seed and sizes,
the step cursor and the selected node; opening such an address restores them."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from explorer.ui import state
from tests.support.apptest import APP, start, step_to

STEP = "explorer/ui/pages/step.py"
PARITY = "enc/body/inner/body/parity"


def opened(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_the_address_follows_the_state():
    at = start()
    at.selectbox(key=state.W_SAMPLE).set_value("nested_loops").run()
    at.radio(key=state.W_INPUT_MODE).set_value("Random").run()
    at.number_input(key=state.W_SEED).set_value(7).run()
    at.selectbox(key=state.W_NODE_PICK).set_value(PARITY).run()
    at.switch_page(STEP).run()
    step_to(at, 5)
    flat = {key: at.query_params[key] for key in at.query_params}
    flat = {k: v[0] if isinstance(v, list) else v for k, v in flat.items()}  # AppTest keeps lists of values
    assert flat["sample"] == "nested_loops" and flat["seed"] == "7" and flat["event"] == "5" and flat["node"] == PARITY
    assert flat["dim.T"] == "2"  # the Scan's symbolic length, at its default size


def test_opening_an_address_restores_model_inputs_cursor_and_node():
    at = opened({"sample": "nested_loops", "seed": "3", "dim.T": "5", "event": "12", "node": PARITY})
    assert not at.exception
    assert at.session_state[state.ACTIVE].label == "nested_loops"
    assert at.radio(key=state.W_INPUT_MODE).value == "Random" and at.number_input(key=state.W_SEED).value == 3
    assert at.session_state[state.RUN_REQUEST].feeds_key.startswith("random:3:")
    assert "('T', 5)" in at.session_state[state.RUN_REQUEST].feeds_key
    assert at.session_state[state.CURSOR] == 12 and at.session_state[state.SELECTED] == PARITY


def test_a_bad_address_falls_back_to_defaults():
    at = opened({"sample": "no_such_sample", "seed": "x", "event": "-4"})
    assert not at.exception
    assert at.session_state[state.ACTIVE] is not None and at.session_state[state.CURSOR] == 0
