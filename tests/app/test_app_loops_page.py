"""The Loops page on hard cases: a run that fails inside a loop still shows the iterations recorded before the
failure (for the right execution of a nested loop) and says it did not finish; a long loop is tabled and
plotted over its first iterations only."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import explorer
from explorer.ui import state
from explorer.views import loops
from explorer.views.html_blocks import LISTED_ROWS
from tests.support.apptest import record_tables, start, upload

INNER = "scan/body/inner"


def failing_nested():
    """Scan over (x_t, n_t) rows; per row an inner Loop runs twice, reshaping x_t to [n_t, -1]: 4 elements
    reshape to n_t = 2 rows, not to 3, so the run fails in Scan step 1, inner iteration 0."""
    loop_body = h.make_graph(
        [h.make_node("Concat", ["n_t", "minus_one"], ["shape"], name="shape", axis=0),
         h.make_node("Reshape", ["x_t", "shape"], ["rows"], name="rows"),
         h.make_node("ReduceSum", ["rows"], ["total"], name="total", keepdims=0),
         h.make_node("Add", ["acc_in", "total"], ["acc_out"], name="accumulate"),
         h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going")], "inner_body",
        [h.make_tensor_value_info("j", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("acc_in", T.FLOAT, [])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [])],
        [numpy_helper.from_array(np.array([-1], np.int64), "minus_one")])
    scan_body = h.make_graph(
        [h.make_node("Loop", ["two", "", "s_in"], ["s_out"], name="inner", body=loop_body),
         h.make_node("Identity", ["s_out"], ["y_t"], name="emit")], "scan_body",
        [h.make_tensor_value_info("s_in", T.FLOAT, []), h.make_tensor_value_info("x_t", T.FLOAT, [4]),
         h.make_tensor_value_info("n_t", T.INT64, [1])],
        [h.make_tensor_value_info("s_out", T.FLOAT, []), h.make_tensor_value_info("y_t", T.FLOAT, [])],
        [numpy_helper.from_array(np.array(2, np.int64), "two")])
    graph = h.make_graph(
        [h.make_node("Scan", ["s0", "X", "N"], ["s", "Y"], name="scan", body=scan_body, num_scan_inputs=2)], "g",
        [h.make_tensor_value_info("X", T.FLOAT, [2, 4])],
        [h.make_tensor_value_info("s", T.FLOAT, []), h.make_tensor_value_info("Y", T.FLOAT, [2])],
        [numpy_helper.from_array(np.array(0, np.float32), "s0"),
         numpy_helper.from_array(np.array([[2], [3]], np.int64), "N")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])


@pytest.fixture(scope="module")
def failed():
    model = explorer.load(failing_nested())
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    with pytest.raises(explorer.errors.ExecutionError) as caught:
        explorer.run(model, {"X": x})
    return model, caught.value.trace


def test_the_unfinished_run_is_listed_after_the_finished_ones(failed):
    model, trace = failed
    runs = loops.executions(model, trace, INNER)
    assert [(r.iteration, r.event is not None) for r in runs] == [((0,), True), ((1,), False)]
    assert loops.stop_reason(runs[0]) == "trip count reached after 2 iterations"
    assert loops.stop_reason(runs[1]) == "ExecutionError at 'scan/body/inner/body/rows' in iteration 0"
    [outer] = loops.executions(model, trace, "scan")  # the Scan failed in its step 1
    assert outer.event is None and outer.failure.endswith("in iteration 1")
    # the Scan's step 0 finished: 0+1+2+3 added twice
    [step0] = loops.iterations_of(trace, outer)
    assert step0.index == (0,) and step0.outputs["s_out"] == 12


def test_the_events_of_an_unfinished_iteration(failed):
    model, trace = failed
    unfinished = loops.executions(model, trace, "scan")[0]
    ran = loops.iteration_events(trace, unfinished, (1,))
    assert [e.node for e in ran] == ["scan/body/inner/body/shape", "scan/body/inner/body/rows"]
    assert "error" in ran[-1].info


def test_loops_page_shows_the_partial_iterations():
    at = upload(start(), "fails.onnx", failing_nested().SerializeToString())
    at.switch_page("explorer/ui/pages/loops.py").run()
    assert not at.exception
    text = "\n".join(m.value for m in at.markdown)
    assert "**1 iteration** · did not finish: ExecutionError at 'scan/body/inner/body/rows' in iteration 1" in text
    at.selectbox(key="w_loop").set_value(INNER).run()
    at.selectbox(key=state.keyed("w_loop_exec", INNER)).set_value(1).run()  # Scan step 1: failed in its first iteration
    assert not at.exception
    assert "**0 iterations** · did not finish" in "\n".join(m.value for m in at.markdown)


def test_a_long_loop_is_tabled_and_plotted_over_its_first_iterations():
    # the Loop spec's body with b = 2 < a = 3 keeps going (b alternates 2, 1, 2...) up to the trip count
    at = start("loop_spec")
    at.radio(key="w_input_mode").set_value("Upload .npz or .pb").run()
    buf = io.BytesIO()
    np.savez(buf, a=np.int32(3), b=np.int32(2), keepgoing=np.bool_(True), max_trip_count=np.int64(1500))
    at.file_uploader(key="w_npz").upload("long.npz", buf.getvalue()).run()
    at.switch_page("explorer/ui/pages/loops.py").run()
    assert not at.exception
    assert "**1500 iterations** · stopped: trip count reached after 1500 iterations" in [m.value for m in at.markdown]
    assert "first 1000 iterations; the slider reaches all 1500" in "\n".join(c.value for c in at.caption)
    [table] = [f for f in record_tables(at) if "iteration" in f.columns]
    assert len(table) == LISTED_ROWS and table["b_out →"].tolist()[:3] == [1, 2, 1]  # until all are asked for
    at.toggle[0].set_value(True).run()
    assert at.toggle[0].label == f"List all {loops.MAX_SHOWN} iterations"
    [table] = [f for f in record_tables(at) if "iteration" in f.columns]
    assert table["iteration"].tolist() == list(range(loops.MAX_SHOWN))
    assert next(s for s in at.slider if s.label == "Iteration").max == 1499


def test_a_beam_search_is_shown_step_by_step():
    """onnxruntime's BeamSearch (GPT-2, made by convert_generation): its decode steps tabled row by row (the token,
    the row it continues, its score), the decoder drawn at the chosen step."""
    folder = Path(__file__).resolve().parents[1] / "models" / "generation_ops"
    expected = np.load(folder / "expected.npz")
    at = upload(start(), "beam.onnx", (folder / "gpt2_beam.onnx").read_bytes())
    at.radio(key="w_input_mode").set_value("Upload .npz or .pb").run()
    buf = io.BytesIO()
    np.savez(buf, **{key.split("/", 1)[1]: expected[key] for key in expected.files if key.startswith("beam/")})
    at.file_uploader(key="w_npz").upload("beam.npz", buf.getvalue()).run()
    at.switch_page("explorer/ui/pages/loops.py").run()
    assert not at.exception
    assert "**12 decode steps** · stopped: max\\_length reached after 12 iterations" in [m.value for m in at.markdown]
    [table] = [f for f in record_tables(at) if "token" in f.columns]
    assert len(table) == LISTED_ROWS  # until all are asked for
    [listing] = [t for t in at.toggle if t.label.startswith("List all")]
    listing.set_value(True).run()
    [table] = [f for f in record_tables(at) if "token" in f.columns]
    assert len(table) == 12 * 2 * 4  # steps × batch × beams
    assert {"step", "row", "token", "continues row", "score", "finished", "subgraphs"} <= set(table.columns)
    assert "##### The decoder at the end of step 0" in [m.value for m in at.markdown]


def test_a_merged_decoders_branches_are_drawn_as_the_overview_of_their_layers():
    """optimum's merged T5 decoder: an If whose two branches hold 520 and 546 nodes. Each is drawn as the
    overview of its layers (the Graph page's budget for a model of that size), not node by node (259 and 246
    boxes, half a megabyte of SVG each, which a new browser took most of a second to draw)."""
    from xml.etree import ElementTree

    from explorer.views.draw_plan import OVERVIEW_BOXES
    from tests.support.apptest import SVG, diagram_args

    model = Path(__file__).resolve().parents[1] / "models" / "optimum_exports" / "t5_decoder_merged.onnx"
    at = start()
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(model)).run()
    at.switch_page("explorer/ui/pages/loops.py").run()
    assert not at.exception
    for branch in ("then_branch", "else_branch"):
        args = diagram_args(at, state.keyed(state.K_IF_DIAGRAM, "optimum::if", branch))
        boxes = [g for g in ElementTree.fromstring(args["svg"]).iter(f"{SVG}g") if g.get("class") == "node"]
        assert 10 <= len(boxes) <= OVERVIEW_BOXES + 15, (branch, len(boxes))
        assert any("decoder" in "".join(g.itertext()) for g in boxes)  # a layer's box, named by its module path
