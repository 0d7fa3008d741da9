"""The Step page's stepper on the canvas: the frames it is sent for the events around the cursor are what the
server shows at those events, only events drawn on the same layout get one, and learning mode holds them back
as it holds the page."""
from __future__ import annotations

import explorer
from explorer.inputs.samples import sample_inputs, sample_path
from explorer.ui import state
from explorer.views import step_moves
from explorer.views.cursor import breadcrumb_text
from tests.support.apptest import PAGES, diagram_args, move_target, start, step_to, stepper


def test_a_frame_shown_before_the_server_answers_is_what_the_server_shows_at_that_event():
    at = start("nested_loops")
    at.switch_page(PAGES["step"]).run()
    shown = stepper(at)
    model = explorer.load(sample_path("nested_loops"))
    trace = explorer.run(model, sample_inputs("nested_loops"))
    layout = diagram_args(at, state.W_STEP_DIAGRAM)["layout"]
    # the whole model is one drawing: the events just ahead and the targets of every move are all sent
    assert set(range(1, step_moves.AHEAD + 1)) <= set(shown["frames"]) and 72 in shown["frames"]
    for index in (1, move_target(at, "next_iteration"), step_moves.AHEAD, 72):
        frame = shown["frames"][index]
        step_to(at, index)
        args = diagram_args(at, state.W_STEP_DIAGRAM)
        assert args["layout"] == layout and args["step"] == index
        assert args["marks"] == frame["marks"] and args["focus"] == frame["focus"]
        assert stepper(at)["frames"][index] == frame
        where = breadcrumb_text(model, trace.events[index])  # the position line: event, where it ran, its time
        assert frame["text"].startswith(f"Event {index} of 0–72 · {where} · ") and frame["text"].endswith(" ms")


def test_only_events_drawn_on_the_same_layout_get_a_frame():
    at = start("nested_loops")
    at.switch_page(PAGES["step"]).run()
    at.button_group(key=state.W_STEP_VIEW).set_value("graph").run()  # only the current node's graph
    trace = explorer.run(explorer.load(sample_path("nested_loops")), sample_inputs("nested_loops"))
    model = explorer.load(sample_path("nested_loops"))
    shown = stepper(at)
    graph = model.node(trace.events[shown["at"]].node).graph.path
    assert shown["frames"] and all(model.node(trace.events[i].node).graph.path == graph for i in shown["frames"])
    ahead = range(shown["at"], shown["at"] + step_moves.AHEAD + 1)
    assert {i for i in ahead if model.node(trace.events[i].node).graph.path == graph} <= set(shown["frames"])
    assert any(model.node(trace.events[i].node).graph.path != graph for i in ahead)  # some were left out


def test_learning_mode_holds_back_the_frames_ahead_too():
    at = start("nested_loops")
    at.toggle(key=state.W_LEARNING).set_value(True).run()
    at.switch_page(PAGES["step"]).run()
    moves = {move[0]: move[4] for move in stepper(at)["frames"][1]["moves"]}
    assert moves["next"] is None and moves["last"] is None  # at Equal 'is_even' the branch is to be predicted
    assert moves["back"] == 0
