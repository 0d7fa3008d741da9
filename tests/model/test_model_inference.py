"""Checker and shape inference: the same inferred types as onnx's inference on the whole model, the same checker
complaints, and the model's size measured without serializing its weights."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import explorer
from explorer.model.model_inference import check_and_infer


def weighted_model(weight: onnx.TensorProto | None = None) -> onnx.ModelProto:
    """x[1, 128] @ w[128, 256] (+ a shape tensor read by Reshape, which inference must still see) -> Relu."""
    w = weight or numpy_helper.from_array(np.arange(128 * 256, dtype=np.float32).reshape(128, 256) / 1e4, "w")
    shape = numpy_helper.from_array(np.array([16, 16], np.int64), "shape")
    nodes = [h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Reshape", ["m", "shape"], ["r"]),
             h.make_node("Relu", ["r"], ["y"])]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 128])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["a", "b"])], [w, shape])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_types_match_onnx_inference_on_the_whole_model_and_the_weights_stay():
    model = weighted_model()
    whole = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    warnings: list[str] = []
    inferred = check_and_infer(model, warnings, str)
    assert warnings == []
    assert list(inferred.graph.value_info) == list(whole.graph.value_info)
    assert list(inferred.graph.output) == list(whole.graph.output)
    reshaped = next(v for v in inferred.graph.value_info if v.name == "r")
    assert [d.dim_value for d in reshaped.type.tensor_type.shape.dim] == [16, 16]  # read from the shape tensor
    np.testing.assert_array_equal(numpy_helper.to_array(inferred.graph.initializer[0]),
                                  np.arange(128 * 256, dtype=np.float32).reshape(128, 256) / 1e4)


def test_a_big_weight_with_too_little_data_still_reaches_the_checker():
    weight = numpy_helper.from_array(np.ones((128, 256), np.float32), "w")
    weight.raw_data = weight.raw_data[:-4]
    model = explorer.load(weighted_model(weight))
    assert any(w.startswith("onnx checker:") and "raw_data size" in w for w in model.warnings)


def test_model_bytes_is_the_serialized_size_without_serializing_the_weights():
    from explorer.model.model_inference import model_bytes

    model = weighted_model()
    assert model_bytes(model) == len(model.SerializeToString())
    small = h.make_model(h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g",
                                      [h.make_tensor_value_info("x", T.FLOAT, [2])],
                                      [h.make_tensor_value_info("y", T.FLOAT, [2])]))
    assert model_bytes(small) == len(small.SerializeToString())


def test_without_the_checker_the_same_types_and_no_checker_warning():
    weight = numpy_helper.from_array(np.ones((128, 256), np.float32), "w")
    weight.raw_data = weight.raw_data[:-4]
    checked, unchecked = explorer.load(weighted_model(weight)), explorer.load(weighted_model(weight), check=False)
    assert not any(w.startswith("onnx checker:") for w in unchecked.warnings)
    assert [w for w in checked.warnings if not w.startswith("onnx checker:")] == unchecked.warnings
    assert list(unchecked.graph.value_info) == list(checked.graph.value_info)
    assert any(v.name == "r" for v in unchecked.graph.value_info)
