"""Slice, Squeeze, Unsqueeze and Reshape keep what they made from constant integer inputs, DequantizeLinear its table
from a constant scale and zero point (ops/axes.py's ConstantInputs): results stay those of NumPy's own indexing when the data's shape changes from run to run, when
the bounds are fed (writeable, read again at every run) and when a feed is changed in place between runs."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
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


def _dequantizer(version: int, kind, scale, zero, fed: bool):
    """DequantizeLinear-`version` of an 8-bit `kind` input; its scale (float32, or float16 from 19) and zero point
    initializers, or graph inputs when `fed`."""
    constants = [numpy_helper.from_array(scale, "s")] + ([] if zero is None else [numpy_helper.from_array(zero, "z")])
    inputs = [h.make_tensor_value_info("x", numpy_helper.helper.np_dtype_to_tensor_dtype(np.dtype(kind)), ["rows", "columns"])]
    if fed:
        inputs += [h.make_tensor_value_info(c.name, c.data_type, list(c.dims)) for c in constants]
    node = h.make_node("DequantizeLinear", ["x", "s"] + ([] if zero is None else ["z"]), ["y"])
    graph = h.make_graph([node], "g", inputs, [h.make_tensor_value_info("y", constants[0].data_type, None)],
                         [] if fed else constants)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", version)])


@pytest.mark.parametrize("version", [10, 13, 19, 21, 23, 24, 25])
@pytest.mark.parametrize("kind", [np.uint8, np.int8])
def test_dequantizing_8_bit_values_by_constant_scales_gives_onnxruntimes_values_for_every_bit_pattern(version, kind):
    # per tensor with constant scales explorer looks the values up in a table of the 256 patterns it made by the
    # same arithmetic; fed scales take the arithmetic itself: both must be exactly onnxruntime's, at every version
    every = np.arange(256, dtype=np.uint8).view(kind).reshape(16, 16)
    for scale, zero in [(np.array(0.0371, np.float32), np.array(3, kind)), (np.array([2.5e-4], np.float32), None),
                        (np.array(0.125, np.float16), np.array(-1 if kind is np.int8 else 200, kind))]:
        if scale.dtype == np.float16 and version < 19:
            continue  # float16 scales came with version 19
        shaped_zero = zero if zero is None or version >= 13 or zero.ndim == 0 else zero.reshape(())
        judged = min(version, 21)  # onnxruntime implements DequantizeLinear up to 21; later versions add types only
        [theirs] = ort.InferenceSession(_dequantizer(judged, kind, scale, shaped_zero, False).SerializeToString(),
                                        providers=["CPUExecutionProvider"]).run(None, {"x": every})
        for fed in (False, True):
            model = explorer.load(_dequantizer(version, kind, scale, shaped_zero, fed))
            feeds = {"x": every, "s": scale} | ({} if zero is None else {"z": shaped_zero}) if fed else {"x": every}
            for x in (every, every[::-1, 1:]):  # twice, the second a strided view
                feeds["x"] = x
                expected = theirs if x is every else theirs[::-1, 1:]
                ours = explorer.run(model, feeds).outputs["y"]
                assert ours.dtype == expected.dtype and np.array_equal(ours.view(np.uint8 if ours.itemsize == 1 else
                                                                                 f"u{ours.itemsize}"),
                                                                       expected.view(f"u{expected.itemsize}"))
