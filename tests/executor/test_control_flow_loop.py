"""Loop against onnxruntime: the five modes of the spec's table, zero iterations, scalar scan outputs, carried
sequences/optionals/growing tensors, shadowed body inputs, pass-through outputs; stop reasons per execution."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import helper as h

import explorer
from tests.support import control_flow_models as cf
from tests.support.control_flow_models import I64, B, F, const, graph, node, opt_vi, seq_vi, vi

MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"


def _feeds(mode: str, x0: np.ndarray, trip: int = 0, cond: bool = True, **extra: np.ndarray) -> dict:
    feeds = {"x0": x0, **extra}
    if mode in ("trip", "both"):
        feeds["M"] = np.array(trip, np.int64)
    if mode in ("cond", "both"):
        feeds["cond"] = np.array(cond)
    return feeds


def _hand_loop(x0: np.ndarray, trip: int | None, cond: bool, limit: float | None) -> tuple[np.ndarray, int, str]:
    """The loop as onnxruntime runs it: the body's cond output ends it even when the cond input is omitted."""
    x, i, keep = x0, 0, cond
    while True:
        if trip is not None and i >= trip:
            return x, i, "trip count reached"
        if not keep:
            return x, i, "cond false"
        x = x * np.float32(1.5) + np.float32(i)
        keep = bool(x.sum() < limit) if limit is not None else keep
        i += 1


X0 = np.array([0.5, -1.0, 2.0], np.float32)

# (mode, limit, trip count, cond): every mode of the spec's table, and each way out of it
CASES = [
    ("none", 20.0, 0, True),  # neither M nor cond: runs until the body's cond is false
    ("cond", 20.0, 0, True),  # while loop
    ("cond", 20.0, 0, False),  # while loop whose cond is false at the start: zero iterations
    ("do_while", 20.0, 0, True),  # cond input is a constant true
    ("trip", None, 5, True),  # for loop: the body passes cond on
    ("trip", None, 0, True),  # zero-trip for loop
    ("trip", 20.0, 50, True),  # for loop whose body cond goes false first: onnxruntime stops there
    ("both", None, 6, True),
    ("both", 20.0, 50, True),  # cond false before the trip count
    ("both", 1e9, 3, True),  # trip count before cond false
    ("both", 20.0, 3, False),  # cond false at the start
]


@pytest.mark.parametrize(("mode", "limit", "trip", "cond"), CASES)
def test_loop_modes_match_onnxruntime(mode, limit, trip, cond):
    proto = cf.loop_model(mode, limit=limit)
    for seed in range(3):
        x0 = (X0 + np.random.default_rng(seed).standard_normal(3)).astype(np.float32)
        trace = cf.run_both(proto, _feeds(mode, x0, trip, cond))
        x, count, reason = _hand_loop(x0, trip if mode in ("trip", "both") else None,
                                      cond if mode in ("cond", "both") else True, limit)
        np.testing.assert_allclose(trace.outputs["x_final"], x, rtol=1e-6)
        info = trace.event("loop").info
        assert (info["iterations"], info["stop_reason"]) == (count, reason)
        assert trace.outputs["xs_stacked"].shape == (count, 3)
        assert trace.outputs["totals"].shape == (count,)  # scalar scan outputs stack to (N,)
        assert [r.index for r in trace.iterations("loop")] == [(k,) for k in range(count)]


def test_body_cond_ends_a_loop_without_cond_input():
    """The spec's table says the body's cond is ignored when the cond input is omitted; onnxruntime (and
    explorer) end the loop there anyway. Five iterations would run under the table; only 2 do."""
    proto = cf.loop_model("trip", limit=5.0)
    feeds = _feeds("trip", np.array([1.0, 1.0, 1.0], np.float32), trip=5)
    trace = cf.run_both(proto, feeds)
    records = trace.iterations("loop")
    assert [bool(r.outputs["cond_out"]) for r in records] == [True, False]
    assert trace.event("loop").info == {"stop_reason": "cond false", "iterations": 2,
                                        "children": trace.event("loop").info["children"]}


def test_loop_iteration_records_are_keyed_by_body_names():
    proto = cf.loop_model("both", limit=1e9)
    trace = cf.run_both(proto, _feeds("both", X0, trip=3))
    records = trace.iterations("loop")
    previous = X0
    for k, record in enumerate(records):
        assert record.index == (k,)
        assert set(record.inputs) == {"i", "cond_in", "x_in"}
        assert set(record.outputs) == {"cond_out", "x_out", "xs", "total"}
        assert record.inputs["i"] == k and record.inputs["i"].dtype == np.int64
        np.testing.assert_array_equal(record.inputs["x_in"], previous)
        np.testing.assert_array_equal(trace.outputs["xs_stacked"][k], record.outputs["xs"])
        assert trace.outputs["totals"][k] == record.outputs["total"]
        previous = record.outputs["x_out"]
    assert bool(records[0].inputs["cond_in"]) is True


def test_zero_iterations_keep_initial_values_and_declared_scan_shapes():
    proto = cf.loop_model("trip", width=4)
    x0 = np.arange(4, dtype=np.float32)
    trace = cf.run_both(proto, _feeds("trip", x0, trip=0))
    assert trace.outputs["xs_stacked"].shape == (0, 4) and trace.outputs["totals"].shape == (0,)
    np.testing.assert_array_equal(trace.outputs["x_final"], x0)
    assert trace.iterations("loop") == [] and len(trace.events) == 1


def test_body_input_shadows_outer_value_of_the_same_name():
    """The outer graph defines `x_in` (= -x0); the body's formal input `x_in` must win."""
    proto = cf.loop_model("trip", shadow="x_in")
    trace = cf.run_both(proto, _feeds("trip", X0, trip=4))
    np.testing.assert_array_equal(trace.iterations("loop")[0].inputs["x_in"], X0)
    np.testing.assert_array_equal(trace.value("x_in", "shadowing"), -X0)


def test_body_output_passing_an_input_straight_through():
    proto = cf.loop_model("both", limit=30.0, passthrough=True)
    p0 = np.random.default_rng(1).standard_normal(3).astype(np.float32)
    trace = cf.run_both(proto, _feeds("both", X0, trip=9, p0=p0))
    np.testing.assert_array_equal(trace.outputs["p_final"], p0)
    assert len(trace.iterations("loop")) > 1


def test_body_output_naming_an_outer_value():
    """onnxruntime refuses a body output that is an outer value (it wants an Identity in between); the spec
    does not forbid it, so explorer runs it: hand-checked, the carried value is the outer value after one turn."""
    proto = cf.loop_model("both", limit=30.0, outer="outer_v")
    rng = np.random.default_rng(1)
    o0, outer = (rng.standard_normal(3).astype(np.float32) for _ in range(2))
    trace = explorer.run(explorer.load(proto), _feeds("both", X0, trip=9, o0=o0, outer_v=outer))
    records = trace.iterations("loop")
    np.testing.assert_array_equal(records[0].inputs["o_in"], o0)
    for record in records:
        np.testing.assert_array_equal(record.outputs["outer_v"], outer)
    for record in records[1:]:
        np.testing.assert_array_equal(record.inputs["o_in"], outer)
    np.testing.assert_array_equal(trace.outputs["o_final"], outer)
    with pytest.raises(Exception, match="outer scope value being returned directly"):
        cf.ort_run(proto, _feeds("both", X0, trip=9, o0=o0, outer_v=outer))


@pytest.mark.skipif(not MODELS.is_dir(), reason="../shared/models is absent")
def test_real_model_body_input_shadows_outer_scope_value():
    path = (MODELS / "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/"
            "subgraph_input_shadows_outer_scope_value.onnx")
    model = explorer.load(path)
    feeds = {"a": np.array([3.0], np.float32), "b": np.array([6.0], np.float32),
             "keep_going_inp": np.array([True]), "max_trip_count": np.array([10], np.int64)}
    trace = explorer.run(model, feeds)
    cf.assert_same(trace.outputs, cf.ort_run(model.proto, feeds))
    # hand-computed (the spec's example, a=3, b=6): b' = a - b = -3, a + b > b' goes on; then b' = 6, 0 > 6 stops.
    # The graph output `b` is the outer input itself, untouched by the body's `b`.
    assert [float(r.inputs["b"][0]) for r in trace.iterations("Loop_0")] == [6.0, -3.0]
    np.testing.assert_array_equal(trace.outputs["user_defined_vals"], [[-6.0], [12.0]])
    np.testing.assert_array_equal(trace.outputs["b"], [6.0])


def _carry_model() -> tuple:
    """A Loop carrying an optional (filled), an empty optional passed straight through, a sequence it appends to,
    and a tensor that grows by one row per iteration; scan outputs a bool per iteration."""
    body = graph([
        node("OptionalGetElement", ["opt_in"], ["v"]),
        node("Add", ["v", "one"], ["v2"]),
        node("Optional", ["v2"], ["opt_out"]),
        node("OptionalHasElement", ["empty_in"], ["has"]),
        node("SequenceInsert", ["seq_in", "v2"], ["seq_out"]),
        node("Unsqueeze", ["v2", "zero"], ["row"]),
        node("Concat", ["grow_in", "row"], ["grow_out"], axis=0),
        node("Identity", ["cond_in"], ["cond_out"]),
    ], "carry_body",
        [vi("i", I64, []), vi("cond_in", B, []), opt_vi("opt_in", F, [3]), opt_vi("empty_in", F, [3]),
         seq_vi("seq_in", F, [3]), vi("grow_in", F, [None, 3])],
        [vi("cond_out", B, []), opt_vi("opt_out", F, [3]), opt_vi("empty_in", F, [3]), seq_vi("seq_out", F, [3]),
         vi("grow_out", F, [None, 3]), vi("has", B, [])],
        [const("one", 1.0), const("zero", [0], np.int64)])
    main = graph([
        node("Optional", ["x"], ["opt0"]),
        node("Optional", [], ["empty0"], type=h.make_tensor_type_proto(F, [3])),
        node("SequenceEmpty", [], ["seq0"], dtype=F),
        node("Unsqueeze", ["x", "zero"], ["grow0"]),
        node("Loop", ["M", "", "opt0", "empty0", "seq0", "grow0"],
             ["opt_final", "empty_final", "seq_final", "grown", "has_all"], name="loop", body=body),
        node("OptionalGetElement", ["opt_final"], ["x_final"]),
        node("OptionalHasElement", ["empty_final"], ["empty_has"]),
    ], "carry", [vi("M", I64, []), vi("x", F, [3])],
        [vi("x_final", F, [3]), vi("empty_has", B, []), seq_vi("seq_final", F, [3]), vi("grown", F, [None, 3]),
         vi("has_all", B, None)], [const("zero", [0], np.int64)])
    return cf.model(main, 18)


@pytest.mark.parametrize("trip", [0, 1, 4])
def test_loop_carried_sequences_optionals_and_growing_tensors(trip):
    x = np.array([0.0, 1.0, 2.0], np.float32)
    trace = cf.run_both(_carry_model(), {"M": np.array(trip, np.int64), "x": x})
    assert len(trace.outputs["seq_final"]) == trip
    assert trace.outputs["grown"].shape == (trip + 1, 3)
    records = trace.iterations("loop")
    for k, record in enumerate(records):
        assert len(record.inputs["seq_in"]) == k and record.inputs["empty_in"] is None
        np.testing.assert_array_equal(record.outputs["opt_out"], x + k + 1)
        assert record.outputs["grow_out"].shape == (k + 2, 3)


def test_scan_output_changing_shape_is_a_clear_error():
    body = graph([node("Range", ["zero", "i", "one"], ["r"]), node("Identity", ["cond_in"], ["cond_out"])],
                 "ragged", [vi("i", I64, []), vi("cond_in", B, [])], [vi("cond_out", B, []), vi("r", I64, None)],
                 [const("zero", 0, np.int64), const("one", 1, np.int64)])
    main = graph([node("Loop", ["M", ""], ["rs"], name="loop", body=body)], "ragged_loop", [vi("M", I64, [])],
                 [vi("rs", I64, None)])
    with pytest.raises(explorer.ExecutionError) as info:
        explorer.run(explorer.load(cf.model(main)), {"M": np.array(3, np.int64)})
    assert info.value.node == "loop" and "changes shape across iterations" in str(info.value)
    with pytest.raises(Exception, match="(?i)shape"):  # onnxruntime refuses it too
        cf.ort_run(cf.model(main), {"M": np.array(3, np.int64)})


def test_non_scalar_trip_count_is_a_clear_error():
    proto = cf.loop_model("trip")
    model = explorer.load(proto)
    model.proto.graph.input[0].type.tensor_type.shape.dim.add().dim_value = 2
    with pytest.raises(explorer.ExecutionError, match=r"node 'loop' \(Loop\).*M \(trip count\) must hold one value"):
        explorer.run(model, {"M": np.array([2, 3], np.int64), "x0": X0})


def test_body_value_that_is_both_carried_and_scan_output():
    body = graph([node("Add", ["s", "one"], ["s_out"]), node("Identity", ["c"], ["c_out"])], "count",
                 [vi("i", I64, []), vi("c", B, []), vi("s", F, [2])],
                 [vi("c_out", B, []), vi("s_out", F, [2]), vi("s_out", F, [2])], [const("one", 1.0)])
    main = graph([node("Loop", ["M", "", "s0"], ["s_final", "ys"], name="loop", body=body)], "count",
                 [vi("M", I64, []), vi("s0", F, [2])], [vi("s_final", F, [2]), vi("ys", F, [None, 2])])
    trace = cf.run_both(cf.model(main), {"M": np.array(3, np.int64), "s0": np.zeros(2, np.float32)})
    np.testing.assert_array_equal(trace.outputs["ys"], [[1, 1], [2, 2], [3, 3]])


@pytest.mark.parametrize("shape", [None, ["n", 3], [None, 3], [2, 3]])
@pytest.mark.parametrize("trip", [0, -2])
def test_zero_and_negative_trip_counts_stack_nothing(shape, trip):
    """The stacked scan output of a loop that never runs takes its other dims from the body's declared type
    (unknown dims are 0), as onnxruntime does."""
    body = graph([node("Identity", ["c"], ["c_out"]), node("Tile", ["x", "reps"], ["y"])], "tile",
                 [vi("i", I64, []), vi("c", B, [])], [vi("c_out", B, []), vi("y", F, shape)])
    main = graph([node("Loop", ["M", ""], ["ys"], name="loop", body=body)], "never",
                 [vi("M", I64, []), vi("x", F, [2, 3]), vi("reps", I64, [2])], [vi("ys", F, None)])
    feeds = {"M": np.array(trip, np.int64), "x": np.ones((2, 3), np.float32), "reps": np.array([1, 1], np.int64)}
    trace = cf.run_both(cf.model(main), feeds)
    assert trace.outputs["ys"].shape[0] == 0
    assert trace.event("loop").info["stop_reason"] == "trip count reached"


def test_body_input_shadows_the_main_graph_value_for_a_nested_if():
    """Main input `v`; the Loop body's input is also `v`; the If inside the body reads `v`: the body's."""
    then_branch = graph([node("Mul", ["v", "two"], ["t_out"])], "then", [], [vi("t_out", F, [2])])
    else_branch = graph([node("Neg", ["v"], ["e_out"])], "else", [], [vi("e_out", F, [2])])
    body = graph([node("ReduceSum", ["v"], ["s"], keepdims=0), node("Greater", ["s", "zero"], ["pos"]),
                  node("If", ["pos"], ["v_out"], name="branch", then_branch=then_branch, else_branch=else_branch),
                  node("Identity", ["c"], ["c_out"]), node("Identity", ["v_out"], ["v_seen"])], "body",
                 [vi("i", I64, []), vi("c", B, []), vi("v", F, [2])],
                 [vi("c_out", B, []), vi("v_out", F, [2]), vi("v_seen", F, [2])])
    main = graph([node("Add", ["v", "v"], ["w"], name="double"),
                  node("Loop", ["M", "", "w"], ["final", "all"], name="loop", body=body)], "shadow",
                 [vi("M", I64, []), vi("v", F, [2])], [vi("final", F, [2]), vi("all", F, None)],
                 [const("two", 2.0), const("zero", 0.0)])
    trace = cf.run_both(cf.model(main), {"M": np.array(4, np.int64), "v": np.array([1.0, -3.0], np.float32)})
    assert [trace.branch("loop/body/branch", (i,)) for i in range(4)] == ["else_branch"] + ["then_branch"] * 3
    np.testing.assert_array_equal(trace.outputs["final"], [-16.0, 48.0])  # by hand: -(2v), then doubled 3 times


@pytest.mark.parametrize("opset", [9, 11, 13, 16, 19, 21])  # Loop-1, -11, -13, -16, -19, -21
@pytest.mark.parametrize("iteration_shape", [[], [1]])
def test_iteration_number_has_the_rank_the_body_declares(iteration_shape, opset):
    """onnxruntime feeds the iteration number with the rank of the body's declared input: a body declaring it
    [1] stacks it as [trip, 1], one declaring a scalar as [trip] (one carried value: Loop-1 needs one)."""
    body = graph([node("Identity", ["c"], ["c_out"]), node("Identity", ["x"], ["x_out"]),
                  node("Identity", ["i"], ["i_seen"])], "count",
                 [vi("i", I64, iteration_shape), vi("c", B, []), vi("x", F, [2])],
                 [vi("c_out", B, []), vi("x_out", F, [2]), vi("i_seen", I64, None)])
    main = graph([node("Loop", ["M", "", "x0"], ["x_final", "seen"], name="loop", body=body)], "count",
                 [vi("M", I64, []), vi("x0", F, [2])], [vi("x_final", F, [2]), vi("seen", I64, None)])
    feeds = {"M": np.array(3, np.int64), "x0": np.zeros(2, np.float32)}
    trace = cf.run_both(cf.model(main, opset), feeds)
    assert trace.outputs["seen"].shape == (3, *iteration_shape)
    np.testing.assert_array_equal(trace.outputs["seen"].reshape(-1), [0, 1, 2])
