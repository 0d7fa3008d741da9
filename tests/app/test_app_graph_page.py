"""The Graph page's navigation through AppTest: search results listed with their paths (into bodies and across
the run) and brought into view when chosen, colour overlays with their legend, the hierarchy navigator one level
at a time, and one drawing per run of the page."""
from __future__ import annotations

import explorer
import explorer.views.dot as dot_module
from explorer.hosting.priority import this_thread_lowered
from explorer.inputs.samples import sample_inputs, sample_path
from explorer.ui import state
from explorer.views import heat
from tests.support.apptest import diagram_args, start

ADD_X = "enc/body/inner/body/branch/then_branch/add_x"



def test_search_lists_matches_with_paths_and_goes_to_the_chosen_one():
    at = start("nested_loops")
    at.text_input(key=state.W_SEARCH).input("op:Add").run()
    pick = at.selectbox(key=state.keyed(state.W_SEARCH_PICK, "op:Add"))
    assert pick.options == [f"{ADD_X} · op: Add"] and "1 node(s) match" in pick.label
    assert diagram_args(at, state.W_GRAPH_CLICK)["hits"] == [f"node:{ADD_X}"]
    pick.set_value(ADD_X).run()
    assert at.session_state[state.SELECTED] == ADD_X
    drawn = diagram_args(at, state.W_GRAPH_CLICK)
    assert drawn["focus"] == f"node:{ADD_X}" and drawn["mark"]  # zoomed to and outlined
    assert not at.exception


def test_search_across_the_run_and_going_to_a_node_outside_the_focus():
    at = start("nested_loops")
    at.session_state[state.GRAPH_PATH] = "enc/body/inner/body/branch/else_branch"
    at.run()
    at.text_input(key=state.W_SEARCH).input("slower:0ms").run()
    pick = at.selectbox(key=state.keyed(state.W_SEARCH_PICK, "slower:0ms"))
    assert len(pick.options) == 10 and all("· time: " in label for label in pick.options)  # every node ran
    pick.set_value("enc").run()
    assert at.session_state[state.GRAPH_PATH] == "" and diagram_args(at, state.W_GRAPH_CLICK)["focus"] == "node:enc"
    at.text_input(key=state.W_SEARCH).input("nan").run()
    assert "No node matches" in "\n".join(c.value for c in at.caption)


def test_colour_by_time_fills_nodes_and_shows_the_legend():
    at = start("nested_loops")
    at.button_group(key=state.W_COLOUR).set_value("time").run()
    legend = diagram_args(at, state.W_GRAPH_CLICK)["legend"]
    import explorer
    model = explorer.load(sample_path("nested_loops"))
    expected = heat.time_spent(explorer.run(model, sample_inputs("nested_loops")))
    assert legend["title"] == "time spent" and len(legend["items"]) == len(heat.styles.HEAT_SCALE)
    assert all(text.endswith(" ms") for _, text in legend["items"]) and expected.values
    assert not at.exception


def test_navigator_opens_one_level_at_a_time():
    at = start("nested_loops")
    key = state.keyed(state.W_PART, "")
    assert at.selectbox(key=key).options == ["Scan 'enc' · body · 9 nodes"]
    at.selectbox(key=key).set_value("enc/body").run()
    assert at.session_state[state.GRAPH_PATH] == "enc/body"
    inner = at.selectbox(key=state.keyed(state.W_PART, "enc/body"))
    assert inner.options == ["Loop 'inner' · body · 6 nodes"]


def test_the_page_draws_once_even_when_the_selection_is_hidden(monkeypatch):
    calls = []
    build = dot_module.build
    def spy(model, options):  # the page's drawings, not the Optimizer's made ahead in the background
        if not this_thread_lowered():
            calls.append(options)
        return build(model, options)

    monkeypatch.setattr(dot_module, "build", spy)
    at = start("nested_loops")
    at.button_group(key=state.W_BODIES).set_value("none").run()  # every body collapsed
    calls.clear()
    at.selectbox(key=state.W_NODE_PICK).set_value(ADD_X).run()
    assert len(calls) == 1 and calls[0].reveal == {ADD_X}
    assert diagram_args(at, state.W_GRAPH_CLICK)["focus"] == "node:enc"  # its collapsed owner stands for it


def test_a_big_model_opens_to_the_top_level_of_its_hierarchy(tmp_path):
    import html
    import re

    import onnx

    from explorer.ui.widgets import NODE_PICK_LIMIT
    from explorer.views.navigation import parts
    from tests.support.diagrams import synthetic_model

    path = tmp_path / "big.onnx"
    onnx.save(synthetic_model(2_200), path)
    at = start("tiny_mlp")
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(path)).run()
    at.run()  # the canvas went ahead of its drawing; loaded, it asks for it
    model = explorer.load(path)
    assert len(model.index.nodes) > NODE_PICK_LIMIT
    svg = diagram_args(at, state.W_GRAPH_CLICK)["svg"]
    drawn = {html.unescape(found) for found in re.findall(r'id="(scope:[^"]+)"', svg)}
    [(top, _, size)] = parts(model, "")  # one scope, /model, holding every node of the main graph
    blocks = parts(model, top)
    assert top == "/model" and size == len(model.graph.node) and 2 < len(blocks) <= 12
    assert drawn == {f"scope:{top}"} | {f"scope:{key}" for key, _, _ in blocks}  # its blocks, nothing deeper
    assert at.selectbox(key=state.W_NODE_PICK).options == []  # no op drawn on its own: search finds them
    at.text_input(key=state.W_SEARCH).input("block.7/Loop").run()
    at.selectbox(key=state.keyed(state.W_SEARCH_PICK, "block.7/Loop")).set_value("/model/block.7/Loop").run()
    assert diagram_args(at, state.W_GRAPH_CLICK)["focus"] == "node:/model/block.7/Loop"  # opened to show it
    assert at.selectbox(key=state.W_NODE_PICK).value == "/model/block.7/Loop"
    assert not at.exception


def test_a_big_model_is_drawn_before_its_first_run_which_the_next_rerun_makes(tmp_path):
    import onnx

    from explorer.views.heat import time_spent
    from tests.support.diagrams import synthetic_model

    path = tmp_path / "big.onnx"
    proto = synthetic_model(2_200)
    proto.doc_string = "not run by any other test"  # a model of its own: no run of it is done yet in this process
    onnx.save(proto, path)
    model = explorer.load(path)
    assert len(model.index.nodes) > state.PUT_OFF_NODES
    at = start("tiny_mlp")
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(path)).run()
    ahead = diagram_args(at, state.W_GRAPH_CLICK)  # the canvas goes ahead of its drawing: its frame loads meanwhile
    assert ahead["pending"] and "svg" not in ahead and "layout" not in ahead
    assert at.button_group(key=state.W_COLOUR).disabled  # no run yet: nothing to colour by
    at.run()  # the canvas, loaded, asks for the drawing
    first = diagram_args(at, state.W_GRAPH_CLICK)
    assert first["report"] is True and first["svg"]  # the overview, and the canvas asked to say when it is drawn
    assert [m for m, _ in at.session_state[state.K_FIRST_SHOWN]] == [model.sha256]  # it went ahead once
    assert at.button_group(key=state.W_COLOUR).disabled  # still no run
    at.run()  # the canvas's report (or any click) reruns the page, which runs the model
    after = diagram_args(at, state.W_GRAPH_CLICK)
    assert after["report"] is False and after["layout"] == first["layout"]  # the same drawing, not laid out anew
    assert not at.button_group(key=state.W_COLOUR).disabled
    at.button_group(key=state.W_COLOUR).set_value("time").run()
    legend = diagram_args(at, state.W_GRAPH_CLICK)["legend"]
    assert legend["title"] == time_spent(explorer.run(model)).title  # coloured by the recorded run
    at.run()
    assert diagram_args(at, state.W_GRAPH_CLICK)["report"] is False  # put off once per run, not at every rerun
    assert len(at.session_state[state.K_FIRST_SHOWN]) == 1  # only the first drawing before the run went ahead
    assert not at.exception
