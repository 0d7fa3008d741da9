"""The rewrites that rest on weights and on recurrent-cell defaults: BatchNormalization folded into the Conv,
ConvTranspose or Gemm before it, zero initial states of GRU/LSTM/RNN dropped, rank checks folded (known ranks, or a branch's declared outputs). Each optimized
model is proven equal to the original by explorer and onnxruntime; each rewrite also fires on a real model."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from explorer.optimizer import optimize
from tests.support.optimizer_models import applied, declines, info, make, ops, proven, run_alone, tensor

ROOT = Path(__file__).resolve().parents[3] / "shared" / "models"
GTCRN = ROOT / "Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx"
RNG = np.random.default_rng(3)


def bn_params(c: int, prefix: str = "bn") -> list:
    return [tensor(f"{prefix}_scale", RNG.uniform(0.5, 2, c)), tensor(f"{prefix}_bias", RNG.normal(size=c)),
            tensor(f"{prefix}_mean", RNG.normal(size=c)), tensor(f"{prefix}_var", RNG.uniform(0.1, 3, c))]


def bn(x: str, y: str, prefix: str = "bn", **attrs) -> object:
    return h.make_node("BatchNormalization", [x] + [f"{prefix}_{k}" for k in ("scale", "bias", "mean", "var")],
                       [y], **attrs)


def test_batchnorm_folds_into_conv_with_and_without_bias():
    for with_bias in (True, False):
        inputs = ["x", "w", "b"] if with_bias else ["x", "w"]
        model = make([h.make_node("Conv", inputs, ["c"], pads=[1, 1]), bn("c", "y", epsilon=1e-3)],
                     [info("x", shape=[2, 3, 5])], [info("y", shape=[2, 4, 5])],
                     [tensor("w", RNG.normal(size=(4, 3, 3))), tensor("b", RNG.normal(size=4)), *bn_params(4)])
        result = run_alone(model, "BatchNormFold")
        assert ops(result.optimized) == ["Conv"]
        proven(result)


def test_batchnorm_folds_into_grouped_conv_transpose():
    model = make([h.make_node("ConvTranspose", ["x", "w", "b"], ["c"], group=2, strides=[2]), bn("c", "y")],
                 [info("x", shape=[1, 4, 3])], [info("y", shape=None)],
                 [tensor("w", RNG.normal(size=(4, 3, 2))), tensor("b", RNG.normal(size=6)), *bn_params(6)])
    result = run_alone(model, "BatchNormFold")
    assert applied(result)["BatchNormFold"] == 1
    proven(result)


def test_batchnorm_folds_into_gemm_either_way_round():
    for trans_b, w_shape in ((0, (3, 4)), (1, (4, 3))):
        model = make([h.make_node("Gemm", ["x", "w", "c"], ["g"], transB=trans_b, beta=0.5), bn("g", "y")],
                     [info("x", shape=[2, 3])], [info("y", shape=[2, 4])],
                     [tensor("w", RNG.normal(size=w_shape)), tensor("c", RNG.normal(size=4)), *bn_params(4)])
        result = run_alone(model, "BatchNormFold")
        assert ops(result.optimized) == ["Gemm"]
        proven(result)


def test_batchnorm_stays_when_the_conv_result_is_read_elsewhere():
    model = make([h.make_node("Conv", ["x", "w"], ["c"]), bn("c", "y"), h.make_node("Relu", ["c"], ["z"])],
                 [info("x", shape=[1, 2, 4])], [info("y", shape=None), info("z", shape=None)],
                 [tensor("w", RNG.normal(size=(3, 2, 1))), *bn_params(3)])
    result = run_alone(model, "BatchNormFold")
    assert applied(result)["BatchNormFold"] == 0
    assert declines(result, "BatchNormFold") == ["the Conv result is also read elsewhere"]


def zero_state_chain(hidden: int, name: str) -> list:
    """initial state = ConstantOfShape(Concat([1], Unsqueeze(Gather(Shape(x), 1)), [hidden])): the batch dim read
    from x at run time, as PyTorch exports write it."""
    return [h.make_node("Shape", ["x"], [f"{name}_s"]), h.make_node("Gather", [f"{name}_s", "one"], [f"{name}_b"]),
            h.make_node("Unsqueeze", [f"{name}_b", "axis0"], [f"{name}_u"]),
            h.make_node("Concat", ["dirs", f"{name}_u", "hid"], [f"{name}_shape"], axis=0),
            h.make_node("ConstantOfShape", [f"{name}_shape"], [name],
                        value=h.make_tensor("v", T.FLOAT, [1], [0.0]))]


@pytest.mark.parametrize("op,gates", [("GRU", 3), ("LSTM", 4), ("RNN", 1)])
def test_zero_initial_states_are_dropped(op, gates):
    hidden, feat = 3, 2
    inits = [tensor("w", RNG.normal(size=(1, gates * hidden, feat))),
             tensor("r", RNG.normal(size=(1, gates * hidden, hidden))), tensor("one", 1, np.int64),
             tensor("axis0", [0], np.int64), tensor("dirs", [1], np.int64), tensor("hid", [hidden], np.int64)]
    states = ["h0", "c0"] if op == "LSTM" else ["h0"]
    nodes = [n for s in states for n in zero_state_chain(hidden, s)]
    nodes.append(h.make_node(op, ["x", "w", "r", "", "", *states], ["y"], hidden_size=hidden))
    model = make(nodes, [info("x", shape=[4, "batch", feat])], [info("y", shape=None)], inits)
    result = run_alone(model, "RnnZeroState")
    assert ops(result.optimized) == [op]
    assert list(result.optimized.graph.node[0].input) == ["x", "w", "r"]
    assert any("ConstantOfShape of zero" in f for s in result.steps for f in s.facts)
    proven(result, {"x": RNG.normal(size=(4, 2, feat)).astype(np.float32)})


def test_a_nonzero_initial_state_stays():
    model = make([h.make_node("GRU", ["x", "w", "r", "", "", "h0"], ["y"], hidden_size=1)],
                 [info("x", shape=[2, 1, 1])], [info("y", shape=None)],
                 [tensor("w", np.ones((1, 3, 1))), tensor("r", np.ones((1, 3, 1))), tensor("h0", [[[0.5]]])])
    assert applied(run_alone(model, "RnnZeroState"))["RnnZeroState"] == 0


def test_rank_checks_fold_the_if_they_guard():
    """if rank(x) != 2: Unsqueeze(x) else x, with x of known rank 3: the condition is known, the If inlined."""
    then = h.make_graph([h.make_node("Unsqueeze", ["x", "axis0"], ["t"])], "then", [], [info("t", shape=None)])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], [info("e", shape=None)])
    model = make([h.make_node("Shape", ["x"], ["s"]), h.make_node("Size", ["s"], ["rank"]),
                  h.make_node("Equal", ["rank", "three"], ["same"]), h.make_node("Not", ["same"], ["cond"]),
                  h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)],
                 [info("x", shape=["n", 4, "t"])], [info("y", shape=None)],
                 [tensor("three", 3, np.int64), tensor("axis0", [0], np.int64)])
    result = optimize(model)
    assert ops(result.optimized) == ["Identity"]  # y is x itself (a graph output needs a node of its own)
    proven(result, {"x": RNG.normal(size=(2, 4, 5)).astype(np.float32)})


def batched_or_not(then_declared: list | None) -> object:
    """PyTorch's batched-or-not RNN cell check on v = x.squeeze(-1) if x.shape[-1] == 1 else x (rank 2 or 3):
    y = Unsqueeze(v, 0) if rank(v) != 2 else v, the then-branch output declared with `then_declared` dims."""
    squeeze = h.make_graph([h.make_node("Squeeze", ["x", "last"], ["sq"])], "sq", [], [info("sq", shape=None)])
    keep = h.make_graph([h.make_node("Identity", ["x"], ["kx"])], "keep", [], [info("kx", shape=None)])
    then = h.make_graph([h.make_node("Unsqueeze", ["v", "axis0"], ["t"])], "then", [], [info("t", shape=then_declared)])
    other = h.make_graph([h.make_node("Identity", ["v"], ["e"])], "else", [], [info("e", shape=None)])
    return make([h.make_node("Shape", ["x"], ["xs"]), h.make_node("Gather", ["xs", "last"], ["n"]),
                 h.make_node("Equal", ["n", "one"], ["single"]),
                 h.make_node("If", ["single"], ["v"], then_branch=squeeze, else_branch=keep),
                 h.make_node("Shape", ["v"], ["s"]), h.make_node("Size", ["s"], ["rank"]),
                 h.make_node("Equal", ["rank", "two"], ["same"]), h.make_node("Not", ["same"], ["cond"]),
                 h.make_node("If", ["cond"], ["u"], then_branch=then, else_branch=other),
                 h.make_node("Relu", ["u"], ["y"])],
                [info("x", shape=["b", 4, "t"])], [info("y", shape=None)],
                [tensor("two", 2, np.int64), tensor("one", 1, np.int64), tensor("last", [-1], np.int64),
                 tensor("axis0", [0], np.int64)])


def test_a_rank_check_a_branch_declaration_contradicts_takes_the_other_branch():
    """if rank(v) != 2: Unsqueeze(v, 0) (declared rank 3, so v has rank 2 there) else v: the then-branch never
    runs in a run that keeps the declared types, so the If is v itself; the model is equal where it runs."""
    result = optimize(batched_or_not(["one", "b", 4]))
    assert ops(result.optimized).count("If") == 1 and "Size" not in ops(result.optimized)
    assert any("declares outputs that give v rank 2" in f for s in result.steps for f in s.facts)
    proven(result, {"x": RNG.normal(size=(2, 4, 1)).astype(np.float32)})


@pytest.mark.parametrize("declared", [None, ["one", "b", 4, "t"]])
def test_a_rank_check_stays_when_no_declaration_contradicts_it(declared):
    # undeclared, or declared rank 4 (v of rank 3: just what the condition says)
    result = optimize(batched_or_not(declared))
    assert ops(result.optimized).count("If") == 2 and "Size" in ops(result.optimized)


@pytest.mark.skipif(not ROOT.exists(), reason="../shared/models is not available")
def test_silero_vad_loses_its_batched_or_not_checks():
    path = ROOT / "snakers4__silero-vad/src/silero_vad/data/silero_vad.onnx"
    result = optimize(path)
    assert sum("declares outputs that give" in f for s in result.steps for f in s.facts) >= 2
    feeds = {"input": RNG.normal(size=(1, 576)).astype(np.float32) * 0.1, "state": np.zeros((2, 1, 128), np.float32),
             "sr": np.array(16000, np.int64)}
    proven(result, feeds)


@pytest.mark.skipif(not GTCRN.exists(), reason="../shared/models is not available")
def test_gtcrn_loses_its_batchnorms_and_zero_gru_states():
    result = optimize(GTCRN)
    counts = applied(result)
    assert counts["BatchNormFold"] == 11 and counts["RnnZeroState"] >= 1
    assert "BatchNormalization" not in ops(result.optimized)
    # its six `x[:, :, a:b] = u` ScatterNDs over full index grids become Slices and Concats, read piece by piece
    assert counts["ScatterNDBox"] == 6 and counts["SliceConcat"] >= 4
    assert ops(result.optimized).count("ScatterND") == 12


@pytest.mark.parametrize("inner", [
    h.make_node("Unsqueeze", ["x", "axis0"], ["r"]), h.make_node("Squeeze", ["x", "axis0"], ["r"]),
    h.make_node("Flatten", ["x"], ["r"], axis=2)])
def test_a_reshape_after_a_squeeze_unsqueeze_or_flatten_reads_its_input(inner):
    """Reshape(Unsqueeze(x, [0]), [-1]) -> Reshape(x, [-1]) (as exported by tf2onnx's while loops)."""
    x_shape = [1, 3, 4] if inner.op_type == "Squeeze" else [2, 3, 4]
    model = make([inner, h.make_node("Reshape", ["r", "flat"], ["y"])], [info("x", shape=x_shape)],
                 [info("y", shape=None)], [tensor("axis0", [0], np.int64), tensor("flat", [4, -1], np.int64)])
    result = run_alone(model, "ReshapeReshape")
    assert ops(result.optimized) == ["Reshape"] and list(result.optimized.graph.node[0].input) == ["x", "flat"]
    proven(result)


def test_slice_then_squeeze_of_one_index_becomes_a_gather_on_a_real_model():
    path = next(ROOT.glob("**/ort_github_issue_10305.onnx"), None)
    if path is None:
        pytest.skip("../shared/models is not available")
    result = optimize(path)
    assert applied(result)["SliceSqueeze"] == 1
    # its Loop runs once: SingleTripLoop leaves the body's Add in its place
    assert [n.op_type for n in result.optimized.graph.node if n.op_type != "Constant"] == \
        ["Transpose", "Gather", "Add"]
    proven(result, {"input:0": RNG.normal(size=(2, 2, 2)).astype(np.float32),
                    "state_var_in": np.array([0.5], np.float32)})


@pytest.mark.skipif(not ROOT.exists(), reason="../shared/models is not available")
def test_a_mean_over_a_dim_of_one_becomes_a_squeeze_on_silero_vad_for_openvino():
    result = optimize(ROOT / "snakers4__silero-vad/src/silero_vad/data/silero_vad_openvino_16k.onnx")
    assert applied(result)["ReduceOverOnes"] == 1
    assert "ReduceMean" not in [n.op_type for n in result.optimized.graph.node]
    proven(result, {"input": RNG.normal(size=(1, 576)).astype(np.float32) * 0.1,

                    "state": np.zeros((2, 1, 128), np.float32)})
