"""Remembered shape arithmetic (explorer/executor/memo.py): a node of integer shape arithmetic records, run after
run and iteration after iteration, exactly what its kernel gives, judged here by hand-computed values and by
onnxruntime; what it keeps is read-only and bounded."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import explorer
from explorer.budgets import MEMO_ENTRIES, MEMO_KEY_ELEMENTS
from explorer.executor import memo


def counter_loop(trips: int):
    """A Loop whose body computes from its iteration counter: i*3, Unsqueeze(i*3) into a shape [1, i*3 + 1]
    for ConstantOfShape, whose sum is scanned out."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["i", "three"], ["i3"]),
         helper.make_node("Add", ["i3", "one"], ["i3p1"]),
         helper.make_node("Unsqueeze", ["i3p1", "zero_axis"], ["width"]),
         helper.make_node("Concat", ["one_1d", "width"], ["shape"], axis=0),
         helper.make_node("ConstantOfShape", ["shape"], ["ones"],
                          value=numpy_helper.from_array(np.array([1], np.int64))),
         helper.make_node("ReduceSum", ["ones"], ["total"], keepdims=0),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("total", TensorProto.INT64, [])],
        [numpy_helper.from_array(np.array(3, np.int64), "three"), numpy_helper.from_array(np.array(1, np.int64), "one"),
         numpy_helper.from_array(np.array([0], np.int64), "zero_axis"),
         numpy_helper.from_array(np.array([1], np.int64), "one_1d")])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", ""], ["totals"], body=body)], "loop",
        [helper.make_tensor_value_info("trips", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("totals", TensorProto.INT64, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, {"trips": np.array(trips, np.int64)}


@pytest.mark.parametrize("trips", [5, MEMO_ENTRIES * 2 + 3])  # beyond a node's entries: they are dropped
def test_iteration_dependent_shape_arithmetic_is_right_on_every_run(trips):
    proto, feeds = counter_loop(trips)
    model = explorer.load(proto)
    expected = np.arange(trips) * 3 + 1
    judge = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(judge.run(None, feeds)[0], expected)
    runs = [explorer.run(model, feeds) for _ in range(3)]
    for trace in runs:
        np.testing.assert_array_equal(trace.outputs["totals"], expected)
        widths = [e.outputs["width"] for e in trace.events if e.op_type == "Unsqueeze"]
        assert [w.tolist() for w in widths] == [[v] for v in expected]
    second, third = runs[1:]
    first_shapes = [e.outputs["shape"] for e in second.events if e.op_type == "Concat"]
    again = [e.outputs["shape"] for e in third.events if e.op_type == "Concat"]
    assert all(a is b for a, b in zip(first_shapes, again)) == (trips <= MEMO_ENTRIES)


def test_kept_results_are_read_only_private_copies():
    proto, feeds = counter_loop(4)
    model = explorer.load(proto)
    first = explorer.run(model, feeds)
    second = explorer.run(model, feeds)
    kept = [e.outputs["shape"] for e in second.events if e.op_type == "Concat"]
    assert all(not value.flags.writeable for value in kept)
    with pytest.raises(ValueError, match="read-only"):
        kept[0][0] = 99
    # the first run's values are the kept copies too: nothing a trace holds can change what a later run records
    assert all(a is b for a, b in zip((e.outputs["shape"] for e in first.events if e.op_type == "Concat"), kept))


def test_large_and_float_inputs_run_their_kernel():
    big = np.arange(MEMO_KEY_ELEMENTS + 1, dtype=np.int64)
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "a"], ["b"]), helper.make_node("Add", ["f", "f"], ["g"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.INT64, [big.size]),
         helper.make_tensor_value_info("f", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("b", TensorProto.INT64, None),
         helper.make_tensor_value_info("g", TensorProto.FLOAT, None)])
    model = explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    feeds = {"a": big, "f": np.array([1.5, 2.0], np.float32)}
    runs = [explorer.run(model, feeds) for _ in range(2)]
    assert runs[0].outputs["b"] is not runs[1].outputs["b"] and runs[0].outputs["g"] is not runs[1].outputs["g"]
    assert runs[1].outputs["b"].flags.writeable


def test_the_model_budget_bounds_what_is_kept(monkeypatch):
    budget = memo.Budget(total=1)
    kernel = memo.remembered("Add", lambda args: (args[0] + args[1],), budget)
    one = np.array([1], np.int64)
    first, second, third = kernel((one, one)), kernel((one, one)), kernel((one, one + 1))
    assert first is second  # the first result was kept, spending the whole budget
    assert third[0].tolist() == [3] and kernel((one, one + 1)) is not third  # none kept after


def test_a_numpy_scalar_from_a_kernel_is_recorded_as_a_0d_tensor():
    graph = helper.make_graph(
        [helper.make_node("Gather", ["data", "index"], ["picked"], axis=0)], "g",
        [helper.make_tensor_value_info("data", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("picked", TensorProto.INT64, None)],
        [numpy_helper.from_array(np.array(1, np.int64), "index")])
    model = explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    trace = explorer.run(model, {"data": np.array([4, 5, 6], np.int64)})
    picked = trace.events[-1].outputs["picked"]
    assert type(picked) is np.ndarray and picked.shape == () and picked == 5
    assert type(trace.outputs["picked"]) is np.ndarray


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _judge(proto, feeds):
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def test_constant_chains_are_computed_once_and_kept_read_only():
    """Transpose of an initializer, concatenated with a Constant's value, feeds a MatMul with the input: the chain
    runs once; later runs record the same read-only arrays; the outputs follow every feed (judged by onnxruntime)."""
    rng = np.random.default_rng(0)
    weights = rng.standard_normal((3, 4)).astype(np.float32)
    extra = rng.standard_normal((4, 2)).astype(np.float32)
    proto = _model(
        [helper.make_node("Constant", [], ["extra"], value=numpy_helper.from_array(extra)),
         helper.make_node("Transpose", ["w"], ["wt"]),
         helper.make_node("Concat", ["wt", "extra"], ["k"], axis=1),
         helper.make_node("MatMul", ["x", "k"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(weights, "w")])
    model = explorer.load(proto)
    feed_sets = [{"x": rng.standard_normal((2, 4)).astype(np.float32)} for _ in range(3)]
    traces = [explorer.run(model, feeds) for feeds in feed_sets]
    for trace, feeds in zip(traces, feed_sets):
        np.testing.assert_allclose(trace.outputs["y"], _judge(proto, feeds)["y"], rtol=1e-6, atol=1e-6)
    kept = [{e.op_type: e.output_values[0] for e in trace.events} for trace in traces]
    for op_type in ("Constant", "Transpose", "Concat"):
        assert kept[0][op_type] is kept[1][op_type] is kept[2][op_type]
        assert not kept[2][op_type].flags.writeable
    assert kept[0]["MatMul"] is not kept[1]["MatMul"] and kept[2]["MatMul"].flags.writeable


def test_an_initializer_a_feed_may_replace_is_not_a_constant():
    """An initializer also declared as a graph input is a default the caller may override: what is computed from
    it follows the feed, run after run."""
    default = np.arange(6, dtype=np.float32).reshape(2, 3)
    proto = _model(
        [helper.make_node("Transpose", ["w"], ["wt"]), helper.make_node("MatMul", ["x", "wt"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(default, "w")])
    model = explorer.load(proto)
    x = np.ones((1, 3), np.float32)
    other = -2 * default
    for feeds in ({"x": x}, {"x": x, "w": other}, {"x": x}, {"x": x, "w": other + 1}):
        expected = x @ feeds.get("w", default).T
        np.testing.assert_array_equal(explorer.run(model, feeds).outputs["y"], expected)
        np.testing.assert_array_equal(_judge(proto, feeds)["y"], expected)


def test_random_draws_and_what_follows_them_are_not_constants():
    proto = _model(
        [helper.make_node("RandomUniform", [], ["r"], shape=[4]),
         helper.make_node("Add", ["r", "one"], ["y"])],
        [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.ones(4, np.float32), "one")])
    model = explorer.load(proto)
    first, second = (explorer.run(model, {}).outputs["y"] for _ in range(2))
    assert not np.array_equal(first, second)
    assert np.all((first >= 1) & (first < 2)) and np.all((second >= 1) & (second < 2))


def test_a_body_computes_from_outer_constants_once_and_follows_a_formal_input_that_shadows_one():
    """A Loop body negates an outer initializer (a constant: kept from the first iteration on) and adds its own
    formal input `c`, which shadows an outer initializer of that name: the sum follows the loop-carried value."""
    body = helper.make_graph(
        [helper.make_node("Neg", ["w"], ["minus_w"]),
         helper.make_node("Add", ["c", "minus_w"], ["c_next"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("c_next", TensorProto.FLOAT, [2])])
    proto = _model(
        [helper.make_node("Loop", ["trips", "", "start"], ["final"], body=body)],
        [helper.make_tensor_value_info("trips", TensorProto.INT64, []),
         helper.make_tensor_value_info("start", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "w"),
         numpy_helper.from_array(np.array([100.0, 100.0], np.float32), "c")])
    model = explorer.load(proto)
    for start in ([0.0, 0.0], [5.0, -5.0]):
        feeds = {"trips": np.array(3, np.int64), "start": np.array(start, np.float32)}
        trace = explorer.run(model, feeds)
        np.testing.assert_array_equal(trace.outputs["final"], np.array(start, np.float32) - 3 * np.array([1, 2]))
        negated = [e.output_values[0] for e in trace.events if e.op_type == "Neg"]
        assert len(negated) == 3 and all(n is negated[0] for n in negated) and not negated[0].flags.writeable


def test_the_constant_budget_bounds_what_is_kept():
    budget = memo.Budget(total=8)
    calls = []

    def kernel(args):
        calls.append(1)
        return (np.zeros(4, np.float32),)  # 16 bytes: more than the budget

    once = memo.computed_once(kernel, budget)
    first, second = once(()), once(())
    assert len(calls) == 2 and first[0] is not second[0] and first[0].flags.writeable and budget.left == 8
    small = memo.computed_once(lambda args: (np.zeros(2, np.float32),), budget)
    assert small(())[0] is small(())[0] and budget.left == 0


def test_a_recurrent_cell_with_weights_concatenated_from_constants_keeps_them():
    """The LSTM of a PyTorch export reads W, R and B concatenated from Constants (its gates reordered): they
    are constants, the same read-only arrays every run, and the LSTM's outputs agree with onnxruntime's."""
    rng = np.random.default_rng(1)
    hidden, size = 8, 5
    parts = {name: rng.standard_normal(shape).astype(np.float32) * 0.3 for name, shape in
             (("w_a", (1, 2 * hidden, size)), ("w_b", (1, 2 * hidden, size)), ("r_a", (1, 2 * hidden, hidden)),
              ("r_b", (1, 2 * hidden, hidden)), ("b", (1, 8 * hidden)))}
    nodes = [helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value))
             for name, value in parts.items()]
    nodes += [helper.make_node("Concat", ["w_b", "w_a"], ["w"], axis=1),
              helper.make_node("Concat", ["r_b", "r_a"], ["r"], axis=1),
              helper.make_node("LSTM", ["x", "w", "r", "b"], ["y", "y_h"], hidden_size=hidden)]
    proto = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 3, size])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                    helper.make_tensor_value_info("y_h", TensorProto.FLOAT, None)])
    model = explorer.load(proto)
    traces = []
    for _ in range(2):
        feeds = {"x": rng.standard_normal((6, 3, size)).astype(np.float32)}
        trace = explorer.run(model, feeds)
        expected = _judge(proto, feeds)
        for name in ("y", "y_h"):
            np.testing.assert_allclose(trace.outputs[name], expected[name], rtol=1e-5, atol=1e-6)
        traces.append(trace)
    weights = [next(e for e in trace.events if e.op_type == "LSTM").input_values[1:4] for trace in traces]
    assert all(a is b and not a.flags.writeable for a, b in zip(*weights))
