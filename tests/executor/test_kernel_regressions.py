"""Own kernels where onnx.reference is wrong for exported models, judged by onnxruntime; the first divergence (explorer.compare)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import explorer
from explorer.compare import compare
from explorer.compare.outputs import compare_with_onnxruntime
from tests.support.compare_models import plant_output

SHARED = Path(__file__).resolve().parents[3] / "shared" / "models"


def _single_node_model(node, inputs, initializers, opset):
    graph = h.make_graph([node], "g", inputs, [h.make_tensor_value_info(node.output[0], T.FLOAT, None)], initializers)
    return explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]))


@pytest.mark.parametrize("group, pads, strides, output_padding, bias", [
    (2, [0, 2, 0, 2], [1, 2], [0, 0], True),
    (4, [1, 1, 1, 1], [2, 2], [1, 0], True),
    (3, [0, 0, 0, 0], [1, 1], [0, 0], False),
    (1, [1, 0, 1, 0], [2, 1], [0, 0], True),
])
def test_grouped_conv_transpose_matches_onnxruntime(group, pads, strides, output_padding, bias):
    rng = np.random.default_rng(group)
    channels, per_group = 12, 5
    inits = [numpy_helper.from_array(rng.standard_normal((channels, per_group, 3, 3)).astype(np.float32), "W")]
    names = ["x", "W"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(per_group * group).astype(np.float32), "B"))
        names.append("B")
    node = h.make_node("ConvTranspose", names, ["y"], group=group, pads=pads, strides=strides,
                       output_padding=output_padding, kernel_shape=[3, 3])
    model = _single_node_model(node, [h.make_tensor_value_info("x", T.FLOAT, [2, channels, 5, 6])], inits, 17)
    feeds = model.example_inputs(seed=group)
    report = compare_with_onnxruntime(model, feeds, explorer.run(model, feeds).outputs)
    assert report.ok, report.lines()


@pytest.mark.parametrize("opset", [9, 11, 13, 15])
def test_batch_normalization_inference_matches_onnxruntime(opset):
    rng = np.random.default_rng(opset)
    stats = {"scale": rng.standard_normal(4), "bias": rng.standard_normal(4), "mean": rng.standard_normal(4),
             "var": rng.random(4) + 0.5}
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in stats.items()]
    node = h.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], epsilon=1e-3,
                       momentum=0.9)
    model = _single_node_model(node, [h.make_tensor_value_info("x", T.FLOAT, [3, 4, 5])], inits, opset)
    feeds = model.example_inputs(seed=opset)
    y = explorer.run(model, feeds).outputs["y"]
    x = feeds["x"]
    expected = ((x - stats["mean"][:, None]) / np.sqrt(stats["var"][:, None] + 1e-3) * stats["scale"][:, None]
                + stats["bias"][:, None])
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    assert compare_with_onnxruntime(model, feeds, {"y": y}).ok


def test_first_divergence_walks_to_the_first_differing_node():
    nodes = [h.make_node("Relu", ["x"], ["a"], name="first"), h.make_node("Neg", ["a"], ["b"], name="second"),
             h.make_node("Exp", ["b"], ["y"], name="third")]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [3])])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]))
    feeds = {"x": np.array([-1, 0.5, 2], np.float32)}
    trace = explorer.run(model, feeds)
    assert compare(trace, "onnxruntime", model=model).first is None
    plant_output(trace.event("second"), "b", trace.event("second").outputs["b"] + 1)  # as if a kernel were wrong
    found = compare(trace, "onnxruntime", model=model).first
    assert found.node == "second" and found.name == "b" and found.max_abs == pytest.approx(1)


@pytest.mark.parametrize("mode", ["reflect", "edge"])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (1, 576), (4, 1, 3)])
def test_pad_reflect_and_edge_equal_numpy_pad_on_random_widths(mode, shape):
    """Pad's reflect and edge modes pad axis after axis as numpy.pad does (the spec's own reference), corners
    included, for every width up to the axis size (reflect: size - 1), judged by numpy.pad."""
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    node = h.make_node("Pad", ["x", "pads"], ["y"], mode=mode)
    model = _single_node_model(node, [h.make_tensor_value_info("x", T.FLOAT, list(shape)),
                                      h.make_tensor_value_info("pads", T.INT64, [2 * len(shape)])], [], 13)
    limit = [size - 1 if mode == "reflect" else size for size in shape]
    for _ in range(12):
        widths = [(int(rng.integers(0, top + 1)), int(rng.integers(0, top + 1))) for top in limit]
        pads = np.array([b for b, _ in widths] + [e for _, e in widths], np.int64)
        got = explorer.run(model, {"x": x, "pads": pads}).outputs["y"]
        np.testing.assert_array_equal(got, np.pad(x, widths, mode=mode))
