"""GraphIndex's scope resolver: which graph and what defines a name read in a nested body, and its declared type,
following ONNX's scoping (a body sees its enclosing graphs' values; its own definitions shadow them)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from explorer.proto.graph_index import GraphIndex

F = TensorProto.FLOAT


def _index() -> GraphIndex:
    # main: x, w (initializer also listed as an input) -> outer = Add(x, w) -> If(c) whose then_branch holds a
    # Loop whose body reads `outer` (two graphs up), `w`, and defines its own `x` (shadowing main's x)
    loop_body = helper.make_graph(
        [helper.make_node("Add", ["outer", "w"], ["x"], name="shadow"),
         helper.make_node("Add", ["x", "acc"], ["acc_out"], name="acc_add"),
         helper.make_node("Identity", ["cond"], ["cond_out"], name="keep")],
        "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", F, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", F, [2])])
    then_branch = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "outer"], ["looped"], name="loop", body=loop_body)], "then",
        [], [helper.make_tensor_value_info("looped", F, [2])])
    else_branch = helper.make_graph([helper.make_node("Identity", ["x"], ["y_else"], name="pass")], "else",
                                    [], [helper.make_tensor_value_info("y_else", F, [2])])
    main = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["outer"], name="outer_add"),
         helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then_branch, else_branch=else_branch)],
        "main",
        [helper.make_tensor_value_info("x", F, [2]), helper.make_tensor_value_info("w", F, [2]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", F, [2])],
        [numpy_helper.from_array(np.ones(2, np.float32), "w")],
        value_info=[helper.make_tensor_value_info("outer", F, [2])])
    return GraphIndex(main)  # as written: no shape inference adding declarations


BODY = "branch/then_branch/loop/body"


def test_names_resolve_to_the_innermost_definition():
    index = _index()
    outer = index.resolve("outer", BODY)
    assert (outer.graph.path, outer.kind, outer.node) == ("", "node", "outer_add")
    assert index.resolve("x", BODY).node == f"{BODY}/shadow"  # the body's own x shadows main's input x
    assert index.resolve("x", "branch/else_branch").kind == "input"  # the else branch sees main's x
    acc = index.resolve("acc", BODY)
    assert (acc.kind, acc.index, acc.graph.path) == ("input", 2, BODY)
    w = index.resolve("w", BODY)  # an initializer that is also a main-graph input stays an initializer
    assert w.kind == "initializer" and numpy_helper.to_array(w.tensor).tolist() == [1.0, 1.0]
    assert index.resolve("nowhere", BODY) is None


def test_declared_types_come_from_the_declaring_graph_up_to_the_defining_one():
    index = _index()
    assert index.value_type("outer", BODY).tensor_type.shape.dim[0].dim_value == 2  # main's value_info
    assert index.value_type("acc", BODY).tensor_type.elem_type == F  # the body's formal input
    assert index.value_type("cond", BODY).tensor_type.elem_type == TensorProto.BOOL
    # the body's own x is declared nowhere: main's declaration of the x it shadows does not apply
    assert index.value_type("x", BODY) is None and index.value_type("x", "branch/else_branch") is not None
    assert [g.path for g in index.enclosing(BODY)] == [BODY, "branch/then_branch", ""]
    assert index.parent(index.graphs["branch/then_branch"]) is index.graphs[""]
