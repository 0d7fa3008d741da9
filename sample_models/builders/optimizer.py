"""Samples for the pattern optimizer: graphs shaped like exported models, where the rewrites fire (also inside a
Loop body and a Scan body)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from builders import Sample

OPSET = [h.make_opsetid("", 18)]


def _const(name: str, value, dtype=np.int64) -> onnx.NodeProto:
    return h.make_node("Constant", [], [name], name=f"const_{name}",
                       value=numpy_helper.from_array(np.array(value, dtype=dtype), name))


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    return h.make_model(graph, opset_imports=OPSET, producer_name="explorer samples")


def opt_shape_chain() -> onnx.ModelProto:
    """Dynamic-shape arithmetic as exporters write it around Reshapes, plus Gather chains and Cast pairs."""
    nodes = [
        h.make_node("Shape", ["x"], ["shape"], name="shape_of_x"),
        _const("zero", 0), _const("one_two", [1, 2]), _const("pre", [5, 6]), _const("post", [7]),
        _const("axes0", [0]), _const("minus_one", [-1]), _const("rows_12", [-1, 12]), _const("keep_12", [0, 12]),
        _const("order", [2, 0, 1]), _const("pick", 1), _const("take", [2, 3]), _const("starts", [0]),
        _const("ends", [2**63 - 1]), _const("expand_to", [1, 5]),
        # batch = Gather(Shape(x), 0) stays symbolic; Gather(Shape(x), [1, 2]) is known: [3, 4]
        h.make_node("Gather", ["shape", "zero"], ["batch"], name="batch_dim", axis=0),
        h.make_node("Gather", ["shape", "one_two"], ["inner_dims"], name="inner_dims", axis=0),
        h.make_node("Unsqueeze", ["batch", "axes0"], ["batch_1d"], name="batch_1d"),
        h.make_node("Concat", ["batch_1d", "minus_one"], ["shape_a"], name="concat_shape", axis=0),
        h.make_node("Concat", ["shape_a"], ["shape_b"], name="concat_single", axis=0),
        # Reshape(Reshape(x, [batch, -1]), [-1, 12]) -> Reshape(x, [-1, 12]); then [0, 12] changes nothing
        h.make_node("Reshape", ["x", "shape_b"], ["x_flat0"], name="reshape_first"),
        h.make_node("Reshape", ["x_flat0", "rows_12"], ["x_flat1"], name="reshape_second"),
        h.make_node("Reshape", ["x_flat1", "keep_12"], ["x_flat"], name="reshape_same"),
        # Gather(Concat([5, 6], Shape(x), [7]), [2, 3]) -> Gather(Shape(x), [0, 1])
        h.make_node("Concat", ["pre", "shape", "post"], ["padded"], name="concat_padded", axis=0),
        h.make_node("Gather", ["padded", "take"], ["leading"], name="gather_padded", axis=0),
        # Concat(Concat(leading, [5, 6]), [7]) -> Concat(leading, [5, 6], [7])
        h.make_node("Concat", ["leading", "pre"], ["leading_pre"], name="concat_inner", axis=0),
        h.make_node("Concat", ["leading_pre", "post"], ["meta"], name="concat_outer", axis=0),
        # a Slice and an Expand that change nothing, then Gather(Gather(v, [2, 0, 1]), 1) -> Gather(v, 0)
        h.make_node("Slice", ["v", "starts", "ends"], ["v_all"], name="slice_all"),
        h.make_node("Expand", ["v_all", "expand_to"], ["v_same"], name="expand_same"),
        h.make_node("Gather", ["v_same", "order"], ["v_perm"], name="gather_perm", axis=0),
        h.make_node("Gather", ["v_perm", "pick"], ["v_one"], name="gather_pick", axis=0),
        # int32 -> int64 -> float: the middle Cast loses nothing
        h.make_node("Cast", ["counts"], ["counts64"], name="cast_int64", to=T.INT64),
        h.make_node("Cast", ["counts64"], ["counts_f"], name="cast_float", to=T.FLOAT),
        h.make_node("Cast", ["inner_dims"], ["inner_f"], name="cast_dims", to=T.FLOAT),
        h.make_node("Add", ["counts_f", "inner_f"], ["sizes"], name="add_sizes"),
    ]
    graph = h.make_graph(
        nodes, "opt_shape_chain",
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 4]), h.make_tensor_value_info("v", T.FLOAT, [3, 5]),
         h.make_tensor_value_info("counts", T.INT32, [2])],
        [h.make_tensor_value_info("x_flat", T.FLOAT, ["batch", 12]),
         h.make_tensor_value_info("meta", T.INT64, [5]), h.make_tensor_value_info("v_one", T.FLOAT, [5]),
         h.make_tensor_value_info("sizes", T.FLOAT, [2])])
    return _model(graph)


def opt_linear_cleanup() -> onnx.ModelProto:
    """A linear layer wrapped in the no-ops exporters leave: Identity chains, x*1, x+0, Transpose pairs, Casts to
    the same type, twin nodes, constant arithmetic and an If on a constant flag."""
    rng = np.random.default_rng(3)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 6)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal(6).astype(np.float32), "b"),
        numpy_helper.from_array(np.array(True), "use_relu"),
        numpy_helper.from_array(np.array([2.0, 0.5], np.float32), "halves"),
    ]
    then_branch = h.make_graph([h.make_node("Relu", ["y_lin"], ["act_then"], name="relu")], "then_relu", [],
                               [h.make_tensor_value_info("act_then", T.FLOAT, [2, 6])])
    else_branch = h.make_graph([h.make_node("Identity", ["y_lin"], ["act_else"], name="keep")], "else_keep", [],
                               [h.make_tensor_value_info("act_else", T.FLOAT, [2, 6])])
    nodes = [
        _const("one", 1.0, np.float32), _const("zero", [0.0], np.float32),
        h.make_node("Identity", ["x"], ["x_a"], name="id_a"),
        h.make_node("Identity", ["x_a"], ["x_b"], name="id_b"),
        h.make_node("Mul", ["x_b", "one"], ["x_c"], name="times_one"),
        h.make_node("Transpose", ["x_c"], ["x_t"], name="transpose_a", perm=[1, 0]),
        h.make_node("Transpose", ["x_t"], ["x_tt"], name="transpose_b", perm=[1, 0]),
        h.make_node("Cast", ["x_tt"], ["x_f"], name="cast_same", to=T.FLOAT),
        h.make_node("MatMul", ["x_f", "W"], ["xw"], name="matmul"),
        h.make_node("Add", ["xw", "b"], ["y_lin0"], name="bias"),
        h.make_node("Add", ["y_lin0", "zero"], ["y_lin"], name="plus_zero"),
        h.make_node("If", ["use_relu"], ["act"], name="if_flag", then_branch=then_branch, else_branch=else_branch),
        # halves[0] * halves[1] is a constant; the two Tanh are twins
        h.make_node("ReduceProd", ["halves"], ["unit"], name="constant_product", keepdims=0),
        h.make_node("Mul", ["act", "unit"], ["scaled"], name="times_unit"),
        h.make_node("Tanh", ["scaled"], ["t1"], name="tanh_a"),
        h.make_node("Tanh", ["scaled"], ["t2"], name="tanh_b"),
        h.make_node("Add", ["t1", "t2"], ["y"], name="sum_twins"),
    ]
    graph = h.make_graph(nodes, "opt_linear_cleanup", [h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2, 6])], inits)
    return _model(graph)


def opt_loop_body() -> onnx.ModelProto:
    """A Loop whose body scales the outer input x every iteration (loop-invariant: hoisted before the loop) and
    holds the cleanups of the other samples: an Identity, a Transpose pair, x*1, a Cast to the same type and
    twin Sigmoids."""
    rng = np.random.default_rng(4)
    body_nodes = [
        _const("one", 1.0, np.float32),
        h.make_node("Mul", ["x", "scale"], ["x_scaled"], name="scale_input"),
        h.make_node("Transpose", ["W"], ["w_t"], name="transpose_a", perm=[1, 0]),
        h.make_node("Transpose", ["w_t"], ["w_tt"], name="transpose_b", perm=[1, 0]),
        h.make_node("Identity", ["h_in"], ["h_id"], name="copy_state"),
        h.make_node("MatMul", ["h_id", "w_tt"], ["hw"], name="matmul"),
        h.make_node("Mul", ["hw", "one"], ["hw1"], name="times_one"),
        h.make_node("Add", ["hw1", "x_scaled"], ["pre"], name="add_input"),
        h.make_node("Sigmoid", ["pre"], ["gate_a"], name="sigmoid_a"),
        h.make_node("Sigmoid", ["pre"], ["gate_b"], name="sigmoid_b"),
        h.make_node("Mul", ["gate_a", "gate_b"], ["gate"], name="gate"),
        h.make_node("Tanh", ["gate"], ["h_new0"], name="tanh"),
        h.make_node("Cast", ["h_new0"], ["h_out"], name="cast_same", to=T.FLOAT),
        h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
        h.make_node("ReduceSum", ["h_out"], ["total"], name="total", keepdims=0),
    ]
    body = h.make_graph(
        body_nodes, "loop_body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("h_in", T.FLOAT, [2, 4])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("h_out", T.FLOAT, [2, 4]),
         h.make_tensor_value_info("total", T.FLOAT, [])])
    inits = [
        numpy_helper.from_array((rng.standard_normal((4, 4)) * 0.5).astype(np.float32), "W"),
        numpy_helper.from_array(np.array(0.8, np.float32), "scale"),
        numpy_helper.from_array(np.array(3, np.int64), "trips"),
        numpy_helper.from_array(np.array(True), "start"),
    ]
    nodes = [h.make_node("Loop", ["trips", "start", "h0"], ["h_final", "totals"], name="loop", body=body)]
    graph = h.make_graph(nodes, "opt_loop_body",
                         [h.make_tensor_value_info("h0", T.FLOAT, [2, 4]), h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
                         [h.make_tensor_value_info("h_final", T.FLOAT, [2, 4]),
                          h.make_tensor_value_info("totals", T.FLOAT, [3])], inits)
    return _model(graph)


def opt_scan_body() -> onnx.ModelProto:
    """A Scan RNN cell whose body scales the outer bias every step (loop-invariant: hoisted before the Scan),
    transposes the weight twice, adds zero, casts to the same type and round-trips through Unsqueeze/Squeeze."""
    rng = np.random.default_rng(5)
    body_nodes = [
        _const("axis0", [0]), _const("zero", 0.0, np.float32), _const("half", 0.5, np.float32),
        h.make_node("Mul", ["b", "half"], ["b_half"], name="scale_bias"),
        h.make_node("Transpose", ["W"], ["w_t"], name="transpose_a", perm=[1, 0]),
        h.make_node("Transpose", ["w_t"], ["w_tt"], name="transpose_b", perm=[1, 0]),
        h.make_node("Identity", ["s_in"], ["s_id"], name="copy_state"),
        h.make_node("Unsqueeze", ["s_id", "axis0"], ["s_row"], name="as_row"),
        h.make_node("MatMul", ["s_row", "w_tt"], ["sw_row"], name="matmul"),
        h.make_node("Squeeze", ["sw_row", "axis0"], ["sw"], name="as_vector"),
        h.make_node("Add", ["sw", "x_t"], ["z"], name="add_input"),
        h.make_node("Add", ["z", "b_half"], ["zb"], name="add_bias"),
        h.make_node("Add", ["zb", "zero"], ["z0"], name="plus_zero"),
        h.make_node("Tanh", ["z0"], ["s_out"], name="tanh"),
        h.make_node("Cast", ["s_out"], ["s_cast"], name="cast_same", to=T.FLOAT),
        h.make_node("Unsqueeze", ["s_cast", "axis0"], ["y_row"], name="round_trip_a"),
        h.make_node("Squeeze", ["y_row", "axis0"], ["y_t"], name="round_trip_b"),
    ]
    body = h.make_graph(body_nodes, "scan_body",
                        [h.make_tensor_value_info("s_in", T.FLOAT, [4]), h.make_tensor_value_info("x_t", T.FLOAT, [4])],
                        [h.make_tensor_value_info("s_out", T.FLOAT, [4]), h.make_tensor_value_info("y_t", T.FLOAT, [4])])
    inits = [numpy_helper.from_array((rng.standard_normal((4, 4)) * 0.5).astype(np.float32), "W")]
    nodes = [h.make_node("Scan", ["s0", "xs"], ["s_final", "ys"], name="scan", body=body, num_scan_inputs=1)]
    graph = h.make_graph(nodes, "opt_scan_body",
                         [h.make_tensor_value_info("s0", T.FLOAT, [4]), h.make_tensor_value_info("xs", T.FLOAT, [5, 4]),
                          h.make_tensor_value_info("b", T.FLOAT, [4])],
                         [h.make_tensor_value_info("s_final", T.FLOAT, [4]),
                          h.make_tensor_value_info("ys", T.FLOAT, [5, 4])], inits)
    return _model(graph)


SAMPLES = [
    Sample("opt_shape_chain", "Optimizer: exported shape arithmetic (Shape/Gather/Concat/Reshape), Gather chains "
           "and Cast pairs that GatherConcat, GatherGather, ShapeGather and friends simplify.", opt_shape_chain),
    Sample("opt_linear_cleanup", "Optimizer: a linear layer wrapped in exporter no-ops (Identity, x*1, x+0, "
           "Transpose pairs, same-type Cast, twin Tanh, an If on a constant flag): 19 nodes become Gemm, Relu, Tanh, Add.",
           opt_linear_cleanup),
    Sample("opt_loop_body", "Optimizer: rewrites inside a Loop body (Identity, Transpose pair, x*1, same-type Cast, "
           "twin Sigmoids), and its loop-invariant scaling of the outer input hoisted before the loop.", opt_loop_body),
    Sample("opt_scan_body", "Optimizer: rewrites inside a Scan body (x+0, same-type Cast, Unsqueeze/Squeeze round "
           "trip, Transpose pair), and its loop-invariant scaling of the outer bias hoisted before the Scan.",
           opt_scan_body),
]
