"""Symbolic shape and value propagation: dims as expressions, shape tensors as known values, shapes flowing on
past computed Reshapes and into bodies; and the rewrites that rest on it record the facts they used."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from explorer.optimizer import GraphState, optimize
from explorer.optimizer.context import Context
from explorer.optimizer.dim_algebra import combine
from explorer.optimizer.symbolic_values import inferred_dim
from tests.support.optimizer_models import body, info, make, proven, tensor


def state_of(model) -> GraphState:
    g = GraphState(model.graph, Context(opsets={"": 18}, ir_version=10))
    g.refresh_facts()
    return g


def test_shape_arithmetic_gives_symbolic_expressions_and_known_dims():
    model = make([h.make_node("Shape", ["x"], ["s"]),
                  h.make_node("Gather", ["s", "i0"], ["n"]), h.make_node("Add", ["n", "one"], ["n1"]),
                  h.make_node("Slice", ["s", "i1", "i3"], ["tail"]),
                  h.make_node("Unsqueeze", ["n1", "ax"], ["u"]),
                  h.make_node("Concat", ["u", "tail"], ["target"], axis=0),
                  h.make_node("ConstantOfShape", ["target"], ["zeros"]),
                  h.make_node("Reshape", ["x", "flat"], ["r"]), h.make_node("Relu", ["r"], ["y"])],
                 [info("x", shape=["n", 3, 4])], [info("y", shape=None), info("zeros", shape=None)],
                 [tensor("i0", 0, np.int64), tensor("one", 1, np.int64), tensor("i1", [1], np.int64),
                  tensor("i3", [3], np.int64), tensor("ax", [0], np.int64), tensor("flat", [-1, 12], np.int64)])
    g = state_of(model)
    assert list(g.known_value("s")) == ["n", 3, 4]
    assert g.known_value("n1").item() == "(n+1)"
    assert list(g.known_value("target")) == ["(n+1)", 3, 4]
    assert g.shape("zeros") == ("(n+1)", 3, 4)
    assert g.shape("y") == ("n", 12)  # Reshape's -1 is n once 12 cancels 3 * 4, then Relu by onnx's inference


def test_a_reshape_copying_dims_of_an_input_of_unknown_shape_leaves_them_unknown():
    """Reshape(x, [0, 0, 4]) copies x's first two dims: unknown while x's shape is (onnxruntime's transformer
    optimizer writes such targets after a Transpose whose input is computed), never dims of size 0."""
    model = make([h.make_node("Reshape", ["x", "target"], ["r"]), h.make_node("Relu", ["r"], ["y"])],
                 [info("x", shape=None)], [info("y", shape=None)], [tensor("target", [0, 0, 4], np.int64)])
    assert state_of(model).shape("r") == (None, None, 4)
    allowed = make([h.make_node("Reshape", ["x", "target"], ["r"], allowzero=1), h.make_node("Relu", ["r"], ["y"])],
                   [info("x", shape=None)], [info("y", shape=None)], [tensor("target", [0, 0, 4], np.int64)])
    assert state_of(allowed).shape("r") == (0, 0, 4)  # allowzero=1: 0 is a size


@pytest.mark.parametrize(("source", "target", "dim"), [
    (("batch", 1), [-1, 1], "batch"), (("n", 3, 4), [-1, 12], "n"), ((2, 3, 4), [4, -1], 6),
    (("b", "s", 8), ["b", -1, 8], "s"), (("b", "s", 8), ["b", -1, 2], None), (("b", "s", 8), [-1, 8], None), (("n", 4), [2, -1], None),
    ((2, "n", 6), [-1, 4], None), ((None, 4), [-1, 4], None), (("n", 5), [-1, 3], None)])
def test_a_reshape_minus_one_is_what_the_other_dims_leave(source, target, dim):
    """What -1 stands for: the input's dims less those the other target dims cancel; undetermined (None)
    when two symbols, a symbol times an int, an unknown dim or an uneven division remain."""
    assert inferred_dim(source, target) == dim


def test_static_shapes_flow_through_computed_reshapes():
    model = make([h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "i"], ["d"]),
                  h.make_node("Unsqueeze", ["d", "ax"], ["u"]),
                  h.make_node("Concat", ["u", "minus"], ["target"], axis=0),
                  h.make_node("Reshape", ["x", "target"], ["r"]), h.make_node("Transpose", ["r"], ["y"])],
                 [info("x", shape=[2, 3, 4])], [info("y", shape=None)],
                 [tensor("i", 1, np.int64), tensor("ax", [0], np.int64), tensor("minus", [-1], np.int64)])
    g = state_of(model)
    assert list(g.known_value("target")) == [3, -1] and g.shape("r") == (3, 8) and g.shape("y") == (8, 3)


def test_a_body_reads_what_its_enclosing_graph_knows():
    then = body([h.make_node("Reshape", ["x", "target"], ["t"])], [], [info("t", shape=None)])
    other = body([h.make_node("Identity", ["x"], ["e"])], [], [info("e", shape=None)])
    model = make([h.make_node("Shape", ["x"], ["target"]),
                  h.make_node("If", ["flag"], ["y"], then_branch=then, else_branch=other)],
                 [info("x", shape=[2, 3]), info("flag", T.BOOL, [])], [info("y", shape=None)])
    result = optimize(model)
    proven(result, {"x": np.ones((2, 3), np.float32), "flag": np.array(True)})
    inner = result.optimized.graph.node[-1].attribute[0].g
    assert [n.op_type for n in inner.node] == ["Identity"]  # Reshape to its own shape went away


def test_known_value_rewrites_record_the_shapes_they_used():
    """z [2, 3] reshaped by [x.size(0)] (x [6]): the computed shape folds and says which shape it read. (Reshaping
    x itself by its own size is a no-op Reshape, removed whole: see the next test.)"""
    model = make([h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "i"], ["d"]),
                  h.make_node("Unsqueeze", ["d", "ax"], ["u"]), h.make_node("Reshape", ["z", "u"], ["r"]),
                  h.make_node("Add", ["x", "r"], ["y"])],
                 [info("x", shape=[6]), info("z", shape=[2, 3])], [info("y", shape=None)],
                 [tensor("i", 0, np.int64), tensor("ax", [0], np.int64)])
    result = optimize(model)
    known = [s for s in result.steps if s.pattern in ("KnownValue", "StaticShape", "ShapeGather")]
    assert known and any("x has shape [6]" in f for s in known for f in s.facts)
    proven(result, {"x": np.arange(6, dtype=np.float32), "z": np.ones((2, 3), np.float32)})


def test_a_reshape_by_a_computed_copy_of_its_own_shape_goes():
    """Reshape(x, [x.size(0), 16]) with x [batch, 16]: the computed target is known to be [batch, 16], x's own
    shape, so the Reshape and the shape arithmetic feeding it go."""
    model = make([h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "i"], ["d"]),
                  h.make_node("Unsqueeze", ["d", "ax"], ["u"]), h.make_node("Concat", ["u", "cols"], ["t"], axis=0),
                  h.make_node("Reshape", ["x", "t"], ["r"]), h.make_node("Relu", ["r"], ["y"])],
                 [info("x", shape=["batch", 16])], [info("y", shape=None)],
                 [tensor("i", 0, np.int64), tensor("ax", [0], np.int64), tensor("cols", [16], np.int64)])
    result = optimize(model)
    assert [n.op_type for n in result.optimized.graph.node] == ["Relu"]
    step = next(s for s in result.steps if s.pattern == "NoOpReshape")
    assert step.facts == ["x has shape [batch, 16]", "t = [batch, 16]"]
    proven(result, {"x": np.arange(48, dtype=np.float32).reshape(3, 16)})


def test_a_computed_reshape_copies_the_input_dims_it_keeps():
    """Reshape(x, x.size()[:2] + (2, 2)) with x [n, m, 4], as GPT-2's split_heads writes it: the constant
    target [0, 0, 2, 2] copies n and m (two dims not known, both x's own at the same position)."""
    model = make([h.make_node("Shape", ["x"], ["sh"]), h.make_node("Slice", ["sh", "z", "two"], ["nm"]),
                  h.make_node("Concat", ["nm", "rest"], ["s"], axis=0), h.make_node("Reshape", ["x", "s"], ["y"])],
                 [info("x", shape=["n", "m", 4])], [info("y", shape=None)],
                 [tensor("z", [0], np.int64), tensor("two", [2], np.int64), tensor("rest", [2, 2], np.int64)])
    result = optimize(model)
    assert [n.op_type for n in result.optimized.graph.node] == ["Constant", "Reshape"]
    target = result.optimized.graph.node[0].attribute[0].t
    assert list(numpy_helper.to_array(target)) == [0, 0, 2, 2]
    assert result.steps[0].facts == ["y has shape [n, m, 2, 2]", "x has shape [n, m, 4]"]
    proven(result, {"x": np.arange(24, dtype=np.float32).reshape(2, 3, 4)})
    proven(result, {"x": np.zeros((0, 3, 4), np.float32)})


def test_a_reshape_by_a_computed_shape_that_differs_in_one_dim_stays():
    """Reshape(x, [x.size(0), 8]) with x [batch, 16] is not x's shape (and fails at run time): it stays."""
    model = make([h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "i"], ["d"]),
                  h.make_node("Unsqueeze", ["d", "ax"], ["u"]), h.make_node("Concat", ["u", "cols"], ["t"], axis=0),
                  h.make_node("Reshape", ["x", "t"], ["y"])],
                 [info("x", shape=["batch", 16])], [info("y", shape=None)],
                 [tensor("i", 0, np.int64), tensor("ax", [0], np.int64), tensor("cols", [8], np.int64)])
    result = optimize(model)
    assert "Reshape" in [n.op_type for n in result.optimized.graph.node]
    assert not [s for s in result.steps if s.pattern == "NoOpReshape"]


def test_a_reshape_with_allowzero_has_the_shape_its_target_gives():
    """The dynamo exporter writes Reshape(..., allowzero=1): with no 0 in the target it infers like allowzero=0
    (the -1 from the element count), and a 0 is a size of 0, never a copied dim."""
    model = make([h.make_node("Reshape", ["x", "flat"], ["f"], allowzero=1),
                  h.make_node("Reshape", ["z", "empty"], ["e"], allowzero=1),
                  h.make_node("Reshape", ["z", "empty"], ["c"])],
                 [info("x", shape=["batch", 3, 4]), info("z", shape=[3, 0])],
                 [info("f", shape=None), info("e", shape=None), info("c", shape=None)],
                 [tensor("flat", [-1, 12], np.int64), tensor("empty", [0, 0], np.int64)])
    g = state_of(model)
    assert g.shape("f") == ("batch", 12)
    assert g.shape("e") == (0, 0)
    assert g.shape("c") == (3, 0)  # allowzero=0 copies z's dims


def test_shape_arithmetic_inside_a_loop_body_on_outer_values_folds():
    """The body reshapes its state by a shape computed from an outer weight's Shape: the whole computation is
    known before running, so it becomes one constant inside the body."""
    loop_body = body([h.make_node("Shape", ["w"], ["ws"]), h.make_node("Gather", ["ws", "i1"], ["cols"]),
                      h.make_node("Unsqueeze", ["cols", "ax"], ["u"]),
                      h.make_node("Concat", ["minus", "u"], ["target"], axis=0),
                      h.make_node("Reshape", ["h_in", "target"], ["r"]), h.make_node("MatMul", ["r", "w"], ["m"]),
                      h.make_node("Reshape", ["m", "flat"], ["h_out"]),
                      h.make_node("Identity", ["cond_in"], ["cond_out"])],
                     [info("iter", T.INT64, []), info("cond_in", T.BOOL, []), info("h_in", shape=None)],
                     [info("cond_out", T.BOOL, []), info("h_out", shape=None)])
    model = make([h.make_node("Loop", ["trips", "", "h0"], ["h"], body=loop_body)],
                 [info("h0", shape=[6])], [info("h", shape=None)],
                 [tensor("trips", 3, np.int64), tensor("w", np.full((3, 3), 0.5)), tensor("i1", 0, np.int64),
                  tensor("ax", [0], np.int64), tensor("minus", [-1], np.int64), tensor("flat", [-1], np.int64)])
    result = optimize(model)
    inner = [n.op_type for n in result.optimized.graph.node[-1].attribute[0].g.node]
    assert "Shape" not in inner and "Concat" not in inner and "Gather" not in inner
    proven(result, {"h0": np.arange(6, dtype=np.float32)})


@pytest.mark.parametrize(("x", "y", "op", "found"), [
    ("seq", "past", "+", "(past+seq)"), ("(past+seq)", "past", "-", "seq"), ("(n+1)", 1, "-", "n"),
    ("n", 1, "+", "(n+1)"), ("(past+seq)", "(seq+past)", "-", 0), ("n", "n", "-", 0), ("n", 2, "*", "(2*n)"),
    ("(2*n)", "n", "-", "n"), ("(n-3)", "n", "-", -3), ("a", "b", "*", "(a*b)"), ("(a*b)", "(a*b)", "-", "((a*b)-(a*b))"),
    ("a b", 1, "+", "({a b}+1)"), ("({a b}+1)", "a b", "-", 1), ("a-b", "a", "-", "(-a+{a-b})"), ("n", None, "+", None)])
def test_dims_cancel_in_sums(x, y, op, found):
    """Sums of symbols are kept in one normal form, so symbols cancel: (seq+past)-past is seq. A name that is not
    a plain identifier is braced, never read as an expression; a product of two symbols stays as it is written."""
    assert combine(x, y, op) == found


def test_range_from_past_to_past_plus_seq_has_length_seq():
    """GPT-2's position ids arange(past, seq + past): length (seq+past)-past = seq; Range(n, 2) may be empty or
    not (n unknown), so its length is not known."""
    model = make([h.make_node("Shape", ["k"], ["ks"]), h.make_node("Gather", ["ks", "two"], ["past"]),
                  h.make_node("Shape", ["ids"], ["is"]), h.make_node("Gather", ["is", "one"], ["seq"]),
                  h.make_node("Add", ["seq", "past"], ["end"]), h.make_node("Range", ["past", "end", "step"], ["pos"]),
                  h.make_node("Range", ["past", "two", "step"], ["other"])],
                 [info("k", shape=["batch", 2, "past", 8]), info("ids", T.INT64, ["batch", "seq"])],
                 [info("pos", T.INT64, None), info("other", T.INT64, None)],
                 [tensor("two", 2, np.int64), tensor("one", 1, np.int64), tensor("step", 1, np.int64)])
    g = state_of(model)
    assert g.known_value("end").item() == "(past+seq)"
    assert g.shape("pos") == ("seq",)
    assert g.shape("other") in (None, (None,))
