"""What a new user meets first, driven with AppTest: samples open on their own inputs, each model starts from
its own default inputs, and nothing looks chosen before the user chooses it."""
from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from explorer.samples import sample_inputs

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGES = {name: f"explorer/ui/pages/{name}.py" for name in ("graph", "step", "loops", "gates", "optimizer")}


@pytest.fixture(autouse=True)
def fresh_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield


def start() -> AppTest:
    return AppTest.from_file(APP, default_timeout=60).run()


def choose(at: AppTest, sample: str) -> AppTest:
    return at.selectbox(key="w_sample").set_value(sample).run()


def texts(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info])


def test_the_node_selector_shows_no_node_until_one_is_picked():
    at = start()
    assert at.selectbox(key="w_node_pick").value is None  # not the first node while the inspector is empty
    assert not at.subheader
    at.selectbox(key="w_node_pick").set_value("enc").run()  # picking the first node opens it
    assert [s.value for s in at.subheader] == ["Scan 'enc'"]


def test_a_sample_opens_on_its_own_inputs():
    at = start()
    assert at.radio(key="w_input_mode").value == "Sample inputs"
    assert at.session_state["run_request"].make_feeds().keys() == sample_inputs("nested_loops").keys()
    at.switch_page(PAGES["loops"]).run()
    assert "**4 iterations**" in texts(at)  # X of the sample's inputs has T = 4 rows
    choose(at, "while_loop")
    assert "**6 iterations** · stopped: cond false after 6 iterations" in texts(at)


def test_each_model_starts_from_its_own_default_inputs():
    at = choose(start(), "loop_spec")
    at.radio(key="w_input_mode").set_value("Random").run()
    choose(at, "tiny_mlp")  # no inputs of its own: random
    assert at.radio(key="w_input_mode").options == ["Random", ".npz file", "Edit values"]
    assert at.radio(key="w_input_mode").value == "Random"
    choose(at, "loop_spec")
    assert at.radio(key="w_input_mode").value == "Sample inputs"


def test_editing_starts_from_the_sample_inputs():
    at = choose(start(), "loop_spec")
    at.radio(key="w_input_mode").set_value("Edit values").run()
    tables = {c.value.strip("`").split("`")[0]: t.value.iloc[0, 0]
              for c, t in zip([c for c in at.sidebar.caption if c.value.startswith("`")], at.sidebar.dataframe)}
    assert tables == {"a": 3, "b": 6, "keepgoing": True, "max_trip_count": 10}
    assert not [n for n in at.sidebar.number_input if n.label == "Seed"]  # no seed: nothing is random
