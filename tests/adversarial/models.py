"""Hostile and broken models built in code for the adversarial corpus."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

OPSET = [h.make_opsetid("", 18)]


def vi(name: str, elem: int = T.FLOAT, shape=None) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, initializers=(), opset=OPSET, **kwargs) -> onnx.ModelProto:
    graph = h.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return h.make_model(graph, opset_imports=list(opset), **kwargs)


def const(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def one_op(op: str, inputs: dict[str, np.ndarray], constants: dict[str, np.ndarray] | None = None,
           order: list[str] | None = None, **attrs) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A model of one node whose inputs are graph inputs (`inputs`, fed) and initializers (`constants`)."""
    constants = constants or {}
    names = order or [*inputs, *constants]
    infos = [vi(n, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape)) for n, v in inputs.items()]
    node = h.make_node(op, names, ["y"], name=op.lower(), **attrs)
    return model([node], infos, [vi("y", T.FLOAT, None)], [const(n, v) for n, v in constants.items()]), inputs


def loop(body_nodes, body_inputs, body_outputs, node_inputs, node_outputs, graph_inputs, graph_outputs,
         initializers=(), before=()) -> onnx.ModelProto:
    body = h.make_graph(body_nodes, "body", body_inputs, body_outputs)
    node = h.make_node("Loop", node_inputs, node_outputs, body=body, name="loop")
    return model([*before, node], graph_inputs, graph_outputs, initializers)


def endless_loop() -> onnx.ModelProto:
    return loop([h.make_node("Identity", ["c"], ["co"]), h.make_node("Identity", ["x"], ["xo"])],
                [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("x", shape=[1])],
                [vi("co", T.BOOL, []), vi("xo", shape=[1])],
                ["", "c0", "x"], ["y"], [vi("x", shape=[1])], [vi("y", shape=[1])], [const("c0", True)])


def doubling_loop() -> onnx.ModelProto:
    """x = concat(x, x) every iteration: 2**40 elements by the end."""
    return loop([h.make_node("Identity", ["c"], ["co"]), h.make_node("Concat", ["x", "x"], ["xo"], axis=0)],
                [vi("i", T.INT64, []), vi("c", T.BOOL, []), vi("x", shape=None)],
                [vi("co", T.BOOL, []), vi("xo", shape=None)],
                ["n", "", "x"], ["y"], [vi("x", shape=[1024])], [vi("y", shape=None)], [const("n", np.int64(40))])


def stacking_loop() -> onnx.ModelProto:
    """Each of 400 iterations emits a 1 MB scan output: 400 MB stacked, past a 256 MB limit."""
    return loop([h.make_node("Identity", ["c"], ["co"]), h.make_node("Identity", ["x"], ["so"])],
                [vi("i", T.INT64, []), vi("c", T.BOOL, [])],
                [vi("co", T.BOOL, []), vi("so", shape=[262144])],
                ["n", ""], ["y"], [vi("x", shape=[262144])], [vi("y", shape=None)], [const("n", np.int64(400))])


def growing_sequence_loop() -> onnx.ModelProto:
    body = [h.make_node("Identity", ["c"], ["co"]), h.make_node("SequenceInsert", ["s", "x"], ["so"]),
            h.make_node("Identity", ["x"], ["xo"])]
    graph_body = h.make_graph(body, "body",
                              [vi("i", T.INT64, []), vi("c", T.BOOL, []),
                               h.make_tensor_sequence_value_info("s", T.FLOAT, [4]), vi("x", shape=[4])],
                              [vi("co", T.BOOL, []), h.make_tensor_sequence_value_info("so", T.FLOAT, [4]),
                               vi("xo", shape=[4])])
    nodes = [h.make_node("SequenceEmpty", [], ["s0"], dtype=T.FLOAT),
             h.make_node("Loop", ["n", "", "s0", "x"], ["sf", "xf"], body=graph_body, name="loop"),
             h.make_node("SequenceLength", ["sf"], ["len"]), h.make_node("ConcatFromSequence", ["sf"], ["all"], axis=0)]
    return model(nodes, [vi("n", T.INT64, []), vi("x", shape=[4])], [vi("len", T.INT64, []), vi("all", shape=None)])


def nested_ifs(depth: int) -> onnx.ModelProto:
    branch = h.make_graph([h.make_node("Identity", ["x"], ["y"])], "leaf", [], [vi("y", shape=[1])])
    for level in range(depth):
        other = h.make_graph([h.make_node("Identity", ["x"], [f"e{level}"])], f"e{level}", [],
                             [vi(f"e{level}", shape=[1])])
        branch = h.make_graph([h.make_node("If", ["c"], [f"y{level}"], then_branch=branch, else_branch=other)],
                              f"b{level}", [], [vi(f"y{level}", shape=[1])])
    return model(list(branch.node), [vi("c", T.BOOL, []), vi("x", shape=[1])], [vi(branch.output[0].name,
                                                                                 shape=[1])])


def sparse_model(indices, dims, values=(1.0, 2.0)) -> onnx.ModelProto:
    sparse = h.make_sparse_tensor(h.make_tensor("w", T.FLOAT, [len(values)], list(values)),
                                  h.make_tensor("w_i", T.INT64, [len(indices)], list(indices)), list(dims))
    graph = h.make_graph([h.make_node("Identity", ["w"], ["y"])], "g", [], [vi("y", shape=None)],
                         sparse_initializer=[sparse])
    return h.make_model(graph, opset_imports=OPSET)


def external_model(location: str, offset: str = "0", length: str | None = "16",
                   dims: tuple[int, ...] = (4,)) -> onnx.ModelProto:
    tensor = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=list(dims), data_location=T.EXTERNAL)
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            tensor.external_data.add(key=key, value=value)
    return model([h.make_node("Identity", ["w"], ["y"])], [], [vi("y", shape=list(dims))], [tensor])


def named(name: str) -> onnx.ModelProto:
    """Relu between a graph input and output both called `name`-ish, with a node of that name."""
    return model([h.make_node("Relu", [name], [name + "_out"], name=name)], [vi(name, shape=[3])],
                 [vi(name + "_out", shape=[3])])


def gru(hidden: int = 3) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((1, 3 * hidden, 2)).astype(np.float32)
    r = rng.standard_normal((1, 3 * hidden, hidden)).astype(np.float32)
    node = h.make_node("GRU", ["x", "W", "R"], ["y", "y_h"], hidden_size=hidden, name="gru")
    m = model([node], [vi("x", shape=[4, 1, 2])], [vi("y", shape=None), vi("y_h", shape=None)],
              [const("W", w), const("R", r)])
    return m, {"x": rng.standard_normal((4, 1, 2)).astype(np.float32)}


def nested_loops(depth: int, trips: int) -> onnx.ModelProto:
    """`depth` Loops nested in each other, `trips` iterations each: trips**depth iterations in all, every loop
    within any per-loop limit. Every name is unique across the scopes, as onnxruntime requires."""

    def signature(level: int) -> tuple[list, list]:
        return ([vi(f"i{level}", T.INT64, []), vi(f"c{level}", T.BOOL, []), vi(f"x{level}", shape=[1])],
                [vi(f"co{level}", T.BOOL, []), vi(f"xo{level}", shape=[1])])

    body = h.make_graph([h.make_node("Identity", ["c0"], ["co0"]), h.make_node("Identity", ["x0"], ["xo0"])], "b0",
                        *signature(0))
    for level in range(1, depth):
        body = h.make_graph([h.make_node("Identity", [f"c{level}"], [f"co{level}"]),
                             h.make_node("Loop", ["n", "", f"x{level}"], [f"xo{level}"], body=body,
                                         name=f"loop{level}")], f"b{level}", *signature(level))
    return model([h.make_node("Loop", ["n", "", "x"], ["y"], body=body, name="outer")], [vi("x", shape=[1])],
                 [vi("y", shape=[1])], [const("n", np.int64(trips))])


LOCAL = [*OPSET, h.make_opsetid("local", 1)]


def recursive_functions(*chain: str) -> onnx.ModelProto:
    """Local functions each calling the next in `chain`, the last calling the first."""
    functions = [h.make_function("local", name, ["a"], ["b"],
                                 [h.make_node(chain[(k + 1) % len(chain)], ["a"], ["b"], domain="local")], LOCAL)
                 for k, name in enumerate(chain)]
    return model([h.make_node(chain[0], ["x"], ["y"], domain="local", name="call")], [vi("x", shape=[1])],
                 [vi("y", shape=[1])], opset=LOCAL, functions=functions)


def reading_initializer(tensor: onnx.TensorProto) -> onnx.ModelProto:
    return model([h.make_node("Add", ["x", tensor.name], ["y"])], [vi("x", shape=[1])], [vi("y", shape=None)],
                 [tensor])
