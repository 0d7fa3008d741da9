"""Remembered shape arithmetic (explorer/executor/memo.py): a node of integer shape arithmetic records, run after
run and iteration after iteration, exactly what its kernel gives, judged here by hand-computed values and by
onnxruntime; what it keeps is read-only and bounded."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import explorer
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


@pytest.mark.parametrize("trips", [5, memo.MAX_ENTRIES * 2 + 3])  # beyond a node's entries: they are dropped
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
    assert all(a is b for a, b in zip(first_shapes, again)) == (trips <= memo.MAX_ENTRIES)


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
    big = np.arange(memo.MAX_KEY_ELEMENTS + 1, dtype=np.int64)
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
