"""Gemm rewrites that remove nodes: the Add after a Gemm moved into its bias (GemmBias), and the flatten/restore
Reshape pair around a Gemm or MatMul on N-D input dropped (FlatMatMul); each checked against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h
from test_optimizer_models import applied, declines, info, make, ops, proven, real_model, run_alone, tensor

from explorer.optimizer import optimize

RNG = np.random.default_rng(0)


def w(name: str, *shape: int) -> object:
    return tensor(name, RNG.standard_normal(shape))


def feeds(**shapes: tuple) -> dict:
    return {k: RNG.standard_normal(v).astype(np.float32) for k, v in shapes.items()}


# ------------------------------------------------------------------------------------------------ GemmBias
def test_an_add_after_a_gemm_without_bias_becomes_its_c():
    model = make([h.make_node("Gemm", ["a", "b"], ["g"], alpha=0.5), h.make_node("Add", ["y", "g"], ["out"])],
                 [info("a", shape=[3, 4]), info("y", shape=[3, 5])], [info("out", shape=[3, 5])], [w("b", 4, 5)])
    result = run_alone(model, "GemmBias")
    assert ops(result.optimized) == ["Gemm"] and list(result.optimized.graph.node[0].input) == ["a", "b", "y"]
    proven(result, feeds(a=(3, 4), y=(3, 5)))


def test_a_constant_added_after_a_gemm_joins_its_bias():
    model = make([h.make_node("Gemm", ["a", "b", "c"], ["g"], beta=2.0, transB=1),
                  h.make_node("Add", ["g", "k"], ["out"])],
                 [info("a", shape=[3, 4])], [info("out", shape=[3, 5])], [w("b", 5, 4), w("c", 5), w("k", 1, 5)])
    result = run_alone(model, "GemmBias")
    assert ops(result.optimized) == ["Gemm"]
    proven(result, feeds(a=(3, 4)))


def test_two_gemms_added_chain_with_their_biases_summed():
    """An LSTM cell as PyTorch's dynamo exports it: Gemm(x, W_ih, b_ih) + Gemm(h, W_hh, b_hh)."""
    model = make([h.make_node("Gemm", ["h", "whh", "bhh"], ["g1"], transB=1),
                  h.make_node("Gemm", ["x", "wih", "bih"], ["g2"], transB=1),
                  h.make_node("Add", ["g1", "g2"], ["out"])],
                 [info("h", shape=["batch", 4]), info("x", shape=["batch", 3])], [info("out", shape=["batch", 8])],
                 [w("whh", 8, 4), w("bhh", 8), w("wih", 8, 3), w("bih", 8)])
    result = run_alone(model, "GemmBias")
    assert ops(result.optimized) == ["Gemm", "Gemm"]
    proven(result, feeds(h=(2, 4), x=(2, 3)))


def test_an_add_that_broadcasts_the_gemm_result_larger_stays():
    model = make([h.make_node("Gemm", ["a", "b"], ["g"]), h.make_node("Add", ["g", "y"], ["out"])],
                 [info("a", shape=[3, 4]), info("y", shape=[2, 3, 5])], [info("out", shape=None)], [w("b", 4, 5)])
    result = run_alone(model, "GemmBias")
    assert ops(result.optimized) == ["Gemm", "Add"]
    assert declines(result, "GemmBias") == ["the added tensor may not broadcast to the Gemm's [3, 5]"]


def test_a_gemm_whose_result_is_read_elsewhere_keeps_its_add():
    model = make([h.make_node("Gemm", ["a", "b"], ["g"]), h.make_node("Add", ["g", "y"], ["out"]),
                  h.make_node("Relu", ["g"], ["r"])],
                 [info("a", shape=[3, 4]), info("y", shape=[3, 5])],
                 [info("out", shape=None), info("r", shape=None)], [w("b", 4, 5)])
    result = run_alone(model, "GemmBias")
    assert not applied(result)["GemmBias"]
    assert declines(result, "GemmBias") == ["the Gemm result is also read elsewhere"]


# ------------------------------------------------------------------------------------------------ FlatMatMul
def flat_gemm(x_shape: list, target: str = "back", **gemm_attrs) -> object:
    k = x_shape[-1]
    b = w("b", 5, k) if gemm_attrs.get("transB") else w("b", k, 5)
    return make([h.make_node("Reshape", ["x", "flat"], ["x2"]), h.make_node("Gemm", ["x2", "b", "c"], ["y2"],
                                                                             **gemm_attrs),
                 h.make_node("Reshape", ["y2", target], ["y"])],
                [info("x", shape=x_shape)], [info("y", shape=None)],
                [b, w("c", 5), tensor("flat", [-1, k], np.int64), tensor("back", [*x_shape[:-1], 5], np.int64),
                 tensor("other", [3, 2, 5], np.int64)])


@pytest.mark.parametrize("attrs", [{}, {"transB": 1, "beta": 0.5}])
def test_a_gemm_between_a_flatten_and_its_restore_becomes_matmul_and_add(attrs):
    result = run_alone(flat_gemm([2, 3, 4], **attrs), "FlatMatMul")
    assert ops(result.optimized) == ["MatMul", "Add"]
    assert "x has shape [2, 3, 4]" in result.steps[0].facts
    proven(result, feeds(x=(2, 3, 4)))


def test_a_matmul_between_a_flatten_and_its_restore_becomes_one_matmul():
    model = make([h.make_node("Reshape", ["x", "flat"], ["x2"]), h.make_node("MatMul", ["x2", "b"], ["y2"]),
                  h.make_node("Reshape", ["y2", "back"], ["y"])],
                 [info("x", shape=[2, 3, 4])], [info("y", shape=None)],
                 [w("b", 4, 5), tensor("flat", [-1, 4], np.int64), tensor("back", [2, 3, 5], np.int64)])
    result = run_alone(model, "FlatMatMul")
    assert ops(result.optimized) == ["MatMul"]
    proven(result, feeds(x=(2, 3, 4)))


def test_symbolic_leading_dims_restored_from_the_input_shape_fire():
    """The restore shape is computed as PyTorch exports it: Concat(Shape(x)[:2], [N])."""
    model = make([h.make_node("Shape", ["x"], ["s"]), h.make_node("Slice", ["s", "zero", "two"], ["lead"]),
                  h.make_node("Concat", ["lead", "n"], ["back"], axis=0),
                  h.make_node("Reshape", ["x", "flat"], ["x2"]), h.make_node("Gemm", ["x2", "b", "c"], ["y2"]),
                  h.make_node("Reshape", ["y2", "back"], ["y"])],
                 [info("x", shape=["batch", "time", 4])], [info("y", shape=None)],
                 [w("b", 4, 5), w("c", 5), tensor("flat", [-1, 4], np.int64), tensor("zero", [0], np.int64),
                  tensor("two", [2], np.int64), tensor("n", [5], np.int64)])
    result = optimize(model)
    assert ops(result.optimized) == ["MatMul", "Add"]
    proven(result, feeds(x=(2, 7, 4)))


def test_a_restore_to_another_shape_stays():
    result = run_alone(flat_gemm([2, 3, 4], target="other"), "FlatMatMul")
    assert ops(result.optimized) == ["Reshape", "Gemm", "Reshape"]
    assert declines(result, "FlatMatMul") == ["the result [3, 2, 5] is not x's leading dims then 5"]


def test_a_bias_per_row_stays():
    model = flat_gemm([2, 3, 4])
    model.graph.initializer[1].CopyFrom(w("c", 6, 5))
    result = run_alone(model, "FlatMatMul")
    assert ops(result.optimized) == ["Reshape", "Gemm", "Reshape"]
    assert declines(result, "FlatMatMul") == ["C may differ from row to row"]


# ------------------------------------------------------------------------------------------------ real model
def test_silero_vad_dynamo_export_chains_its_lstm_cell_gemms():
    """silero_vad_op18_ifless's two LSTM cells each add Gemm(x, W_ih, b_ih) and Gemm(h, W_hh, b_hh)."""
    path, recorded = real_model("silero_vad_op18_ifless.onnx")
    result = optimize(path)
    assert applied(result)["GemmBias"] == 2
    proven(result, recorded)
