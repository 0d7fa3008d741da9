"""Each pattern on a small model: it fires where it should (the optimized model equals the original under
explorer's executor and onnxruntime, on random inputs), produces the expected graph, and declines with a reason
where the rewrite would be wrong."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from explorer.optimizer import optimize
from tests.support.optimizer_models import applied, body, declines, info, make, ops, proven, run_alone, tensor

INT64_MAX = 2**63 - 1


def relu_after(node: onnx.NodeProto, x_shape, *extra_nodes, inits=(), elem=T.FLOAT, extra_inputs=()):
    """A model `y = Relu(node(x))`, so a removed node leaves a Relu reading x."""
    out = node.output[0]
    nodes = [*extra_nodes, node, h.make_node("Relu", [out], ["y"], name="relu")]
    return make(nodes, [info("x", elem, x_shape), *extra_inputs], [info("y", elem, None)], inits)


# pattern -> (model, op types of the optimized main graph)
POSITIVE = {
    "IdentityRemoval": (relu_after(h.make_node("Identity", ["x"], ["a"]), [2, 3]), ["Relu"]),
    "DeadNode": (make([h.make_node("Relu", ["x"], ["y"]), h.make_node("Sigmoid", ["x"], ["unused"]),
                       h.make_node("Tanh", ["unused"], ["unused2"])], [info("x", shape=[3])], [info("y", shape=[3])]),
                 ["Relu"]),
    "AddZero": (relu_after(h.make_node("Add", ["zero", "x"], ["a"]), [2, 3], inits=[tensor("zero", [[0, 0, 0]])]),
                ["Relu"]),
    "SubZero": (relu_after(h.make_node("Sub", ["x", "zero"], ["a"]), [2, 3], inits=[tensor("zero", 0)]), ["Relu"]),
    "MulOne": (relu_after(h.make_node("Mul", ["one", "x"], ["a"]), [2, 3], inits=[tensor("one", [1, 1, 1])]),
               ["Relu"]),
    "DivOne": (relu_after(h.make_node("Div", ["x", "one"], ["a"]), [2, 3], inits=[tensor("one", 1, np.int32)],
                          elem=T.INT32), ["Relu"]),
    "PowOne": (relu_after(h.make_node("Pow", ["x", "one"], ["a"]), [2, 3], inits=[tensor("one", [1.0, 1.0, 1.0])]),
               ["Relu"]),
    "AndTrue": (make([h.make_node("And", ["true", "x"], ["a"]), h.make_node("Not", ["a"], ["y"])],
                     [info("x", T.BOOL, [2, 3])], [info("y", T.BOOL, [2, 3])], [tensor("true", [True], np.bool_)]),
                ["Not"]),
    "OrFalse": (make([h.make_node("Or", ["x", "false"], ["a"]), h.make_node("Not", ["a"], ["y"])],
                     [info("x", T.BOOL, [2, 3])], [info("y", T.BOOL, [2, 3])],
                     [tensor("false", [[False], [False]], np.bool_)]), ["Not"]),
    "IdentityTranspose": (relu_after(h.make_node("Transpose", ["x"], ["a"], perm=[0, 1, 2]), [2, 3, 4]), ["Relu"]),
    "TransposeTranspose": (relu_after(h.make_node("Transpose", ["t"], ["a"], perm=[2, 0, 1]), [2, 3, 4],
                                      h.make_node("Transpose", ["x"], ["t"], perm=[1, 2, 0])), ["Relu"]),
    "ReshapeReshape": (relu_after(h.make_node("Reshape", ["r", "s2"], ["a"]), [2, 3, 4],
                                  h.make_node("Reshape", ["x", "s1"], ["r"]),
                                  inits=[tensor("s1", [6, 4], np.int64), tensor("s2", [4, -1], np.int64)]),
                       ["Reshape", "Relu"]),
    "ComputedReshape": (relu_after(h.make_node("Reshape", ["x", "s"], ["a"]), ["n", 3, 4],
                                   h.make_node("Shape", ["x"], ["sh"]), h.make_node("Gather", ["sh", "i0"], ["d"]),
                                   h.make_node("Unsqueeze", ["d", "ax0"], ["d1"]),
                                   h.make_node("Concat", ["d1", "twelve"], ["s"], axis=0),
                                   inits=[tensor("i0", 0, np.int64), tensor("ax0", [0], np.int64),
                                          tensor("twelve", [12], np.int64)]),
                        ["Constant", "Reshape", "Relu"]),
    "NoOpReshape": (relu_after(h.make_node("Reshape", ["x", "s"], ["a"]), ["n", 3, 4],
                               inits=[tensor("s", [0, -1, 4], np.int64)]), ["Relu"]),
    "UnsqueezeUnsqueeze": (relu_after(h.make_node("Unsqueeze", ["u", "a2"], ["a"]), [3, 4],
                                      h.make_node("Unsqueeze", ["x", "a1"], ["u"]),
                                      inits=[tensor("a1", [1], np.int64), tensor("a2", [-1, 0], np.int64)]),
                           ["Constant", "Unsqueeze", "Relu"]),
    "SliceSqueeze": (relu_after(h.make_node("Squeeze", ["s", "ax"], ["a"]), [2, 3, 4],
                                h.make_node("Slice", ["x", "st", "en", "ax"], ["s"]),
                                inits=[tensor("st", [1], np.int64), tensor("en", [2], np.int64),
                                       tensor("ax", [-2], np.int64)]), ["Constant", "Gather", "Relu"]),
    "SqueezeUnsqueeze": (relu_after(h.make_node("Unsqueeze", ["q", "ax"], ["a"]), [3, 1, 4],
                                    h.make_node("Squeeze", ["x", "ax"], ["q"]), inits=[tensor("ax", [-2], np.int64)]),
                         ["Relu"]),
    "CastSameType": (relu_after(h.make_node("Cast", ["x"], ["a"], to=T.FLOAT), [2]), ["Relu"]),
    "NotNot": (make([h.make_node("Not", ["x"], ["n"]), h.make_node("Not", ["n"], ["y"])],
                    [info("x", T.BOOL, [3])], [info("y", T.BOOL, [3])]), ["Identity"]),
    "CastCast": (make([h.make_node("Cast", ["x"], ["w"], to=T.INT64), h.make_node("Cast", ["w"], ["y"], to=T.FLOAT)],
                      [info("x", T.INT32, [4])], [info("y", shape=[4])]), ["Cast"]),
    "NoOpExpand": (relu_after(h.make_node("Expand", ["x", "s"], ["a"]), ["n", 3],
                              inits=[tensor("s", [1, 3], np.int64)]), ["Relu"]),
    "NoOpSlice": (relu_after(h.make_node("Slice", ["x", "st", "en", "ax"], ["a"]), ["n", 3],
                             inits=[tensor("st", [0, -5], np.int64), tensor("en", [INT64_MAX, 3], np.int64),
                                    tensor("ax", [0, 1], np.int64)]), ["Relu"]),
    "ConcatSingle": (relu_after(h.make_node("Concat", ["x"], ["a"], axis=0), [2]), ["Relu"]),
    "ConcatConcat": (make([h.make_node("Concat", ["x", "x"], ["c1"], axis=-1),
                           h.make_node("Concat", ["c1", "z"], ["y"], axis=1)],
                          [info("x", shape=[2, 3]), info("z", shape=[2, 1])], [info("y", shape=[2, 7])]), ["Concat"]),
    "ShapeGather": (make([h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "i"], ["y"])],
                         [info("x", shape=["n", 3, 4])], [info("y", T.INT64, [2])], [tensor("i", [-1, 1], np.int64)]),
                    ["Constant"]),
    "StaticShape": (make([h.make_node("Shape", ["x"], ["y"], start=1)], [info("x", shape=[2, 3, 4])],
                         [info("y", T.INT64, [2])]), ["Constant"]),
    # Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 1)), [-1])): the computed shape [3, -1] is known though x's
    # first dim is symbolic, so the whole chain becomes one constant
    "KnownValue": (make([h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "one"], ["d"]),
                         h.make_node("Unsqueeze", ["d", "zero"], ["u"]),
                         h.make_node("Concat", ["u", "rest"], ["target"], axis=0),
                         h.make_node("Reshape", ["x", "target"], ["y"])],
                        [info("x", shape=["n", 3, 4])], [info("y", shape=None)],
                        [tensor("one", 1, np.int64), tensor("zero", [0], np.int64), tensor("rest", [-1], np.int64)]),
                   ["Constant", "Reshape"]),
    "BatchNormFold": (make([h.make_node("Conv", ["x", "w"], ["c"]),
                            h.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"])],
                           [info("x", shape=[1, 2, 3])], [info("y", shape=[1, 2, 3])],
                           [tensor("w", [[[1.0], [2.0]], [[0.5], [-1.0]]]), tensor("s", [2.0, 0.5]),
                            tensor("b", [0.1, 0.2]), tensor("m", [1.0, -1.0]), tensor("v", [4.0, 0.25])]),
                      ["Conv"]),
    "RnnZeroState": (make([h.make_node("GRU", ["x", "w", "r", "", "", "h0"], ["y"], hidden_size=1)],
                          [info("x", shape=[2, 1, 1])], [info("y", shape=None)],
                          [tensor("w", [[[1.0], [0.5], [-1.0]]]), tensor("r", [[[0.5], [1.0], [2.0]]]),
                           tensor("h0", [[[0.0]]])]), ["GRU"]),
    "ConstantFolding": (make([h.make_node("Add", ["c1", "c2"], ["c"]), h.make_node("Mul", ["x", "c"], ["y"])],
                             [info("x", shape=[3])], [info("y", shape=[3])],
                             [tensor("c1", [1, 2, 3]), tensor("c2", [0.5, 0.5, 0.5])]), ["Constant", "Mul"]),
    "ScatterNDBox": (make([h.make_node("ScatterND", ["x", "idx", "u"], ["s"]), h.make_node("Relu", ["s"], ["y"])],
                          [info("x", shape=[2, 4, 3]), info("u", shape=[2, 2, 3])], [info("y", shape=None)],
                          [tensor("idx", np.stack(np.meshgrid(np.arange(2), np.arange(1, 3), np.arange(3),
                                                              indexing="ij"), -1), np.int64)]),  # x[:, 1:3] = u
                     ["Slice", "Slice", "Concat", "Relu"]),
    "SliceConcat": (make([h.make_node("Concat", ["a", "b"], ["c"], axis=1),
                          h.make_node("Slice", ["c", "st", "en", "ax"], ["y"])],
                         [info("a", shape=[2, 3]), info("b", shape=[2, 4])], [info("y", shape=None)],
                         [tensor("st", [1], np.int64), tensor("en", [5], np.int64), tensor("ax", [-1], np.int64)]),
                    ["Slice", "Slice", "Concat"]),
    "ReduceOverOnes": (relu_after(h.make_node("ReduceMean", ["x", "ax"], ["a"], keepdims=0), [2, 1, 3],
                                  inits=[tensor("ax", [-2], np.int64)]), ["Constant", "Squeeze", "Relu"]),
    "IfConstant": (make([h.make_node("If", ["flag"], ["y"], then_branch=body(
                        [h.make_node("Neg", ["x"], ["n"]), h.make_node("Abs", ["n"], ["t"])], [], [info("t", shape=[3])]),
                        else_branch=body([h.make_node("Exp", ["x"], ["e"])], [], [info("e", shape=[3])]))],
                        [info("x", shape=[3])], [info("y", shape=[3])], [tensor("flag", [True], np.bool_)]),
                   ["Neg", "Abs"]),
    "MatMulAdd": (make([h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Add", ["b", "m"], ["y"])],
                       [info("x", shape=["n", 4])], [info("y", shape=["n", 3])],
                       [tensor("w", np.arange(12).reshape(4, 3) / 7), tensor("b", [[1, 2, 3]])]), ["Gemm"]),
    "CommonSubexpression": (make([h.make_node("Softmax", ["x"], ["a"], axis=0),
                                  h.make_node("Softmax", ["x"], ["b"], axis=0),
                                  h.make_node("Softmax", ["x"], ["c"], axis=1),
                                  h.make_node("Sum", ["a", "b", "c"], ["y"])],
                                 [info("x", shape=[2, 3])], [info("y", shape=[2, 3])]), ["Softmax", "Softmax", "Sum"]),
    "GatherConcat": (make([h.make_node("Shape", ["x"], ["s"]), h.make_node("Concat", ["c1", "s", "c2"], ["cat"], axis=0),
                           h.make_node("Gather", ["cat", "i"], ["y"])],
                          [info("x", shape=["a", "b"])], [info("y", T.INT64, [2])],
                          [tensor("c1", [7, 8, 9], np.int64), tensor("c2", [5], np.int64), tensor("i", [4, 3], np.int64)]),
                     ["Shape", "Constant", "Gather"]),
    "GatherGather": (make([h.make_node("Gather", ["x", "i1"], ["g"]), h.make_node("Gather", ["g", "i2"], ["y"])],
                          [info("x", shape=[5, 2])], [info("y", shape=[2, 2, 2])],
                          [tensor("i1", [4, 0, 3], np.int64), tensor("i2", [[2, -1], [0, 1]], np.int64)]),
                     ["Constant", "Gather"]),
    "GemmBias": (relu_after(h.make_node("Add", ["g", "k"], ["a"]), [3, 4], h.make_node("Gemm", ["x", "b"], ["g"]),
                            inits=[tensor("b", np.ones((4, 5)))], extra_inputs=[info("k", shape=[3, 5])]),
                 ["Gemm", "Relu"]),
    "FlatMatMul": (relu_after(h.make_node("Reshape", ["m", "back"], ["a"]), [2, 3, 4],
                              h.make_node("Reshape", ["x", "flat"], ["f"]), h.make_node("MatMul", ["f", "b"], ["m"]),
                              inits=[tensor("b", np.ones((4, 5))), tensor("flat", [-1, 4], np.int64),
                                     tensor("back", [2, 3, 5], np.int64)]), ["MatMul", "Relu"]),
    "SliceSlice": (relu_after(h.make_node("Slice", ["s", "st2", "en2", "ax"], ["a"]), [2, 10],
                              h.make_node("Slice", ["x", "st1", "en1", "ax"], ["s"]),
                              inits=[tensor(n, v, np.int64) for n, v in
                                     [("st1", [2]), ("en1", [9]), ("st2", [1]), ("en2", [4]), ("ax", [1])]]),
                   ["Slice", "Relu"]),
    "SingleTripLoop": (make([h.make_node("Loop", ["one", "", "x"], ["y"], body=body(
                                [h.make_node("Relu", ["h_in"], ["h_out"]),
                                 h.make_node("Identity", ["cond_in"], ["cond_out"])],
                                [info("i", T.INT64, []), info("cond_in", T.BOOL, []), info("h_in", shape=[3])],
                                [info("cond_out", T.BOOL, []), info("h_out", shape=[3])]))],
                            [info("x", shape=[3])], [info("y", shape=[3])], [tensor("one", 1, np.int64)]),
                       ["Relu"]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_pattern_fires_and_the_optimized_model_is_equivalent(name):
    model, expected_ops = POSITIVE[name]
    result = run_alone(model, name)
    assert applied(result)[name] >= 1, result.stats_table()
    assert ops(result.optimized) == expected_ops
    proven(result)
    assert [o.name for o in result.optimized.graph.output] == [o.name for o in model.graph.output]


def test_every_bundled_pattern_has_a_positive_case():
    from explorer.optimizer import pattern_names

    assert set(pattern_names()) - {"LoopInvariantHoisting"} <= set(POSITIVE)  # hoisting: test_optimizer_driver


def node_of(result, op_type):
    return next(n for n in result.optimized.graph.node if n.op_type == op_type)


def constant_of(result, op_type="Constant"):
    return numpy_helper.to_array(node_of(result, op_type).attribute[0].t)


def test_gather_concat_shifts_the_indices_by_the_constants_before_x():
    result = run_alone(POSITIVE["GatherConcat"][0], "GatherConcat")
    gather = node_of(result, "Gather")
    assert gather.input[0] == "s"  # Gather(X, cst2) with X the only non-constant Concat input
    np.testing.assert_array_equal(constant_of(result), [1, 0])  # cst1 - offset, offset = len([7, 8, 9])


def test_gather_gather_composes_the_indices():
    result = run_alone(POSITIVE["GatherGather"][0], "GatherGather")
    np.testing.assert_array_equal(constant_of(result), np.array([4, 0, 3])[np.array([[2, -1], [0, 1]])])
    assert node_of(result, "Gather").input[0] == "x"


def test_transpose_pair_composes_into_one_permutation():
    model = relu_after(h.make_node("Transpose", ["t"], ["a"], perm=[0, 2, 1]), [2, 3, 4],
                       h.make_node("Transpose", ["x"], ["t"], perm=[1, 2, 0]))
    result = run_alone(model, "TransposeTranspose")
    assert list(node_of(result, "Transpose").attribute[0].ints) == [1, 0, 2]  # p1[p2[i]]
    proven(result)


def test_unsqueeze_pair_merges_into_the_final_positions():
    # x [3, 4] -> axes [1]: [3, 1, 4] -> axes [-1, 0]: [1, 3, 1, 4, 1]; the new dims end at 0, 2 and 4
    result = run_alone(POSITIVE["UnsqueezeUnsqueeze"][0], "UnsqueezeUnsqueeze")
    step = next(s for s in result.steps if s.pattern == "UnsqueezeUnsqueeze")
    axes = [numpy_helper.to_array(n.attribute[0].t) for n in step.after_nodes if n.op_type == "Constant"]
    np.testing.assert_array_equal(axes[0], [0, 2, 4])
    proven(result)


def test_kept_intermediate_when_something_else_reads_it():
    model = make([h.make_node("Gather", ["x", "i1"], ["g"]), h.make_node("Gather", ["g", "i2"], ["y"]),
                  h.make_node("Relu", ["g"], ["z"])],
                 [info("x", shape=[5])], [info("y", shape=[]), info("z", shape=[2])],
                 [tensor("i1", [1, 3], np.int64), tensor("i2", 1, np.int64)])
    result = run_alone(model, "GatherGather")
    assert ops(result.optimized).count("Gather") == 2 and applied(result)["GatherGather"] == 1
    proven(result)


def gather_concat_model(concat_inputs, indices, x_shape=("n",), axis=0, inits=()):
    return make([h.make_node("Concat", concat_inputs, ["cat"], axis=axis),
                 h.make_node("Gather", ["cat", "i"], ["y"])],
                [info("x", T.INT64, x_shape), info("x2", T.INT64, [2])], [info("y", T.INT64, None)],
                [tensor("i", indices, np.int64), tensor("c1", [7, 8], np.int64), tensor("c2", [5], np.int64), *inits])


# (pattern, model, reason the candidate is declined)
NEGATIVE = [
    ("GatherConcat", gather_concat_model(["c1", "x", "x2"], [2]), "2 Concat inputs are not constant"),
    ("GatherConcat", gather_concat_model(["c1", "x"], [1]), "an index points before X"),
    ("GatherConcat", gather_concat_model(["c1", "x", "c2"], [2]), "whose size is unknown"),
    ("GatherConcat", gather_concat_model(["c1", "x", "c2"], [2, 5], x_shape=[3]), "an index points after X"),
    ("GatherConcat", gather_concat_model(["c1", "x"], [2], x_shape=["n", 1], axis=1, inits=[]),
     "the Concat axis is not 0"),
    ("GatherConcat", gather_concat_model(["c1", "x"], [[2]]), "indices are not a constant 0D/1D"),
    ("GatherGather", make([h.make_node("Gather", ["x", "i1"], ["g"]), h.make_node("Gather", ["g", "i2"], ["y"])],
                          [info("x", shape=[5])], [info("y", shape=None)],
                          [tensor("i1", [1, 2], np.int64), tensor("i2", [2], np.int64)]),
     "outer indices fall outside"),
    ("GatherGather", make([h.make_node("Gather", ["x", "i1"], ["g"]), h.make_node("Gather", ["g", "i2"], ["y"])],
                          [info("x", shape=[5])], [info("y", shape=None)],
                          [tensor("i1", [[1, 2]], np.int64), tensor("i2", 0, np.int64)]),
     "not a constant 1-D"),
    ("GatherGather", make([h.make_node("Gather", ["x", "i1"], ["g"], axis=1), h.make_node("Gather", ["g", "i2"], ["y"])],
                          [info("x", shape=[2, 5])], [info("y", shape=None)],
                          [tensor("i1", [1, 2], np.int64), tensor("i2", 0, np.int64)]),
     "inner Gather axis is not 0"),
    ("AddZero", relu_after(h.make_node("Add", ["x", "zero"], ["a"]), [3], inits=[tensor("zero", np.zeros((2, 3)))]),
     "more dims than"),
    ("MulOne", relu_after(h.make_node("Mul", ["x", "one"], ["a"]), [1, 3], inits=[tensor("one", np.ones((2, 3)))]),
     "may broadcast"),
    ("ReshapeReshape", relu_after(h.make_node("Reshape", ["r", "s2"], ["a"]), [2, 3, 4],
                                  h.make_node("Reshape", ["x", "s1"], ["r"]),
                                  inits=[tensor("s1", [6, 4], np.int64), tensor("s2", [0, -1], np.int64)]),
     "copies a dim (0)"),
    # x [n, m, 4] to [m, n, 4]: neither symbol is x's dim at its own position, so neither can be copied by a 0
    ("ComputedReshape", relu_after(h.make_node("Reshape", ["x", "s"], ["a"]), ["n", "m", 4],
                                   h.make_node("Shape", ["x"], ["sh"]), h.make_node("Gather", ["sh", "swap"], ["mn"]),
                                   h.make_node("Concat", ["mn", "four"], ["s"], axis=0),
                                   inits=[tensor("swap", [1, 0], np.int64), tensor("four", [4], np.int64)]),
     "more than one dim not known"),
    # x [n, m, 4] to [n, k, 4] (k the length of v): n is copied (0), so k cannot be -1 (ambiguous when n is 0)
    ("ComputedReshape", relu_after(h.make_node("Reshape", ["x", "s"], ["a"]), ["n", "m", 4],
                                   h.make_node("Shape", ["x"], ["sh"]), h.make_node("Gather", ["sh", "z"], ["n"]),
                                   h.make_node("Shape", ["v"], ["k"]),
                                   h.make_node("Concat", ["n", "k", "four"], ["s"], axis=0),
                                   inits=[tensor("z", [0], np.int64), tensor("four", [4], np.int64)],
                                   extra_inputs=[info("v", shape=["k"])]),
     "a dim not known beside copied dims"),
    ("ComputedReshape", make([h.make_node("Shape", ["x"], ["sh"]), h.make_node("Reshape", ["x", "sh"], ["y"])],
                             [info("x", shape=["n", 4])], [info("y", shape=None), info("sh", T.INT64, None)]),
     "also read elsewhere"),
    ("CastCast", make([h.make_node("Cast", ["x"], ["w"], to=T.INT32), h.make_node("Cast", ["w"], ["y"], to=T.FLOAT)],
                      [info("x", shape=[4])], [info("y", shape=[4])]), "may lose values"),
    ("CastCast", make([h.make_node("Cast", ["x"], ["w"], to=T.DOUBLE), h.make_node("Cast", ["w"], ["y"], to=T.STRING)],
                      [info("x", shape=[4])], [info("y", T.STRING, [4])]), "string's text"),
    ("MatMulAdd", make([h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Add", ["m", "b"], ["y"])],
                       [info("x", shape=[2, 2, 4])], [info("y", shape=None)],
                       [tensor("w", np.ones((4, 3))), tensor("b", [1, 2, 3])]), "not known to be 2-D"),
    ("MatMulAdd", make([h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Add", ["m", "b"], ["y"]),
                        h.make_node("Relu", ["m"], ["z"])],
                       [info("x", shape=[2, 4])], [info("y", shape=None), info("z", shape=None)],
                       [tensor("w", np.ones((4, 3))), tensor("b", [1, 2, 3])]), "also read elsewhere"),
    ("MatMulAdd", make([h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Add", ["m", "b"], ["y"])],
                       [info("x", shape=[2, 4])], [info("y", shape=None)],
                       [tensor("w", np.ones((4, 3))), tensor("b", np.ones((5, 2, 3)))]), "more than 2 dims"),
    ("IfConstant", make([h.make_node("If", ["flag"], ["y"],
                                     then_branch=body([h.make_node("Neg", ["x"], ["n"])], [], [info("n", shape=[3])]),
                                     else_branch=body([h.make_node("Exp", ["x"], ["e"])], [], [info("e", shape=[3])]))],
                        [info("x", shape=[3])], [info("y", shape=[3])], [tensor("flag", [True, False], np.bool_)]),
     "the condition holds 2 elements"),
    ("IdentityRemoval", make([h.make_node("Identity", ["x"], ["y"])], [info("x", shape=[3])], [info("y", shape=[3])]),
     "is not produced in this graph"),
    ("ScatterNDBox", make([h.make_node("ScatterND", ["x", "idx", "u"], ["y"])],
                          [info("x", shape=[2, 4]), info("u", shape=[2])], [info("y", shape=None)],
                          [tensor("idx", [[0, 1], [1, 2]], np.int64)]), "not a box of whole rows"),
    ("ScatterNDBox", make([h.make_node("ScatterND", ["x", "idx", "u"], ["y"])],
                          [info("x", shape=["n", 4]), info("u", shape=[1, 4])], [info("y", shape=None)],
                          [tensor("idx", [[0]], np.int64)]), "shape is not static"),
    ("SliceConcat", make([h.make_node("Concat", ["a", "b"], ["c"], axis=0),
                          h.make_node("Slice", ["c", "st", "en"], ["y"])],
                         [info("a", shape=["n"]), info("b", shape=[4])], [info("y", shape=None)],
                         [tensor("st", [1], np.int64), tensor("en", [3], np.int64)]), "size along the Concat's axis"),
    ("ReduceOverOnes", relu_after(h.make_node("ReduceMax", ["x", "ax"], ["a"]), None, inits=[tensor("ax", [-1], np.int64)]),
     "rank is unknown"),
]


def test_a_slice_inside_one_piece_of_a_concat_reads_that_piece():
    whole = make([h.make_node("Concat", ["a", "b"], ["c"], axis=0), h.make_node("Slice", ["c", "st", "en"], ["s"]),
                  h.make_node("Relu", ["s"], ["y"])], [info("a", shape=[3]), info("b", shape=[4])],
                 [info("y", shape=None)], [tensor("st", [-4], np.int64), tensor("en", [INT64_MAX], np.int64)])
    result = run_alone(whole, "SliceConcat")
    assert ops(result.optimized) == ["Relu"] and list(result.optimized.graph.node[0].input) == ["b"]
    proven(result)


def test_a_reduction_over_ones_keeping_dims_is_its_input_and_other_dims_stay_reduced():
    kept = run_alone(relu_after(h.make_node("ReduceSum", ["x", "ax"], ["a"]), [2, 1, 1],
                                inits=[tensor("ax", [1, 2], np.int64)]), "ReduceOverOnes")
    assert ops(kept.optimized) == ["Relu"]
    proven(kept)
    wide = run_alone(relu_after(h.make_node("ReduceMean", ["x", "ax"], ["a"]), [2, 1, 3],
                                inits=[tensor("ax", [1, 2], np.int64)]), "ReduceOverOnes")
    assert ops(wide.optimized) == ["ReduceMean", "Relu"]


@pytest.mark.parametrize("pattern, model, reason", NEGATIVE, ids=[f"{p}-{r}" for p, _, r in NEGATIVE])
def test_pattern_declines_with_a_reason(pattern, model, reason):
    result = optimize(model, patterns=[pattern])
    assert applied(result)[pattern] == 0, result.stats_table()
    assert any(reason in why for why in declines(result, pattern)), declines(result, pattern)


def test_initializer_that_is_also_an_input_is_not_a_constant():
    # the feed may override it: x + zero must stay
    model = make([h.make_node("Add", ["x", "zero"], ["y"])], [info("x", shape=[3]), info("zero", shape=[3])],
                 [info("y", shape=[3])], [tensor("zero", [0, 0, 0])])
    assert applied(optimize(model))["AddZero"] == 0


def test_random_operators_are_neither_folded_nor_merged():
    model = make([h.make_node("RandomUniformLike", ["c"], ["r1"], seed=1.0),
                  h.make_node("RandomUniformLike", ["c"], ["r2"], seed=1.0), h.make_node("Add", ["r1", "r2"], ["y"])],
                 [], [info("y", shape=[3])], [tensor("c", [1, 2, 3])])
    result = optimize(model)
    assert ops(result.optimized).count("RandomUniformLike") == 2


def test_folding_keeps_big_results_as_they_are():
    model = make([h.make_node("ConstantOfShape", ["shape"], ["big"]), h.make_node("Add", ["x", "big"], ["y"])],
                 [info("x", shape=[1000, 1000])], [info("y", shape=[1000, 1000])],
                 [tensor("shape", [1000, 1000], np.int64)])
    result = optimize(model, patterns=["ConstantFolding"])
    assert applied(result)["ConstantFolding"] == 0
    assert any("exceed" in why for why in declines(result, "ConstantFolding"))
