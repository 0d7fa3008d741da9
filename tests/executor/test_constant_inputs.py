"""Slice, Squeeze, Unsqueeze and Reshape keep what they made from constant integer inputs (ops/axes.py's
ConstantInputs): results stay those of NumPy's own indexing when the data's shape changes from run to run, when
the bounds are fed (writeable, read again at every run) and when a feed is changed in place between runs."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import explorer


def _model(nodes, inputs, outputs, initializers=()):
    graph = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info(o, T.FLOAT, None) for o in outputs],
                         list(initializers))
    return explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]))


def _ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def test_constant_bounds_follow_the_datas_shape_from_run_to_run():
    model = _model([h.make_node("Slice", ["x", "starts", "ends", "axes"], ["s"]),
                    h.make_node("Unsqueeze", ["s", "ax0"], ["u"]),
                    h.make_node("Squeeze", ["u", "ax0"], ["q"]),
                    h.make_node("Reshape", ["q", "flat"], ["r"])],
                   [h.make_tensor_value_info("x", T.FLOAT, None)], ["s", "u", "q", "r"],
                   [_ints("starts", [1, -3]), _ints("ends", [100, -1]), _ints("axes", [0, 1]), _ints("ax0", [0]),
                    _ints("flat", [-1])])
    for shape in [(4, 5), (4, 5), (3, 7), (6, 3), (4, 5)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        outputs = explorer.run(model, {"x": x}).outputs
        assert np.array_equal(outputs["s"], x[1:, -3:-1])
        assert np.array_equal(outputs["u"], x[None, 1:, -3:-1])
        assert np.array_equal(outputs["q"], x[1:, -3:-1])
        assert np.array_equal(outputs["r"], x[1:, -3:-1].reshape(-1))


def test_fed_bounds_are_read_at_every_run_even_when_changed_in_place():
    model = _model([h.make_node("Slice", ["x", "starts", "ends"], ["s"])],
                   [h.make_tensor_value_info(n, t, None) for n, t in [("x", T.FLOAT), ("starts", T.INT64),
                                                                    ("ends", T.INT64)]], ["s"])
    x = np.arange(10, dtype=np.float32)
    starts, ends = np.array([2]), np.array([5])
    assert np.array_equal(explorer.run(model, {"x": x, "starts": starts, "ends": ends}).outputs["s"], x[2:5])
    starts[0], ends[0] = 6, 9  # the same arrays, new values
    assert np.array_equal(explorer.run(model, {"x": x, "starts": starts, "ends": ends}).outputs["s"], x[6:9])
