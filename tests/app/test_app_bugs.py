"""App behaviour that once went wrong, each driven through AppTest: widget keys for any node name, one event
numbering, the If branch taken at the step, iterations at every loop level, NaN in tables, axes of rank-3
tables, and hints naming the input to change when a run does nothing or fails."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from streamlit.testing.v1 import AppTest

import explorer
from explorer.inputs.samples import sample_inputs, sample_path
from explorer.ui import state
from explorer.views import hints
from tests.support.apptest import (
    PAGES,
    assert_clean,
    html_text,
    move_target,
    position,
    record_tables,
    start,
    step_move,
    step_state,
    step_to,
    texts,
    upload,
    value_tables,
)

SHARED = Path(__file__).resolve().parents[3] / "shared" / "models"
HOSTILE = ["node_while_loop__1", "If_0_else_branch__Inline_0__/a\"b'c/d", "x" * 10_000, "__", "a/b\\c:d"]


def upload_model(model, name: str = "model.onnx") -> AppTest:
    """The app started afresh with `model` uploaded."""
    return upload(start(), name, model.SerializeToString())


def hostile_loop_model():
    """A Loop whose own name and body node names hold `__`, quotes, slashes and a 10 kB name."""
    body = h.make_graph(
        [h.make_node("Add", ["acc_in", "one"], ["acc_out"], name=HOSTILE[1]),
         h.make_node("Identity", ["cond_in"], ["cond_out"], name=HOSTILE[2]),
         h.make_node("Identity", ["acc_out"], ["scan_out"], name=HOSTILE[3])],
        "body", [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
                 h.make_tensor_value_info("acc_in", T.FLOAT, [2])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [2]),
         h.make_tensor_value_info("scan_out", T.FLOAT, [2])],
        [h.make_tensor("one", T.FLOAT, [], [1.0])])
    graph = h.make_graph(
        [h.make_node("Loop", ["n", "", "x"], ["y", "ys"], name=HOSTILE[0], body=body),
         h.make_node("Relu", ["y"], ["z"], name=HOSTILE[4])],
        "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("z", T.FLOAT, [2]), h.make_tensor_value_info("ys", T.FLOAT, [None, 2])],
        [h.make_tensor("n", T.INT64, [], [3])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 19)])


def test_every_page_takes_any_node_name():
    at = upload_model(hostile_loop_model())
    assert_clean(at)
    for page in ("graph", "step", "loops", "gates", "optimizer"):
        at.switch_page(PAGES[page]).run()
        assert_clean(at)
    at.switch_page(PAGES["loops"]).run()
    assert "**3 iterations**" in texts(at)
    at.slider(key=state.keyed("w_loop_it", HOSTILE[0], ())).set_value(2).run()
    assert_clean(at)
    at.switch_page(PAGES["graph"]).run()
    for path in (f"{HOSTILE[0]}/body/{HOSTILE[2]}", HOSTILE[4]):
        at.selectbox(key=state.W_NODE_PICK).set_value(path).run()
        assert_clean(at)
    assert len({state.keyed("w", name) for name in HOSTILE}) == len(HOSTILE)
    assert all(len(state.keyed("w", name)) < 40 for name in HOSTILE)


def test_one_event_numbering_on_the_step_page_and_in_tables():
    at = start("nested_loops")
    at.switch_page(PAGES["step"]).run()
    step_to(at, 18)
    assert at.session_state[state.CURSOR] == 18 and position(at).startswith("Event 18 of 0–72 · ")
    trace = explorer.run(explorer.load(sample_path("nested_loops")), sample_inputs("nested_loops"))
    assert " › Mod 'parity' · " in position(at)
    at.switch_page(PAGES["graph"]).run()
    at.selectbox(key=state.W_NODE_PICK).set_value("enc/body/inner/body/parity").run()
    [table] = [d for d in record_tables(at) if "event" in d.columns]
    assert 18 in table["event"].tolist()  # the same number the Step page shows for that execution
    assert trace.events[18].node == "enc/body/inner/body/parity"


def test_iterations_move_at_every_loop_level():
    at = start("nested_loops")
    at.switch_page(PAGES["step"]).run()
    step_to(at, 28)  # parity at Scan step 1, Loop iteration 2
    assert "Scan 'enc' · iteration 1" in position(at) and "Loop 'inner' · iteration 2" in position(at)
    step_move(at, "level0+")  # next Scan step, same inner iteration
    assert at.session_state[state.CURSOR] == 46
    step_move(at, "level1-")
    assert at.session_state[state.CURSOR] == 41
    step_move(at, "level0-")
    step_move(at, "level0-")
    assert at.session_state[state.CURSOR] == 5  # (0, 1)
    assert move_target(at, "level0-") is None


def test_the_branch_not_taken_is_drawn_skipped_at_the_step():
    at = start("nested_loops")
    at.switch_page(PAGES["step"]).run()
    trace = explorer.run(explorer.load(sample_path("nested_loops")), sample_inputs("nested_loops"))
    halve = "enc/body/inner/body/branch/else_branch/halve"
    add = "enc/body/inner/body/branch/then_branch/add_x"
    later_add = next(e.index for e in trace.events_of(add) if any(
        x.index < e.index for x in trace.events_of(halve)))  # the else branch ran in an earlier iteration
    step_to(at, later_add)
    assert step_state(at, add) == "current"
    assert step_state(at, halve) == "skipped"


def nan_model():
    """y = sqrt(x) of a [2, 2, 3] input: NaN wherever x < 0."""
    graph = h.make_graph([h.make_node("Sqrt", ["x"], ["y"], name="root")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [2, 2, 3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2, 2, 3])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 19)])


def test_nan_cells_read_nan_and_rank_3_tables_name_their_axes():
    at = upload_model(nan_model())
    at.switch_page(PAGES["step"]).run()
    output = value_tables(at)[-1]
    assert (output == "NaN").to_numpy().any()  # random inputs hold negative values
    assert not output.isna().to_numpy().any()
    assert list(output.index) == [f"[{i}, {j}]" for i in range(2) for j in range(2)]
    assert list(output.columns) == ["0", "1", "2"]
    assert "rows: axes 0–1 (index [i0, i1]) · columns: axis 2" in html_text(at)


def zero_trip_model():
    """A Loop whose trip count Size(x) - Size(x) is always 0: it never runs its body."""
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]), h.make_node("Neg", ["v_in"], ["v_out"])], "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("v_in", T.FLOAT, [2])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("v_out", T.FLOAT, [2])])
    graph = h.make_graph(
        [h.make_node("Size", ["x"], ["size"]), h.make_node("Sub", ["size", "size"], ["trips"]),
         h.make_node("Loop", ["trips", "", "x"], ["y"], name="repeat", body=body)],
        "g", [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 19)])


def test_a_loop_that_never_runs_names_the_input_behind_it():
    model = explorer.load(zero_trip_model())
    trace = explorer.run(model, {"x": np.ones(2, np.float32)})
    [hint] = hints.idle_loops(model, trace)
    assert "Loop 'repeat' ran 0 iterations" in hint and "`trips` = 0" in hint and "input `x`" in hint
    at = upload_model(zero_trip_model())
    assert any("ran 0 iterations" in i.value and "`x`" in i.value for i in at.info)


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/models is absent")
def test_silero_failing_on_random_audio_names_the_audio_input():
    model = explorer.load(SHARED / "snakers4__silero-vad/src/silero_vad/data/silero_vad_16k_op15.onnx")
    with pytest.raises(explorer.ExecutionError) as caught:
        explorer.run(model, model.example_inputs(seed=0))
    hint = hints.failure_hint(model, caught.value.trace.error.node)
    assert hint is not None and "input `input`" in hint and "`state`" not in hint and "`sr`" not in hint


def test_inputs_behind_a_value_follow_captures_out_of_bodies():
    """Inside a Loop body `acc + y` reads y = Neg(x) of the main graph: both trace back to input x, the trip
    count to input M; a body's own formal input traces back to nothing."""
    body = h.make_graph(
        [h.make_node("Add", ["acc_in", "y"], ["acc_out"], name="add"), h.make_node("Identity", ["c"], ["c_out"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
                 h.make_tensor_value_info("acc_in", T.FLOAT, [2])],
        [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [2])])
    graph = h.make_graph(
        [h.make_node("Neg", ["x"], ["y"], name="neg"),
         h.make_node("Loop", ["M", "", "x"], ["out"], name="loop", body=body)], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [2]), h.make_tensor_value_info("M", T.INT64, [])],
        [h.make_tensor_value_info("out", T.FLOAT, [2])])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]))
    assert hints.inputs_behind(model, "loop/body", ["y"]) == ["x"]
    assert hints.inputs_behind(model, "loop/body", ["acc_out"]) == ["x"]  # acc_in is the body's own input
    assert hints.inputs_behind(model, "", ["out"]) == ["x", "M"]
    assert hints.inputs_behind(model, "loop/body", ["i"]) == []
