"""Straight-line samples: the smallest things to look at first."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from builders import Sample

OPSET = [h.make_opsetid("", 21)]


def tiny_mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array((rng.standard_normal((4, 8)) * 0.5).astype(np.float32), "W1"),
        numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "b1"),
        numpy_helper.from_array((rng.standard_normal((8, 3)) * 0.5).astype(np.float32), "W2"),
        numpy_helper.from_array((rng.standard_normal(3) * 0.1).astype(np.float32), "b2"),
    ]
    nodes = [
        h.make_node("MatMul", ["x", "W1"], ["h0"], name="fc1"),
        h.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
        h.make_node("Relu", ["h1"], ["h2"], name="relu"),
        h.make_node("MatMul", ["h2", "W2"], ["logits0"], name="fc2"),
        h.make_node("Add", ["logits0", "b2"], ["logits"], name="fc2_bias"),
        h.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = h.make_graph(nodes, "tiny_mlp", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 4])],
                         [h.make_tensor_value_info("probs", T.FLOAT, ["batch", 3])], inits)
    return h.make_model(graph, opset_imports=OPSET, producer_name="explorer samples")


def if_sign() -> onnx.ModelProto:
    then_branch = h.make_graph([h.make_node("Mul", ["x", "two"], ["y_then"], name="double")], "then_body", [],
                               [h.make_tensor_value_info("y_then", T.FLOAT, [3])],
                               [numpy_helper.from_array(np.array(2, np.float32), "two")])
    else_branch = h.make_graph([h.make_node("Neg", ["x"], ["y_else"], name="negate")], "else_body", [],
                               [h.make_tensor_value_info("y_else", T.FLOAT, [3])])
    nodes = [
        h.make_node("ReduceSum", ["x"], ["total"], name="sum", keepdims=0),
        h.make_node("Greater", ["total", "zero"], ["positive"], name="is_positive"),
        h.make_node("If", ["positive"], ["y"], name="branch", then_branch=then_branch, else_branch=else_branch),
    ]
    graph = h.make_graph(nodes, "if_sign", [h.make_tensor_value_info("x", T.FLOAT, [3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [3])],
                         [numpy_helper.from_array(np.array(0, np.float32), "zero")])
    return h.make_model(graph, opset_imports=OPSET, producer_name="explorer samples")


SAMPLES = [
    Sample("tiny_mlp", "A two-layer MLP (MatMul, Add, Relu, Softmax): the simplest trace to step through.",
           tiny_mlp),
    Sample("if_sign", "If: doubles x when its sum is positive, else negates it; the branches read x from the "
           "outer scope.", if_sign),
]
