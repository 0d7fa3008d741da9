"""Learning mode: questions before a branch or an iteration is revealed, checked against the recorded trace; the
guided tours; the spec's C-style equivalent of each Loop mode (quoted from onnx.defs, every version)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper as h

import explorer
from explorer.inputs.samples import list_samples, sample_inputs, sample_path
from explorer.model.feeds import loop_bounds
from explorer.ui import state
from explorer.views import learning, loops
from explorer.views.tours import TOURS, tip_event
from tests.support.apptest import move_target, record_tables, start, step_to

BRANCH = "enc/body/inner/body/branch"


@pytest.fixture(scope="module")
def nested():
    model = explorer.load(sample_path("nested_loops"))
    return model, explorer.run(model, sample_inputs("nested_loops"))


def test_a_branch_question_comes_right_before_the_branch_is_entered(nested):
    model, trace = nested
    asked = [(i, q) for i in range(len(trace.events)) if (q := learning.branch_question(model, trace, i))]
    ifs = [e for e in trace.events if e.node == BRANCH]
    assert len(asked) == len(ifs)  # once per execution of the If
    for (i, question), run in zip(asked, ifs):
        assert question.node == BRANCH and question.options == ("then_branch", "else_branch")
        assert question.answer == run.info["branch"] and trace.events[i + 1].node.startswith(f"{BRANCH}/")
    assert len({q.key for _, q in asked}) == len(asked)


def test_carried_questions_and_checks():
    model = explorer.load(sample_path("loop_spec"))
    trace = explorer.run(model, sample_inputs("loop_spec"))
    run = loops.executions(model, trace, "loop")[0]
    its, body = loops.iterations_of(trace, run), loops.body_values(model, "loop")
    question = learning.carried_question(body, its, 1)
    assert question.before == {"b_in": "-3"} and question.answers == {"b_in": 6.0}  # b = a - b with a = 3
    assert learning.carried_question(body, its, 2) is None
    assert learning.check_number(6.0001, 6.0) and not learning.check_number(5.9, 6.0)
    assert learning.check_number(float("nan"), float("nan")) and not learning.check_number(0.0, np.nan)
    assert question.feedback("b_in", 5.9) == \
        "Not quite: you predicted 5.9, but b_in leaves iteration 1 as 6 (it came in as -3)."
    assert question.feedback("b_in", 6.0) == "Right: you predicted 6; b_in leaves iteration 1 as 6 (it came in as -3)."


def test_a_loop_carrying_a_vector_asks_for_its_norm():
    model = explorer.load(sample_path("while_loop"))
    trace = explorer.run(model, sample_inputs("while_loop"))
    loop = next(r.path for r in model.nodes() if r.op_type == "Loop")
    run = loops.executions(model, trace, loop)[0]
    its, body = loops.iterations_of(trace, run), loops.body_values(model, loop)
    question = learning.carried_question(body, its, 1)
    (asked,) = question.answers
    carried = question.asked[asked]
    assert asked == learning.norm_label(carried)
    out = dict(body.carried)[carried]
    assert question.answers[asked] == pytest.approx(float(np.linalg.norm(its[1].outputs[out])))


def test_the_branch_feedback_names_the_prediction_the_truth_and_the_condition(nested):
    model, trace = nested
    index = next(i for i in range(len(trace.events)) if learning.branch_question(model, trace, i))
    question = learning.branch_question(model, trace, index)
    other = next(o for o in question.options if o != question.answer)
    condition = "True" if question.answer == "then_branch" else "False"
    assert question.feedback(other) == (f"Not quite: you predicted {other}, but {question.answer} ran. "
                                        f"The condition {question.condition} was {condition}.")
    assert question.feedback(question.answer).startswith(f"Right: you predicted {question.answer}")


@pytest.mark.parametrize("opset", [1, 11, 13, 16, 19, 21])
def test_loop_modes_quote_the_spec_of_each_version(opset):
    doc = onnx.defs.get_schema("Loop", opset).doc
    for inputs, words in (([" M", ""], "for loop"), (["", "c"], "while loop"), (["M", "c"], "trip_count && cond")):
        title, code = learning.loop_mode_code(h.make_node("Loop", [*inputs, "x"], ["y"]), opset)
        assert all(line.strip() in doc for line in code.splitlines())
        assert words in title + code
    assert learning.loop_mode_code(h.make_node("Scan", ["x"], ["y"]), opset) is None


def test_every_tour_belongs_to_a_control_flow_sample():
    samples = list_samples()
    for name, tips in TOURS.items():
        model = explorer.load(sample_path(name))
        assert name in samples and 2 <= len(tips) <= 5
        assert any(r.op_type in ("If", "Loop", "Scan") for r in model.nodes())


def test_step_page_holds_back_until_the_branch_is_predicted():
    at = start("nested_loops")
    at.toggle(key=state.W_LEARNING).set_value(True).run()
    at.switch_page("explorer/ui/pages/step.py").run()
    step_to(at, 1)  # Equal 'is_even': next comes the first branch
    assert move_target(at, "next") is None and move_target(at, "last") is None
    [radio] = [r for r in at.radio if "which branch" in r.label]
    radio.set_value("else_branch").run()
    [check] = [b for b in at.button if b.label == "Check"]
    check.click().run()
    shown = "\n".join(m.value for m in at.markdown).replace("\\", "").replace("\u200b", "")
    assert "Not quite: you predicted else_branch, but then_branch ran. The condition even was True." in shown
    assert move_target(at, "next") == 2
    assert not at.exception


def test_loops_page_reveals_iterations_after_predictions_and_shows_the_c_equivalent():
    at = start("loop_spec")
    at.switch_page("explorer/ui/pages/loops.py").run()
    text = "\n".join(m.value for m in at.markdown)
    assert "C-style equivalent in the spec: input (trip_count, cond)" in text
    assert "**Tour of loop_spec** · 1 of 4" in text
    at.toggle(key=state.W_LEARNING).set_value(True).run()
    [table] = [d for d in record_tables(at) if "iteration" in d.columns]
    assert len(table) == 1  # only iteration 0 shown
    [guess] = [n for n in at.number_input if "after iteration 1" in n.label]
    guess.set_value(6.0).run()
    [reveal] = [b for b in at.button if b.label == "Check and reveal"]
    reveal.click().run()
    shown = "\n".join(m.value for m in at.markdown).replace("\\", "").replace("\u200b", "")
    assert "Right: you predicted 6; b_in leaves iteration 1 as 6 (it came in as -3)." in shown
    [table] = [d for d in record_tables(at) if "iteration" in d.columns]
    assert len(table) == 2 and not at.exception
    [ahead] = [b for b in at.button if b.label == "Next"]
    ahead.click().run()
    assert "**Tour of loop_spec** · 2 of 4" in "\n".join(m.value for m in at.markdown)


TORCH_EXPORTS = Path(__file__).parents[1] / "models" / "torch_exports"


@pytest.mark.parametrize(("name", "bounds"), [("ts_rnn_decoder", {"steps"}), ("ts_greedy_tokens", {"max_len"}),
                                              ("dynamo_while_loop", {"n"}), ("ts_time_loop", set())])
def test_random_inputs_run_a_loop_at_least_twice(name, bounds):
    """A trip count or a loop bound drawn like other integers (0 to 3) often runs the loop never or once; drawn
    from 2 to 5 it runs it at least twice. Other integer inputs keep their values."""
    model = explorer.load(TORCH_EXPORTS / f"{name}.onnx")
    assert loop_bounds(model) == bounds
    for seed in range(12):
        feeds = model.example_inputs(seed=seed)
        for bound in bounds:
            assert 2 <= int(feeds[bound]) <= 5 and feeds[bound].dtype == np.int64
    if name == "ts_rnn_decoder":  # runs exactly `steps` iterations
        trace = explorer.run(model, model.example_inputs(seed=3))
        (loop,) = trace.events_of("/Loop")
        assert loop.info["iterations"] == int(model.example_inputs(seed=3)["steps"]) >= 2


def test_an_index_input_is_no_loop_bound():
    graph = h.make_graph([h.make_node("Gather", ["x", "i"], ["y"])], "g",
                         [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4]),
                          h.make_tensor_value_info("i", onnx.TensorProto.INT64, [])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [])])
    assert loop_bounds(explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]))) == set()


def test_the_app_says_which_input_bounds_a_loop():
    at = start()
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(TORCH_EXPORTS / "ts_rnn_decoder.onnx")).run()
    assert "bounds a loop: random values for it are drawn from 2 to 5, so the loop runs at least twice" in \
        "\n".join(c.value for c in at.caption)


def test_every_tip_names_a_node_its_sample_runs():
    for name, tips in TOURS.items():
        model = explorer.load(sample_path(name))
        trace = explorer.run(model, sample_inputs(name))
        for tip in tips:
            assert tip.node, (name, tip.text)
            model.node(tip.node)  # raises for a path the model does not have
            index = tip_event(trace, tip)
            assert index is not None and trace.events[index].node == tip.node


def test_the_tour_moves_the_cursor_to_what_it_describes():
    at = start("nested_loops")
    at.switch_page("explorer/ui/pages/step.py").run()
    [ahead] = [b for b in at.button if b.label == "Next"]
    ahead.click().run()
    trace = explorer.run(explorer.load(sample_path("nested_loops")), sample_inputs("nested_loops"))
    parity = "enc/body/inner/body/parity"
    assert at.session_state[state.CURSOR] == trace.events_of(parity)[0].index
    assert at.session_state[state.SELECTED] == parity
    assert "**Tour of nested_loops** · 2 of 4: The cursor is at the first **Mod 'parity'**" in \
        "\n".join(m.value for m in at.markdown)
    assert move_target(at, "next") == trace.events_of(parity)[0].index + 1 and not at.exception
