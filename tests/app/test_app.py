"""The Streamlit app driven headless with AppTest: every page on every sample, the sidebar's model and input
choices, error handling that keeps the previous model, and the step cursor."""
import io
import json

import numpy as np
import pytest
from onnx import TensorProto, helper
from streamlit.testing.v1 import AppTest

import explorer
from explorer.inputs.samples import DEFAULT_SAMPLE, list_samples, sample_path
from explorer.ui import state
from explorer.views.styles import NODE_STATES
from explorer.views.tables import short_text
from tests.support.apptest import (
    PAGES,
    SVG,
    array,
    assert_clean,
    chart_svgs,
    chart_titles,
    diagram_args,
    diagram_svg,
    figures,
    html_shown,
    html_text,
    interactive,
    move_target,
    outline,
    position,
    record_tables,
    start,
    step_move,
    step_state,
    step_to,
    stepper,
    text_blocks,
    texts,
    upload,
    value_tables,
)
from tests.support.markdown_text import rendered, shown

SAMPLES = list(list_samples())


def test_opens_on_the_default_sample_with_a_recorded_run():
    at = start()
    assert_clean(at)
    assert at.selectbox(key="w_sample").value == DEFAULT_SAMPLE
    assert at.session_state["active_model"].label == DEFAULT_SAMPLE
    assert list_samples()[DEFAULT_SAMPLE] in texts(at)  # the sample's description is shown
    at.switch_page(PAGES["step"]).run()
    assert_clean(at)
    assert position(at).startswith("Event 0 of 0–")


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_page_loads_on_every_sample(sample):
    at = start(sample)
    for page in PAGES.values():
        at.switch_page(page).run()
        assert_clean(at)


def test_garbage_upload_shows_an_error_and_keeps_the_previous_model():
    at = start("tiny_mlp")
    at.radio(key="w_source").set_value("Upload").run()
    at.file_uploader(key="w_upload").upload("garbage.onnx", b"\x08\x07garbage, not protobuf\xff\xff").run()
    assert not at.exception
    assert len(at.error) == 1 and "garbage.onnx" in shown(at.error[0].value)
    assert "not an ONNX model" in shown(at.error[0].value)
    assert "Still showing tiny_mlp" in shown(at.error[0].value)
    assert at.session_state["active_model"].label == "tiny_mlp"
    at.switch_page(PAGES["step"]).run()  # the previous model and its run stay usable
    assert position(at).startswith("Event 0 of 0–")
    at.file_uploader(key="w_upload").clear().run()
    assert not at.error


def test_a_good_upload_replaces_the_model():
    at = start("tiny_mlp")
    at.radio(key="w_source").set_value("Upload").run()
    at.file_uploader(key="w_upload").upload("scan.onnx", sample_path("scan_rnn_encoding").read_bytes()).run()
    assert_clean(at)
    assert at.session_state["active_model"].label == "scan.onnx"


def failing_model() -> bytes:
    """MatMul then a Reshape to an impossible shape: the run fails at the second node."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="first"),
         helper.make_node("Reshape", ["r", "shape"], ["y"], name="bad_reshape")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [helper.make_tensor("shape", TensorProto.INT64, [1], [7])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_a_failing_run_keeps_its_partial_trace():
    at = start("tiny_mlp")
    at.radio(key="w_source").set_value("Upload").run()
    at.file_uploader(key="w_upload").upload("fails.onnx", failing_model()).run()
    assert not at.exception
    assert at.session_state["active_model"].label == "fails.onnx"  # it loads; the run fails
    error = shown(at.error[0].value)
    assert len(at.error) == 1
    assert "ExecutionError" in error and "bad_reshape" in error and "holds 2 events" in error
    at.switch_page(PAGES["step"]).run()
    assert position(at).startswith("Event 0 of 0–1 · ") and "Relu 'first'" in position(at)


def test_a_loop_limit_is_reported_with_the_partial_trace():
    at = start("nested_loops")
    at.number_input(key="w_max_iterations").set_value(2).run()
    assert not at.exception
    [error] = at.error
    # the inner Loop wants 3 iterations: it stops in the first Scan step after 2 x 5 body events, and records
    # its own event saying why
    assert "LimitExceeded" in shown(error.value) and "'enc/body/inner'" in shown(error.value)
    assert "max_iterations=2" in shown(error.value)
    assert "holds 11 events" in shown(error.value)
    at.switch_page(PAGES["loops"]).run()
    at.selectbox(key="w_loop").set_value("enc/body/inner").run()
    assert not at.exception
    assert "stopped: limit after 2 iterations" in texts(at)


def test_local_path_and_missing_path():
    at = start("tiny_mlp")
    at.radio(key="w_source").set_value("Local path").run()
    at.text_input(key="w_path").input(str(sample_path("loop_spec"))).run()
    assert_clean(at)
    assert at.session_state["active_model"].label.endswith("loop_spec.onnx")
    at.text_input(key="w_path").input("/nonexistent/model.onnx").run()
    [error] = at.error
    assert "does not exist" in shown(error.value) and "loop_spec.onnx" in shown(error.value)


def test_inputs_from_npz_and_from_edited_tables():
    at = start("tiny_mlp")
    model_inputs = {s.name: s for s in explorer.load(sample_path("tiny_mlp")).inputs}
    name, spec = next(iter(model_inputs.items()))
    at.radio(key="w_input_mode").set_value("Upload .npz or .pb").run()
    assert "Event" not in texts(at)
    x = np.full([d if isinstance(d, int) else 2 for d in spec.shape], 0.25, dtype=spec.dtype)
    buf = io.BytesIO()
    np.savez(buf, **{name: x})
    at.file_uploader(key="w_npz").upload("feeds.npz", buf.getvalue()).run()
    assert_clean(at)
    at.switch_page(PAGES["step"]).run()
    assert "min 0.25 · max 0.25" in html_text(at)  # the first event reads the uploaded input
    at.file_uploader(key="w_npz").upload("bad.npz", b"not a zip").run()
    assert any("not a readable .npz" in shown(e.value) for e in at.error)
    at.radio(key="w_input_mode").set_value("Edit values").run()
    assert_clean(at)
    [table] = at.sidebar.dataframe  # the editor starts from the random inputs of the chosen seed
    seed0 = explorer.load(sample_path("tiny_mlp")).example_inputs(seed=0)[name]
    np.testing.assert_array_equal(table.value.to_numpy(), seed0)


def test_symbolic_dims_change_the_run():
    at = start("nested_loops")
    at.radio(key="w_input_mode").set_value("Random").run()  # the sample's own inputs have T = 4
    at.switch_page(PAGES["loops"]).run()
    assert "**2 iterations**" in texts(at)  # T defaults to 2
    next(n for n in at.number_input if n.label == "Size of `T`").set_value(5).run()
    assert_clean(at)
    assert "**5 iterations**" in texts(at)


def test_step_buttons_move_the_cursor_along_the_loops():
    at = start("nested_loops")
    at.switch_page(PAGES["step"]).run()
    assert " · Scan 'enc' · iteration 0 › Loop 'inner' · iteration 0 › Mod 'parity' · " in position(at)
    step_move(at, "next_iteration")
    assert "Loop 'inner' · iteration 1 › Mod 'parity' · " in position(at)
    step_move(at, "next")
    assert "Loop 'inner' · iteration 1 › Equal 'is_even' · " in position(at)
    step_move(at, "last")
    assert at.session_state["cursor"] == stepper(at)["at"] == 72
    assert position(at).startswith("Event 72 of 0–72 · Scan 'enc' · ") and position(at).endswith(" ms")
    assert move_target(at, "next") is None and move_target(at, "last") is None  # nothing after the last event
    step_to(at, 2)
    assert "› If 'branch' · then_branch › Add 'add_x' · " in position(at)


def test_cursor_moves_move_the_highlighted_node_in_the_diagram():
    # the step's states are marks the canvas applies to one cached layout (the layout does not change)
    at = start("nested_loops")
    at.switch_page(PAGES["step"]).run()
    layout = diagram_args(at, "w_step_diagram")["layout"]
    assert step_state(at, "enc/body/inner/body/parity") == "current"
    assert step_state(at, "enc/body/inner/body/is_even") == "pending"
    assert step_state(at, "enc") == "running"
    step_move(at, "next")
    assert step_state(at, "enc/body/inner/body/is_even") == "current"
    assert step_state(at, "enc/body/inner/body/parity") == "executed"
    assert diagram_args(at, "w_step_diagram")["layout"] == layout
    step_move(at, "last")  # the Scan's own event comes last
    assert step_state(at, "enc") == "current"
    assert step_state(at, "enc/body/inner/body/parity") == "executed"


def test_selecting_a_node_fills_the_inspector():
    at = start("nested_loops")
    at.selectbox(key="w_node_pick").set_value("enc/body/inner/body/branch/then_branch/add_x").run()
    assert_clean(at)
    assert shown(at.subheader[0].value) == "Add 'add_x'"
    assert "Ran 8 times" in texts(at)  # T=4 Scan steps x 2 even inner iterations
    frames = record_tables(at)
    assert any("x_t" in f.to_string() and "tensor(float32) [3]" in f.to_string() for f in frames)
    at.selectbox(key=state.keyed("w_exec", "enc/body/inner/body/branch/then_branch/add_x")).set_value(3).run()
    assert "<b>acc_then</b>" in html_text(at)


def test_gates_page_draws_a_heatmap_per_gate_and_the_exported_report():
    at = start("gru_pytorch_batch_first")
    at.switch_page(PAGES["gates"]).run()
    assert_clean(at)
    assert at.get("plotly_chart") == []  # inline SVG charts by default: the page needs no plotly.js
    titles = chart_titles(at)
    assert {f"{g} [forward, batch 0]" for g in ("z", "r", "h", "H")} <= set(titles)
    assert {"z: chosen units", "Norm of H over time", "Saturation: fraction of units near a bound"} <= set(titles)
    z_chart = chart_svgs(at)[titles.index("z [forward, batch 0]")]
    texts_drawn = [t.text for t in z_chart.iter("{http://www.w3.org/2000/svg}text")]
    assert {"time step", "hidden unit", "0", "1"} <= set(texts_drawn)  # axes and the sigmoid's scale, 0 to 1
    interactive(at)  # the same charts, by plotly
    heatmaps = {f.layout.title.text: f.data[0] for f in figures(at) if f.data[0].type == "heatmap"}
    assert set(heatmaps) == {f"{g} [forward, batch 0]" for g in ("z", "r", "h", "H")}
    assert (heatmaps["z [forward, batch 0]"].zmin, heatmaps["z [forward, batch 0]"].zmax) == (0, 1)
    trace = explorer.run(explorer.load(sample_path("gru_pytorch_batch_first")))
    z = trace.gates("gru")["z"][:, 0, 0, :]  # [time, unit] of batch item 0
    np.testing.assert_allclose(array(heatmaps["z [forward, batch 0]"].z), z.T, rtol=1e-6)
    [weights] = [f for f in record_tables(at) if "PyTorch" in f.columns]
    assert weights.set_index("ONNX").loc["Wr", "PyTorch"].startswith("weight_ih_l0[0:")  # PyTorch stacks r, z, n


def test_gates_page_leaves_padded_steps_blank():
    at = start("lstm_bidirectional_ragged")
    at.switch_page(PAGES["gates"]).run()
    at.number_input(key=state.keyed("w_rnn_batch", "lstm")).set_value(2).run()  # the item of length 2
    interactive(at)
    assert_clean(at)
    assert "(2 valid for this batch item)" in texts(at)
    z = array(figures(at)[0].data[0].z)  # unit x time
    assert not np.isnan(z[:, :2]).any() and np.isnan(z[:, 2:]).all()


def test_loops_page_fills_the_pseudo_code_with_the_chosen_iteration():
    at = start("nested_loops")
    at.switch_page(PAGES["loops"]).run()
    at.selectbox(key="w_loop").set_value("enc/body/inner").run()
    at.selectbox(key=state.keyed("w_loop_exec", "enc/body/inner")).set_value(1).run()  # the inner Loop inside Scan step 1
    slider = next(s for s in at.slider if s.label == "Iteration")
    slider.set_value(2).run()
    assert_clean(at)
    code = text_blocks(at)[0]
    assert "for (int64 j = 0; j < max_trip_count && cond_in; ++j)" in code
    assert "values at iteration (1, 2)" in code and "j = 2" in code
    assert "stopped: trip count reached after 3 iterations" in texts(at)


def test_loops_page_draws_its_charts_inline_and_by_plotly_on_request():
    at = start("loop_spec")
    at.switch_page(PAGES["loops"]).run()
    assert_clean(at)
    titles = chart_titles(at)
    assert titles == ["b_in", "user_defined_val (element written)"] and not at.get("plotly_chart")
    [carried] = [svg for svg in chart_svgs(at) if svg.findtext(f"{SVG}title") == "b_in"]
    interactive(at)
    figure = next(f for f in figures(at) if f.layout.title.text == "b_in")  # the same values, by plotly
    ticks = [(float(t.text), float(t.get("y")) - 4) for t in carried.iter(f"{SVG}text") if t.get("text-anchor") == "end"]
    (v0, p0), (v1, p1) = ticks[0], ticks[-1]
    drawn = [float(xy.split(",")[1]) for xy in carried.find(f".//{SVG}polyline").get("points").split()]
    np.testing.assert_allclose([v0 + (p - p0) * (v1 - v0) / (p1 - p0) for p in drawn], array(figure.data[0].y),
                               atol=1e-2 * max(1.0, abs(v1 - v0)))


def test_optimizer_page_shows_rewrites_statistics_and_equivalence():
    at = start("tiny_mlp")
    at.switch_page(PAGES["optimizer"]).run()
    assert_clean(at)
    text = texts(at)
    assert "**2 rewrites**" in text and "nodes 6 → 4" in text
    assert "Optimized model in onnxruntime: :green[**loads it**]" in text
    assert "Fully optimized model: :green[**equivalent**]" in text
    proof = text_blocks(at)[0]
    assert "explorer: probs: max abs diff" in proof and "onnxruntime: probs" in proof
    [stats] = [f for f in record_tables(at) if "applied" in f.columns]
    assert stats.set_index("pattern").loc["MatMulAdd", "applied"] == 2
    [steps] = [f for f in record_tables(at) if "round" in f.columns]
    assert steps[["pattern", "removed", "added"]].values.tolist() == [
        ["MatMulAdd", "fc1, fc1_bias", "Gemm__0"], ["MatMulAdd", "fc2, fc2_bias", "Gemm__1"]]
    at.selectbox(key="w_rewrite_pick").set_value(1).run()
    before = diagram_svg(at, "w_rewrite_before")
    removed = NODE_STATES["removed"]["color"]
    assert outline(before, "fc2") == removed and outline(before, "fc2_bias") == removed
    assert outline(diagram_svg(at, "w_rewrite_after"), "Gemm__1") == NODE_STATES["added"]["color"]
    at.slider(key="w_rewrites").set_value(1).run()  # bisection: only the first rewrite
    assert_clean(at)
    assert "After 1 rewrite (added nodes marked)" in texts(at) and "equivalence: equivalent" in text_blocks(at)[0]
    patterns = at.button_group(key="w_patterns")
    patterns.set_value([p for p in patterns.value if p != "MatMulAdd"]).run()
    assert "**0 rewrites**" in texts(at) and "No pattern applies to this model." in texts(at)


def test_an_unsupported_operator_is_named_with_the_partial_trace():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="ok"),
         helper.make_node("NoSuchOp", ["r"], ["y"], name="mystery", domain="")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    at = upload(start("tiny_mlp"), "mystery.onnx", model.SerializeToString())
    assert not at.exception
    [error] = at.error
    assert "UnsupportedOperatorError" in shown(error.value) and "NoSuchOp" in shown(error.value)
    assert at.session_state["active_model"].label == "mystery.onnx"
    at.switch_page(PAGES["graph"]).run()
    svg = diagram_svg(at, state.W_GRAPH_CLICK)  # the failing node is marked in the diagram
    assert outline(svg, "mystery") == NODE_STATES["error"]["color"]


def test_first_nonfinite_jumps_to_the_node_that_made_it():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="clip_below"), helper.make_node("Sqrt", ["r"], ["s"], name="root"),
         helper.make_node("Log", ["s"], ["y"], name="log")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    at = upload(start("tiny_mlp"), "log.onnx", model.SerializeToString())
    at.switch_page(PAGES["step"]).run()
    with np.errstate(divide="ignore"):
        trace = explorer.run(explorer.load(model), explorer.load(model).example_inputs(seed=0))
    expected = trace.first_nonfinite()
    assert expected is not None  # random inputs of seed 0 hold a negative value: log(sqrt(0)) = -inf
    step_move(at, "nonfinite")
    assert at.session_state["cursor"] == expected.index
    assert "Log 'log'" in position(at) and "Inf " in html_text(at)


def test_drill_into_a_body_and_back_with_the_breadcrumbs():
    at = start("nested_loops")
    at.selectbox(key="w_node_pick").set_value("enc/body/inner").run()
    at.button(key=state.keyed("w_drill", "enc/body/inner/body")).click().run()
    assert_clean(at)
    svg = diagram_svg(at, state.W_GRAPH_CLICK)
    assert outline(svg, "enc/body/inner/body/parity") is not None and outline(svg, "enc") is None
    assert [b.label for b in at.button if b.key and b.key.startswith("w_crumb:")] == [
        "main graph", "Scan 'enc' · body", "Loop 'inner' · body"]
    at.button(key=state.keyed("w_crumb", "")).click().run()  # back to the main graph
    assert outline(diagram_svg(at, state.W_GRAPH_CLICK), "enc") is not None


def test_step_diagram_can_draw_only_the_current_graph():
    at = start("nested_loops")
    at.switch_page(PAGES["step"]).run()
    at.button_group(key="w_step_view").set_value("graph").run()
    assert step_state(at, "enc/body/inner/body/parity") == "current"
    svg = diagram_svg(at, "w_step_diagram")
    assert outline(svg, "enc") is None and outline(svg, "enc/body/squash") is None


def test_loops_page_on_a_sequence_map():
    body = helper.make_graph(
        [helper.make_node("Mul", ["x", "x"], ["sq"], name="square")], "body",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("sq", TensorProto.FLOAT, [3])])
    seq = helper.make_tensor_sequence_value_info
    graph = helper.make_graph([helper.make_node("SequenceMap", ["xs"], ["squares"], name="map", body=body)], "g",
                              [seq("xs", TensorProto.FLOAT, [3])], [seq("squares", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    at = upload(start("tiny_mlp"), "map.onnx", model.SerializeToString())
    at.switch_page(PAGES["loops"]).run()
    assert_clean(at)
    assert "**2 iterations**" in texts(at)  # random sequences have 2 elements
    [table] = [f for f in record_tables(at) if "iteration" in f.columns]
    assert list(table.columns) == ["iteration", "→ x", "sq →"]
    feeds = explorer.load(model).example_inputs(seed=0)["xs"]
    assert table["sq →"].tolist() == [short_text(x * x) for x in feeds]


def test_collapse_and_expand_a_body():
    at = start("nested_loops")
    at.selectbox(key="w_node_pick").set_value("enc/body/inner").run()
    at.button(key=state.keyed("w_fold", "enc/body/inner/body")).click().run()  # drawn expanded by default: collapse it
    assert_clean(at)
    svg = diagram_svg(at, state.W_GRAPH_CLICK)
    assert outline(svg, "enc/body/inner") is not None and outline(svg, "enc/body/inner/body/parity") is None
    assert at.button(key=state.keyed("w_fold", "enc/body/inner/body")).label == "Expand body"
    at.button(key=state.keyed("w_fold", "enc/body/inner/body")).click().run()
    assert outline(diagram_svg(at, state.W_GRAPH_CLICK), "enc/body/inner/body/parity") is not None


def test_without_graphviz_the_canvas_lays_diagrams_out_in_the_browser(monkeypatch):
    from explorer.ui import diagram

    monkeypatch.setattr(diagram, "dot_available", lambda: False)
    at = start("nested_loops")
    assert_clean(at)
    drawn = diagram_args(at, state.W_GRAPH_CLICK)
    assert "svg" not in drawn and "cluster" in drawn["dot"]  # the same DOT, laid out by Graphviz in WebAssembly
    assert drawn["layout"]  # named by its text, so the browser lays each drawing out once
    at.switch_page(PAGES["loops"]).run()
    assert_clean(at)
    assert all("dot" in json.loads(c.proto.json_args) for c in at.get("component_instance"))


def test_loops_page_draws_both_branches_of_an_if_with_the_taken_one_traced():
    from explorer.inputs.samples import sample_inputs

    model = explorer.load(sample_path("if_sign"))
    feeds = sample_inputs("if_sign") or model.example_inputs(seed=0)
    taken, other = ("then_branch", "else_branch") if feeds["x"].sum() > 0 else ("else_branch", "then_branch")
    at = start("if_sign")
    at.switch_page(PAGES["loops"]).run()
    at.selectbox(key="w_loop").set_value("branch").run()
    assert_clean(at)
    assert f"{taken} · taken" in texts(at) and f"{other} · not taken" in texts(at)
    current = NODE_STATES["current"]["color"]
    node_of = {"then_branch": "branch/then_branch/double", "else_branch": "branch/else_branch/negate"}
    assert outline(diagram_svg(at, state.keyed("w_if_diagram", "branch", taken)), node_of[taken]) == current
    assert outline(diagram_svg(at, state.keyed("w_if_diagram", "branch", other)), node_of[other]) != current


HOSTILE_NAMES = {"input": "![x](http://host/p.png)", "node": "[click](http://host/)",
                 "output": "<img src=x onerror=alert(1)> :red[boom] $x$"}


def hostile_model() -> bytes:
    """Names made to be rendered: a markdown image, a link, raw HTML, a Streamlit colour directive and math."""
    names = HOSTILE_NAMES
    graph = helper.make_graph(
        [helper.make_node("Relu", [names["input"]], [names["output"]], name=names["node"])], "g",
        [helper.make_tensor_value_info(names["input"], TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info(names["output"], TensorProto.FLOAT, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def rendered_texts(at: AppTest) -> list[str]:
    """The markdown source of every text element on the page."""
    kinds = ("markdown", "caption", "error", "warning", "info", "success", "subheader", "header", "title")
    return [element.value for kind in kinds for element in at.get(kind)]


def test_model_controlled_names_are_shown_as_text_never_as_markdown_or_html():
    at = upload(start("tiny_mlp"), "![f](http://host/f.png).onnx", hostile_model())
    assert at.session_state["active_model"].label == "![f](http://host/f.png).onnx"
    at.selectbox(key="w_node_pick").set_value(HOSTILE_NAMES["node"]).run()
    sources = rendered_texts(at)
    at.switch_page(PAGES["step"]).run()
    sources += rendered_texts(at)
    assert not at.exception
    tags, html_seen = html_shown(at)  # the step's values: the names as text, no tag of theirs
    assert tags <= {"style", "div", "h5", "p", "b", "code", "span", "table", "thead", "tbody", "tr", "th", "td"}
    for source in sources:
        html = rendered(source)
        assert "<img" not in html and "<a " not in html, source
        assert ":red[" not in source and "$x$" not in source, source
    seen = "\n".join(shown(source) for source in sources) + html_seen
    for name in [*HOSTILE_NAMES.values(), "![f](http://host/f.png).onnx"]:
        assert name in seen, name


def test_the_step_shows_its_outputs_in_full_and_its_inputs_in_full_on_request():
    at = start("tiny_mlp")
    at.switch_page(PAGES["step"]).run()
    feeds = at.session_state["run_request"].make_feeds()  # what the app runs the sample on
    event = explorer.run(explorer.load(sample_path("tiny_mlp")), feeds).events[0]
    tables = len(value_tables(at))
    assert tables == sum(np.ndim(v) > 0 for v in event.outputs.values())  # only the outputs are tabled
    [output] = event.outputs.values()
    np.testing.assert_allclose(value_tables(at)[-1].to_numpy().astype(float), output.reshape(-1, output.shape[-1]), rtol=1e-5)
    for name in event.inputs:
        assert f"<b>{name}</b>" in html_text(at)  # the inputs' statistics all the same
    at.toggle(key=state.W_STEP_INPUTS_IN_FULL).set_value(True).run()
    assert_clean(at)
    assert len(value_tables(at)) == tables + sum(np.ndim(v) > 0 for v in event.inputs.values())


def test_the_step_plots_its_values_on_request_and_keeps_the_choice_from_step_to_step():
    at = start("tiny_mlp")
    at.switch_page(PAGES["step"]).run()
    feeds = at.session_state["run_request"].make_feeds()
    trace = explorer.run(explorer.load(sample_path("tiny_mlp")), feeds)
    assert chart_titles(at) == []  # stepping redraws no plots unless asked to
    at.toggle(key=state.W_STEP_PLOTS).set_value(True).run()
    assert_clean(at)
    assert chart_titles(at) == list(trace.events[0].outputs)  # drawn inline by default
    interactive(at)
    [figure] = figures(at)  # event 0 (MatMul) writes one matrix
    [(name, value)] = trace.events[0].outputs.items()
    np.testing.assert_allclose(array(figure.data[0].z), value, rtol=1e-6)
    assert figure.layout.title.text == name
    step_move(at, "next")
    [(name, value)] = trace.events[1].outputs.items()
    assert [f.layout.title.text for f in figures(at)] == [name]  # still plotted at the next step
    at.toggle(key=state.W_STEP_INPUTS_IN_FULL).set_value(True).run()
    plotted = {f.layout.title.text for f in figures(at)}
    assert plotted == {name, *(n for n, v in trace.events[1].inputs.items() if np.ndim(v) > 0)}
