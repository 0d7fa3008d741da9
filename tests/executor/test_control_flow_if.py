"""If in every opset version against onnxruntime: branches of different output shapes, branches returning
sequences and optionals, outer-scope reads, nested Ifs; `trace.branch` and the branch's own events."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper as h

import explorer
from tests.support import control_flow_models as cf
from tests.support.control_flow_models import B, F, graph, node, opt_vi, seq_vi, vi


def _constant(name: str, value, dtype=np.float32):
    return node("Constant", [], [name], value=cf.const(name, value, dtype))


def _reduce(op: str, x: str, out: str, opset: int, keepdims: int) -> list:
    """Reduce `x` over axis 1, with axes as attribute or input as the opset wants."""
    as_input = opset >= (13 if op == "ReduceSum" else 18)
    if not as_input:
        return [node(op, [x], [out], axes=[1], keepdims=keepdims)]
    return [_constant(f"{out}_axes", [1], np.int64), node(op, [x, f"{out}_axes"], [out], keepdims=keepdims)]


def shapes_model(opset: int) -> object:
    """then: x flattened to [1, 6]; else a nested If: row maxima or row sums of x, shape [2]. Before opset 11
    both branches had to agree on shapes, so there every branch is a reduction to [2, 1] (ops of version 1)."""
    old = opset < 11
    then_nodes = (_reduce("ReduceMin", "x", "then_out", opset, 1) if old
                  else [node("Flatten", ["x"], ["then_out"], axis=0)])
    then_branch = graph(then_nodes, "then", [], [vi("then_out", F, None)])
    inner_then = graph(_reduce("ReduceMax", "x", "in_then", opset, int(old)), "inner_then", [],
                       [vi("in_then", F, None)])
    inner_else = graph(_reduce("ReduceSum", "x", "in_else", opset, int(old)), "inner_else", [],
                       [vi("in_else", F, None)])
    else_branch = graph([node("If", ["inner_cond"], ["else_out"], name="inner", then_branch=inner_then,
                              else_branch=inner_else)], "else", [], [vi("else_out", F, None)])
    outer = graph([node("If", ["cond"], ["y"], name="if", then_branch=then_branch, else_branch=else_branch)],
                  "if_shapes", [vi("cond", B, []), vi("inner_cond", B, []), vi("x", F, [2, 3])], [vi("y", F, None)])
    return cf.model(outer, opset, ir=3 if opset < 9 else None)


@pytest.mark.parametrize("opset", [1, 7, 11, 13, 16, 19, 21, 23, 25])
def test_if_every_version_with_different_branch_shapes(opset):
    proto = shapes_model(opset)
    x = np.random.default_rng(opset).standard_normal((2, 3)).astype(np.float32)
    for cond, inner in [(True, False), (False, True), (False, False)]:
        feeds = {"cond": np.array(cond), "inner_cond": np.array(inner), "x": x}
        trace = cf.run_both(proto, feeds)
        assert trace.branch("if") == ("then_branch" if cond else "else_branch")
        assert trace.outputs["y"].shape == ((2, 1) if opset < 11 else (1, 6) if cond else (2,))
        ran = {e.node for e in trace.events}
        assert any(path.startswith("if/then_branch/") for path in ran) == cond
        if not cond:
            assert trace.branch("if/else_branch/inner") == ("then_branch" if inner else "else_branch")
            assert trace.children(trace.event("if"))[-1].node == "if/else_branch/inner"
        assert all(e.iteration == () for e in trace.events)  # If adds no iteration index


def test_if_condition_of_shape_one():
    proto = shapes_model(13)
    proto.graph.input[0].type.tensor_type.shape.dim.add().dim_value = 1
    x = np.ones((2, 3), np.float32)
    trace = cf.run_both(proto, {"cond": np.array([False]), "inner_cond": np.array(True), "x": x})
    assert trace.branch("if") == "else_branch"


def test_if_branches_returning_sequences():
    """then: [x, x + 1]; else: x split into rows (SplitToSequence)."""
    then_branch = graph([_constant("one", 1.0), node("Add", ["x", "one"], ["x1"]),
                         node("SequenceConstruct", ["x", "x1"], ["seq_then"])], "then", [],
                        [seq_vi("seq_then", F, None)])
    else_branch = graph([node("SplitToSequence", ["x"], ["seq_else"], axis=0, keepdims=0)], "else", [],
                        [seq_vi("seq_else", F, None)])
    main = graph([node("If", ["cond"], ["seq"], name="if", then_branch=then_branch, else_branch=else_branch),
                  node("SequenceLength", ["seq"], ["n"])], "if_seq", [vi("cond", B, []), vi("x", F, [4, 3])],
                 [seq_vi("seq", F, None), vi("n", cf.I64, [])])
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    for cond, length in [(True, 2), (False, 4)]:
        trace = cf.run_both(cf.model(main, 13), {"cond": np.array(cond), "x": x})
        assert len(trace.outputs["seq"]) == length == int(trace.outputs["n"])


@pytest.mark.parametrize("opset", [16, 18, 21])
def test_if_branches_returning_optionals(opset):
    """then: Optional(x); else: an empty optional. Outputs read it back (has element, element or zeros)."""
    then_branch = graph([node("Optional", ["x"], ["opt_then"])], "then", [], [opt_vi("opt_then", F, [3])])
    else_branch = graph([node("Optional", [], ["opt_else"], type=h.make_tensor_type_proto(F, [3]))], "else", [],
                        [opt_vi("opt_else", F, [3])])
    fill_then = graph([node("OptionalGetElement", ["opt"], ["got"])], "fill_then", [], [vi("got", F, [3])])
    fill_else = graph([node("Sub", ["x", "x"], ["zeros"])], "fill_else", [], [vi("zeros", F, [3])])
    main = graph([
        node("If", ["cond"], ["opt"], name="make", then_branch=then_branch, else_branch=else_branch),
        node("OptionalHasElement", ["opt"], ["has"]),
        node("If", ["has"], ["value"], name="read", then_branch=fill_then, else_branch=fill_else),
    ], "if_opt", [vi("cond", B, []), vi("x", F, [3])], [vi("has", B, []), vi("value", F, [3])])
    x = np.array([1.0, -2.0, 3.0], np.float32)
    for cond in (True, False):
        trace = cf.run_both(cf.model(main, opset), {"cond": np.array(cond), "x": x})
        assert (trace.value("opt", "make") is None) == (not cond)
        assert trace.branch("read") == trace.branch("make")


def test_if_non_scalar_condition_is_a_clear_error():
    proto = shapes_model(13)
    model = explorer.load(proto)
    model.proto.graph.input[0].type.tensor_type.shape.dim.add().dim_value = 2
    feeds = {"cond": np.array([True, False]), "inner_cond": np.array(True), "x": np.ones((2, 3), np.float32)}
    with pytest.raises(explorer.ExecutionError, match=r"node 'if' \(If\).*cond must hold one value") as info:
        explorer.run(model, feeds)
    assert info.value.node == "if" and info.value.trace is not None
