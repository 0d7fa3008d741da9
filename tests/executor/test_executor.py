"""explorer.run: recording, feeds, errors with their location, limits, the memory budget, functions."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import explorer
from explorer import ExecutionError, FeedError, LimitExceeded, Limits

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
OPSET = [h.make_opsetid("", 21)]


def ort_run(proto: onnx.ModelProto, feeds: dict) -> dict:
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def test_mlp_matches_onnxruntime_and_records_every_node(monkeypatch):
    proto = onnx.load(SAMPLES / "tiny_mlp.onnx")
    model = explorer.load(proto)
    feeds = model.example_inputs(seed=5, dims={"batch": 3})
    ticks = iter(k * k for k in range(100))  # a clock whose k-th reading is k**2: each node's reads are 2n, 2n+1
    monkeypatch.setattr(explorer.executor.engine, "_perf", lambda: float(next(ticks)))
    trace = explorer.run(model, feeds)
    monkeypatch.undo()
    np.testing.assert_allclose(trace.outputs["probs"], ort_run(proto, feeds)["probs"], rtol=1e-5, atol=1e-6)
    assert [e.node for e in trace.events] == ["fc1", "fc1_bias", "relu", "fc2", "fc2_bias", "softmax"]
    first = trace.events[0]
    assert first.op_type == "MatMul" and first.iteration == ()
    assert set(first.inputs) == {"x", "W1"} and set(first.outputs) == {"h0"}
    np.testing.assert_allclose(first.outputs["h0"], feeds["x"] @ trace.value("W1"), rtol=1e-6)
    # each event's time is its own node's: read before and after its kernel, (2n + 1)**2 - (2n)**2 = 4n + 1
    assert [e.seconds for e in trace.events] == [4 * n + 1 for n in range(6)]
    relu = trace.event("relu")
    np.testing.assert_array_equal(relu.outputs["h2"], np.maximum(relu.inputs["h1"], 0))
    assert trace.value("h2") is relu.outputs["h2"]
    assert trace.first_nonfinite() is None


def test_iteration_tuples_in_nested_bodies():
    model = explorer.load(SAMPLES / "nested_loops.onnx")
    trace = explorer.run(model, model.example_inputs(dims={"T": 4}))
    adds = trace.events_of("enc/body/inner/body/branch/then_branch/add_x")
    halves = trace.events_of("enc/body/inner/body/branch/else_branch/halve")
    # 4 time steps x 3 inner iterations; even j adds, odd j halves
    assert [e.iteration for e in adds] == [(t, j) for t in range(4) for j in (0, 2)]
    assert [e.iteration for e in halves] == [(t, 1) for t in range(4)]
    assert trace.branch("enc/body/inner/body/branch", (2, 1)) == "else_branch"
    assert trace.branch("enc/body/inner/body/branch", (2, 2)) == "then_branch"
    assert [it.index for it in trace.iterations("enc/body/inner")][:4] == [(0, 0), (0, 1), (0, 2), (1, 0)]


def test_first_nonfinite_finds_the_node():
    graph = h.make_graph([h.make_node("Log", ["x"], ["l"], name="log"), h.make_node("Neg", ["l"], ["y"], name="neg")],
                         "g", [h.make_tensor_value_info("x", T.FLOAT, [3])], [h.make_tensor_value_info("y", T.FLOAT, [3])])
    model = explorer.load(h.make_model(graph, opset_imports=OPSET))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NaN/Inf are data in the trace, not NumPy warnings
        trace = explorer.run(model, {"x": np.array([1, 0, -1], np.float32)})
    assert trace.first_nonfinite().node == "log"


@pytest.mark.parametrize("numpy_state", [True, False])  # NumPy's own context variable, or np.errstate
def test_floating_errors_are_ignored_during_a_run_only(numpy_state, monkeypatch):
    from explorer.executor import float_errors

    if not numpy_state:
        monkeypatch.setattr(float_errors, "_STATE", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with float_errors.floating_errors_ignored():
            assert np.isinf(np.float32(1) / np.zeros(1, np.float32)).all()
            assert np.isnan(np.log(np.full(1, -1.0))).all()
        with pytest.raises(RuntimeWarning):
            np.float32(1) / np.zeros(1, np.float32)  # the caller's own state again


# ---- feeds -----------------------------------------------------------------------------------------------------
def _relu_model() -> explorer.Model:
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", 3])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["n", 3])])
    return explorer.load(h.make_model(graph, opset_imports=OPSET))


BAD_FEEDS = [
    ({}, r"missing input.*'x'.*float32"),
    ({"x": np.ones((2, 3), np.float32), "z": np.ones(1)}, "unknown input"),
    ({"x": np.ones((2, 3), np.float64)}, "'x'.*dtype float64"),
    ({"x": np.ones(3, np.float32)}, "'x'.*rank 2"),
    ({"x": np.ones((2, 4), np.float32)}, r"'x'.*axis 1 is 4"),
    ({"x": "hello"}, "'x'.*got a str"),
    ({"x": np.ones((2, 3), np.float32).astype(">f4")}, "'x'.*dtype >f4"),
]


@pytest.mark.parametrize("feeds, message", BAD_FEEDS)
def test_bad_feeds_name_the_input_and_its_expected_type(feeds, message):
    with pytest.raises(FeedError, match=message):
        explorer.run(_relu_model(), feeds)


def test_feeds_of_the_declared_types_are_taken_as_they_are_and_bad_ones_still_refused_after_them():
    model = _relu_model()
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    trace = explorer.run(model, {"x": x})
    assert trace.feeds["x"] is x  # no copy of what the user fed
    np.testing.assert_array_equal(trace.outputs["y"], np.maximum(x, 0))
    for feeds, message in BAD_FEEDS:  # the model's declarations are kept from the first run: same verdicts
        with pytest.raises(FeedError, match=message):
            explorer.run(model, feeds)
    np.testing.assert_array_equal(explorer.run(model, {"x": x[:1]}).outputs["y"], [[0, 2, 0]])


def test_only_initializers_that_are_graph_inputs_may_be_fed_as_onnxruntime_allows():
    w = numpy_helper.from_array(np.array([1.0, 2.0, 3.0], np.float32), "w")
    b = numpy_helper.from_array(np.array([10.0, 20.0, 30.0], np.float32), "b")
    graph = h.make_graph([h.make_node("Add", ["x", "w"], ["t"]), h.make_node("Add", ["t", "b"], ["y"])], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [3]), h.make_tensor_value_info("w", T.FLOAT, [3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [3])], [w, b])
    proto = h.make_model(graph, opset_imports=OPSET)
    model = explorer.load(proto)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    x, other = np.zeros(3, np.float32), np.full(3, 5.0, np.float32)
    [theirs] = session.run(None, {"x": x, "w": other})  # w is a graph input: overridable
    np.testing.assert_array_equal(explorer.run(model, {"x": x, "w": other}).outputs["y"], theirs)
    with pytest.raises(Exception):  # noqa: B017 - b is not a graph input; onnxruntime refuses it, whatever its words
        session.run(None, {"x": x, "b": other})
    with pytest.raises(FeedError, match=r"\['b'\] are initializers that are not graph inputs"):
        explorer.run(model, {"x": x, "b": other})


def test_tensor_proto_and_list_feeds_are_accepted():
    model = _relu_model()
    proto_feed = numpy_helper.from_array(np.array([[-1, 2, -3]], np.float32))
    np.testing.assert_array_equal(explorer.run(model, {"x": proto_feed}).outputs["y"], [[0, 2, 0]])
    np.testing.assert_array_equal(explorer.run(model, {"x": [[-1.0, 2.0, 3.0]]}).outputs["y"], [[0, 2, 3]])


# ---- errors ----------------------------------------------------------------------------------------------------
def _loop_failing_at(iteration: int) -> onnx.ModelProto:
    """A Loop whose body reshapes to an impossible shape once i == iteration."""
    body = h.make_graph(
        [
            h.make_node("Equal", ["i", "bad_i"], ["is_bad"], name="is_bad"),
            h.make_node("Where", ["is_bad", "bad_shape", "good_shape"], ["shape"], name="pick_shape"),
            h.make_node("Reshape", ["v_in", "shape"], ["v_out"], name="reshape"),
            h.make_node("Identity", ["c"], ["c_out"], name="keep"),
        ],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
         h.make_tensor_value_info("v_in", T.FLOAT, [6])],
        [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_tensor_value_info("v_out", T.FLOAT, [6])],
        [numpy_helper.from_array(np.array(iteration, np.int64), "bad_i"),
         numpy_helper.from_array(np.array([5], np.int64), "bad_shape"),
         numpy_helper.from_array(np.array([6], np.int64), "good_shape")])
    graph = h.make_graph([h.make_node("Loop", ["M", "", "v"], ["out"], name="loop", body=body)], "g",
                         [h.make_tensor_value_info("v", T.FLOAT, [6])], [h.make_tensor_value_info("out", T.FLOAT, [6])],
                         [numpy_helper.from_array(np.array(5, np.int64), "M")])
    return h.make_model(graph, opset_imports=OPSET)


def test_kernel_failure_names_node_iteration_and_shapes_and_keeps_the_partial_trace():
    model = explorer.load(_loop_failing_at(2))
    with pytest.raises(ExecutionError) as info:
        explorer.run(model, {"v": np.arange(6, dtype=np.float32)})
    err = info.value
    assert err.node == "loop/body/reshape" and err.op_type == "Reshape" and err.iteration == (2,)
    assert "loop/body/reshape" in str(err) and "(2,)" in str(err) and "float32[6]" in str(err)
    trace = err.trace
    assert trace.error.node == "loop/body/reshape" and not trace.complete
    assert [it.index for it in trace.iterations("loop")] == [(0,), (1,)]
    failed = trace.events[-1]  # the failing node closes the partial trace: its inputs, no outputs, the error
    assert failed.node == "loop/body/reshape" and failed.iteration == (2,) and failed.outputs == {}
    assert failed.info["error"] == str(err) and failed.inputs["shape"].tolist() == [5]
    assert trace.events[-2].node == "loop/body/pick_shape" and trace.events[-2].iteration == (2,)


def test_endless_loop_stops_at_the_iteration_limit_with_a_partial_trace():
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c_out"], name="forever"), h.make_node("Add", ["v_in", "one"], ["v_out"], name="inc")],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
         h.make_tensor_value_info("v_in", T.FLOAT, [])],
        [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_tensor_value_info("v_out", T.FLOAT, [])],
        [numpy_helper.from_array(np.array(1, np.float32), "one")])
    graph = h.make_graph([h.make_node("Loop", ["", "go", "v"], ["out"], name="spin", body=body)], "g",
                         [h.make_tensor_value_info("v", T.FLOAT, [])], [h.make_tensor_value_info("out", T.FLOAT, [])],
                         [numpy_helper.from_array(np.array(True), "go")])
    model = explorer.load(h.make_model(graph, opset_imports=OPSET))
    with pytest.raises(LimitExceeded, match="spin.*50 iterations") as info:
        explorer.run(model, {"v": np.array(0, np.float32)}, limits=Limits(max_iterations=50))
    err = info.value
    assert err.node == "spin" and err.limit == "max_iterations"
    trace = err.trace
    assert len(trace.iterations("spin")) == 50
    assert trace.iterations("spin")[-1].outputs["v_out"] == 50
    assert trace.event("spin").info["stop_reason"] == "limit"


def test_huge_allocation_is_refused_before_it_happens():
    graph = h.make_graph([h.make_node("ConstantOfShape", ["shape"], ["big"], name="alloc")], "g",
                         [h.make_tensor_value_info("shape", T.INT64, [2])], [h.make_tensor_value_info("big", T.FLOAT, None)])
    model = explorer.load(h.make_model(graph, opset_imports=OPSET))
    with pytest.raises(LimitExceeded, match="alloc") as info:
        explorer.run(model, {"shape": np.array([1 << 20, 1 << 20], np.int64)})
    assert info.value.limit == "max_tensor_bytes"


def test_output_beyond_the_tensor_limit_is_refused():
    model = _relu_model()
    with pytest.raises(LimitExceeded, match="max_tensor_bytes"):
        explorer.run(model, {"x": np.ones((100, 3), np.float32)}, limits=Limits(max_tensor_bytes=1000))


def test_over_budget_values_become_summaries_without_disk():
    model = explorer.load(SAMPLES / "tiny_mlp.onnx")
    feeds = model.example_inputs(dims={"batch": 4})
    trace = explorer.run(model, feeds, limits=Limits(trace_budget_bytes=200, trace_disk_bytes=0))
    full = explorer.run(model, feeds)
    assert trace.budget_exceeded_at is not None and trace.budget_exceeded_at > 0
    late = trace.events[-1]
    assert late.summarized
    summary = late.outputs["probs"]
    assert isinstance(summary, explorer.ValueSummary) and summary.shape == (4, 3)
    np.testing.assert_allclose(summary.max, full.outputs["probs"].max(), rtol=1e-6)
    assert not trace.events[0].summarized
    np.testing.assert_array_equal(trace.outputs["probs"], full.outputs["probs"])  # outputs are never summarized


# ---- functions -------------------------------------------------------------------------------------------------
def test_model_local_function_runs():
    function = h.make_function(
        "local", "Swish", ["x"], ["y"],
        [h.make_node("Sigmoid", ["x"], ["s"]), h.make_node("Mul", ["x", "s"], ["y"])], OPSET)
    graph = h.make_graph([h.make_node("Swish", ["x"], ["y"], domain="local", name="swish")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [4])], [h.make_tensor_value_info("y", T.FLOAT, [4])])
    proto = h.make_model(graph, opset_imports=[*OPSET, h.make_opsetid("local", 1)], functions=[function])
    x = np.array([-2, -0.5, 0.5, 3], np.float32)
    trace = explorer.run(explorer.load(proto), {"x": x})
    np.testing.assert_allclose(trace.outputs["y"], x / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_allclose(trace.outputs["y"], ort_run(proto, {"x": x})["y"], rtol=1e-6)


def test_schema_defined_function_op_runs():
    # MeanVarianceNormalization has no own reference kernel class in every version; it is defined as a function
    graph = h.make_graph([h.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[0, 2, 3])], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 2, 2])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2, 3, 2, 2])])
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 2)).astype(np.float32)
    trace = explorer.run(explorer.load(proto), {"x": x})
    np.testing.assert_allclose(trace.outputs["y"], ort_run(proto, {"x": x})["y"], rtol=1e-4, atol=1e-5)


def test_hostile_names_run_and_are_recorded():
    names = ['a"b', "back\\slash", "new\nline", "<script>alert(1)</script>", "&amp;", "{brace}", "ünïcødé", ""]
    nodes = []
    prev = "x"
    for i, name in enumerate(names):
        out = f"v{i}_{name}"
        nodes.append(h.make_node("Relu", [prev], [out], name=name))
        prev = out
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                         [h.make_tensor_value_info(prev, T.FLOAT, [2])])
    trace = explorer.run(explorer.load(h.make_model(graph, opset_imports=OPSET)), {"x": np.array([-1, 1], np.float32)})
    assert [e.node for e in trace.events] == names[:-1] + ["Relu_7"]


def test_function_bodies_are_recorded_with_bound_attributes_and_control_flow():
    """A local function with an attribute reference and an If inside: every inner node is an event under
    `<call path>/function/...`, the If is explorer's own kernel, and outputs match onnxruntime."""
    then_branch = h.make_graph([h.make_node("Mul", ["x", "k"], ["t"], name="scale")], "then", [],
                               [h.make_tensor_value_info("t", T.FLOAT, [3])])
    else_branch = h.make_graph([h.make_node("Neg", ["x"], ["e"], name="flip")], "else", [],
                               [h.make_tensor_value_info("e", T.FLOAT, [3])])
    k_node = h.make_node("Constant", [], ["k"], name="k")
    k_node.attribute.append(onnx.AttributeProto(name="value_float", ref_attr_name="factor",
                                                type=onnx.AttributeProto.FLOAT))
    function = h.make_function(
        "local", "ScaleOrFlip", ["x", "go"], ["y"],
        [k_node, h.make_node("If", ["go"], ["y"], name="choose", then_branch=then_branch, else_branch=else_branch)],
        OPSET, attributes=["factor"])
    graph = h.make_graph(
        [h.make_node("ScaleOrFlip", ["x", "go"], ["y"], domain="local", name="call", factor=3.0)], "g",
        [h.make_tensor_value_info("x", T.FLOAT, [3]), h.make_tensor_value_info("go", T.BOOL, [])],
        [h.make_tensor_value_info("y", T.FLOAT, [3])])
    proto = h.make_model(graph, opset_imports=[*OPSET, h.make_opsetid("local", 1)], functions=[function])
    model = explorer.load(proto)
    assert "call/function/choose/then_branch/scale" in [n.path for n in model.nodes()]
    x = np.array([1, -2, 3], np.float32)
    for go, branch in ((True, "then_branch"), (False, "else_branch")):
        feeds = {"x": x, "go": np.array(go)}
        trace = explorer.run(model, feeds)
        np.testing.assert_allclose(trace.outputs["y"], ort_run(proto, feeds)["y"])
        np.testing.assert_allclose(trace.outputs["y"], x * 3 if go else -x)
        assert trace.branch("call/function/choose") == branch
        assert trace.event("call").info["function"] == "local.ScaleOrFlip"
        assert [e.node for e in trace.children(trace.event("call"))][0] == "call/function/k"


def test_recorded_gates_count_toward_the_trace_budget():
    model = explorer.load(SAMPLES / "gru_pytorch_batch_first.onnx")
    feeds = model.example_inputs(seed=0)
    full = explorer.run(model, feeds)
    gru = next(e for e in full.events if e.op_type == "GRU")
    gate_bytes = sum(v.nbytes for v in gru.info["gates"].values())
    assert full.recorded_bytes >= gate_bytes
    tight = explorer.run(model, feeds, limits=Limits(trace_budget_bytes=gate_bytes // 2, trace_disk_bytes=0))
    gru_tight = next(e for e in tight.events if e.op_type == "GRU")
    assert gru_tight.summarized
    assert all(isinstance(v, explorer.ValueSummary) for v in gru_tight.info["gates"].values())
    np.testing.assert_array_equal(next(iter(tight.outputs.values())), next(iter(full.outputs.values())))


@pytest.mark.parametrize("enabled", [True, False])
def test_a_run_leaves_the_garbage_collector_as_it_found_it(enabled):
    import gc

    model = _relu_model()
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        explorer.run(model, {"x": np.ones((2, 3), np.float32)})
        assert gc.isenabled() == enabled
        with pytest.raises(LimitExceeded):
            explorer.run(model, {"x": np.ones((100, 3), np.float32)}, limits=Limits(max_tensor_bytes=1000))
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()


def test_elementwise_broadcasting_beyond_the_tensor_limit_is_refused_before_the_kernel_runs():
    graph = h.make_graph([h.make_node("Add", ["a", "b"], ["c"], name="outer")], "g",
                         [h.make_tensor_value_info("a", T.FLOAT, [None, 1]), h.make_tensor_value_info("b", T.FLOAT, [1, None])],
                         [h.make_tensor_value_info("c", T.FLOAT, None)])
    model = explorer.load(h.make_model(graph, opset_imports=OPSET))
    feeds = {"a": np.ones((600, 1), np.float32), "b": np.ones((1, 600), np.float32)}
    with pytest.raises(LimitExceeded, match="outer.*its output would take 1440000 bytes") as info:
        explorer.run(model, feeds, limits=Limits(max_tensor_bytes=1_000_000))
    assert info.value.trace.events == []  # refused before it ran: no event, not a failed one
    small = {"a": np.ones((600, 1), np.float32), "b": np.ones((1, 1), np.float32)}  # no bigger than a
    np.testing.assert_array_equal(explorer.run(model, small, limits=Limits(max_tensor_bytes=4000)).outputs["c"], 2)
