"""Gemm rewrites that remove nodes: the Add after a Gemm moved into its bias (GemmBias), and the flatten/restore
Reshape pair around a Gemm or MatMul on N-D input dropped (FlatMatMul); each checked against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h
from onnx import numpy_helper

from explorer.optimizer import optimize
from tests.support.optimizer_models import (
    applied,
    declines,
    info,
    make,
    ops,
    proven,
    real_model,
    run_alone,
    shared_file,
    tensor,
)
from tests.support.registry_models import wheel_member

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


def merge_heads(x_shape: list, lead_source: str = "x") -> object:
    """GPT-2's merge_heads then Conv1D, as traced: x [batch, seq, 2, 8] viewed to [-1, 16] (the [batch, seq, 16]
    view folded in), a Gemm, then a view to Concat(Shape(lead_source)[:2], [5])."""
    return make([h.make_node("Shape", [lead_source], ["s"]), h.make_node("Slice", ["s", "zero", "two"], ["lead"]),
                 h.make_node("Concat", ["lead", "n"], ["back"], axis=0),
                 h.make_node("Reshape", ["x", "flat"], ["x2"]), h.make_node("Gemm", ["x2", "b", "c"], ["y2"]),
                 h.make_node("Reshape", ["y2", "back"], ["y"])],
                [info("x", shape=x_shape), info("v", shape=["p", "q", 16])], [info("y", shape=None)],
                [w("b", 16, 5), w("c", 5), tensor("flat", [-1, 16], np.int64), tensor("zero", [0], np.int64),
                 tensor("two", [2], np.int64), tensor("n", [5], np.int64)])


def test_a_flatten_that_also_merges_dims_regroups_x_first():
    """x's last dim (8) is not the flattened K (16), but the result [batch, seq, 5] keeps x's first two dims:
    x is reshaped to [0, 0, 16] and multiplied, and the Shape -> Slice -> Concat of the restore target goes."""
    result = optimize(merge_heads(["batch", "seq", 2, 8]))
    assert ops(result.optimized) == ["Constant", "Reshape", "MatMul", "Add"]
    assert list(numpy_helper.to_array(result.optimized.graph.node[0].attribute[0].t)) == [0, 0, 16]
    proven(result, feeds(x=(3, 4, 2, 8), v=(1, 1, 16)))
    proven(result, feeds(x=(0, 4, 2, 8), v=(1, 1, 16)))


def test_a_flatten_that_merges_dims_into_leading_dims_of_another_value_stays():
    """The result's leading dims come from another input v [p, q, 16]: nothing says they are x's own."""
    result = run_alone(merge_heads(["batch", "seq", 2, 8], lead_source="v"), "FlatMatMul")
    assert ops(result.optimized) == ["Shape", "Slice", "Concat", "Reshape", "Gemm", "Reshape"]
    assert declines(result, "FlatMatMul") == ["the inner Reshape does not flatten x to [?, last dim of x]"]


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


def tensordot(flatten: list, x_shape: list) -> object:
    """Keras Dense on an N-D input as tf2onnx exports it (Tensordot): `flatten` takes x to x2 = [?, 4], then
    MatMul, the restore to x's leading dims read from Shape(x), and the bias added after."""
    return make([*flatten, h.make_node("MatMul", ["x2", "b"], ["y2"]),
                 h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "free"], ["lead"]),
                 h.make_node("Concat", ["lead", "n"], ["back"], axis=0),
                 h.make_node("Reshape", ["y2", "back"], ["y"]), h.make_node("Add", ["y", "c"], ["out"])],
                [info("x", shape=x_shape)], [info("out", shape=None)],
                [w("b", 4, 5), w("c", 5), tensor("free", [0, 1], np.int64), tensor("n", [5], np.int64),
                 tensor("one_flat", [1, -1, 0], np.int64), tensor("axis0", [0], np.int64)])


def test_a_flatten_through_a_reshape_and_a_squeeze_goes_too():
    """tf2onnx writes some Tensordot flattens as Reshape(x, [1, -1, 0]) then Squeeze(axis 0)."""
    model = tensordot([h.make_node("Reshape", ["x", "one_flat"], ["x3"]),
                       h.make_node("Squeeze", ["x3", "axis0"], ["x2"])], ["batch", 6, 4])
    result = optimize(model)
    assert applied(result)["FlatMatMul"] == 1
    assert ops(result.optimized) == ["MatMul", "Add"]
    assert "x has shape [batch, 6, 4]" in result.steps[[s.pattern for s in result.steps].index("FlatMatMul")].facts
    proven(result, feeds(x=(3, 6, 4)))


def test_a_flatten_whose_first_step_is_read_elsewhere_keeps_that_step():
    """x3 is also an output: the Squeeze and the restore go, the MatMul reads x3 ([1, 6, 4], whose leading dims
    are the result's too)."""
    model = tensordot([h.make_node("Reshape", ["x", "one_flat"], ["x3"]),
                       h.make_node("Squeeze", ["x3", "axis0"], ["x2"])], [1, 6, 4])
    model.graph.output.append(info("x3", shape=None))
    result = run_alone(model, "FlatMatMul")
    assert [n.op_type for n in result.optimized.graph.node if n.op_type in ("Reshape", "Squeeze", "MatMul")] \
        == ["Reshape", "MatMul"]
    assert result.optimized.graph.node[0].output[0] == "x3"
    proven(result, feeds(x=(1, 6, 4)))


# ------------------------------------------------------------------------------------------------ real model
def test_an_exported_attention_projection_on_3d_input_drops_its_reshapes():
    """onnxruntime's test data attention_mask1d_fp32.onnx (6 KB, MIT; onnxruntime/test/testdata/ since
    microsoft/onnxruntime commit 75ca4a7ddb577b6fca38c0abfe604123a45eeee9, blob 1f448f44), a PyTorch 1.11 export of a
    BERT-style self-attention: nn.Linear on [batch, sequence, 768] is exported as view(-1, 768) -> addmm ->
    view(batch, sequence, 2304), i.e. Reshape -> Gemm -> Reshape; FlatMatMul makes it MatMul + Add on the 3-D
    input."""
    path = shared_file("onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/attention_mask1d_fp32.onnx",
                       "microsoft/onnxruntime, onnxruntime/test/testdata/attention_mask1d_fp32.onnx, MIT")
    result = optimize(path)
    assert applied(result)["FlatMatMul"] == 1
    step = next(s for s in result.steps if s.pattern == "FlatMatMul")
    assert "input has shape [batch, sequence, 768]" in step.facts
    before, after = (sum(n.op_type != "Constant" for n in m.graph.node) for m in (result.original, result.optimized))
    assert after < before
    assert "Gemm" not in ops(result.optimized) and ops(result.optimized).count("MatMul") == 3
    rng = np.random.default_rng(1)
    proven(result, {"input": rng.standard_normal((2, 5, 768)).astype(np.float32),
                    "weight": (rng.standard_normal((768, 2304)) / 30).astype(np.float32),
                    "bias": rng.standard_normal(2304).astype(np.float32),
                    "mask_index": np.array([5, 3], np.int32)})


def test_magika_tensordot_dense_layers_become_matmuls_on_3d_input():
    """magika's standard_v1 model (in the magika 0.5.1 wheel on PyPI, Apache-2.0, 1.05 MB), a Keras model exported
    by tf2onnx 1.14: its three Dense layers on [batch, 1536, 257], [batch, 384, 512] and [batch, 384, 256] are
    Tensordots (the second flattens through Reshape + Squeeze); all three go, and the two Reshapes left whose
    target is computed from Shape(x) get a constant target with -1 for the batch dim (ComputedReshape): 88 nodes
    become 55."""
    path = wheel_member("magika==0.5.1", "magika/models/standard_v1/model.onnx", "Apache-2.0")
    result = optimize(path)
    assert applied(result)["FlatMatMul"] == 3
    assert applied(result)["ComputedReshape"] == 2
    assert sum(n.op_type == "Reshape" for n in result.optimized.graph.node) == 3
    assert sum(n.op_type != "Constant" for n in result.optimized.graph.node) == 55
    rng = np.random.default_rng(2)
    proven(result, {"bytes": rng.integers(0, 257, (2, 1536)).astype(np.float32)})  # byte values, 256 = padding


def test_silero_vad_dynamo_export_chains_its_lstm_cell_gemms():
    """silero_vad_op18_ifless's two LSTM cells each add Gemm(x, W_ih, b_ih) and Gemm(h, W_hh, b_hh)."""
    path, recorded = real_model("silero_vad_op18_ifless.onnx")
    result = optimize(path)
    assert applied(result)["GemmBias"] == 2
    proven(result, recorded)


def test_a_big_weight_a_rewrite_computes_is_pointed_at_not_copied_into_the_model(tmp_path):
    """B of a transB Gemm over 1 MiB: FlatMatMul's transposed B stays one array in memory, which the optimized
    model points at (its proto holds no copy); a model loaded from it runs after the result is gone, and the
    saved file holds the weight, as onnxruntime reads it."""
    import gc

    import onnxruntime as ort

    import explorer
    from explorer.budgets import MAPPED_WEIGHT_BYTES

    k, n = 256, 1100
    b = RNG.standard_normal((n, k)).astype(np.float32)
    assert b.nbytes >= MAPPED_WEIGHT_BYTES
    model = make([h.make_node("Reshape", ["x", "flat"], ["x2"]), h.make_node("Gemm", ["x2", "b"], ["y2"], transB=1),
                  h.make_node("Reshape", ["y2", "back"], ["y"])],
                 [info("x", shape=[2, 3, k])], [info("y", shape=None)],
                 [numpy_helper.from_array(b, "b"), tensor("flat", [-1, k], np.int64),
                  tensor("back", [2, 3, n], np.int64)])
    result = run_alone(model, "FlatMatMul")
    assert ops(result.optimized) == ["MatMul"]
    assert result.optimized.ByteSize() < 4096  # the weight is pointed at, not copied
    proven(result, feeds(x=(2, 3, k)))
    loaded = explorer.load(result.optimized)
    result.save(tmp_path / "optimized.onnx")
    del result
    gc.collect()
    x = RNG.standard_normal((2, 3, k)).astype(np.float32)
    want = (x.reshape(-1, k) @ b.T).reshape(2, 3, n)
    np.testing.assert_allclose(explorer.run(loaded, {"x": x}).outputs["y"], want, rtol=1e-4, atol=1e-4)
    session = ort.InferenceSession(str(tmp_path / "optimized.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"x": x})[0], want, rtol=1e-4, atol=1e-4)
