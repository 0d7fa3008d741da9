"""Scan, Loop and If samples, from the ONNX operator docs and beyond."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from builders import Sample

OPSET = [h.make_opsetid("", 21)]


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    return h.make_model(graph, opset_imports=OPSET, producer_name="explorer samples")


def scan_rnn_encoding() -> onnx.ModelProto:
    """The 'rnn-encoding' example of the Scan spec: H_t = tanh(X_t Wi^T + H_{t-1} Ri^T + Wbi + Rbi)."""
    rng = np.random.default_rng(1)
    hidden, features = 4, 3
    cell = h.make_graph(
        [
            h.make_node("MatMul", ["X_t", "Wi_T"], ["t1"], name="x_proj"),
            h.make_node("MatMul", ["H_tminus1", "Ri_T"], ["t2"], name="h_proj"),
            h.make_node("Add", ["t1", "t2"], ["t3"], name="sum"),
            h.make_node("Add", ["t3", "Wbi"], ["t4"], name="add_wbi"),
            h.make_node("Add", ["t4", "Rbi"], ["t5"], name="add_rbi"),
            h.make_node("Tanh", ["t5"], ["Ht"], name="tanh"),
            h.make_node("Identity", ["Ht"], ["Accumulate"], name="accumulate"),
        ],
        "rnn-cell-1",
        [h.make_tensor_value_info("H_tminus1", T.FLOAT, [hidden]), h.make_tensor_value_info("X_t", T.FLOAT, [features])],
        [h.make_tensor_value_info("Ht", T.FLOAT, [hidden]), h.make_tensor_value_info("Accumulate", T.FLOAT, [hidden])],
        [
            numpy_helper.from_array((rng.standard_normal((features, hidden)) * 0.5).astype(np.float32), "Wi_T"),
            numpy_helper.from_array((rng.standard_normal((hidden, hidden)) * 0.5).astype(np.float32), "Ri_T"),
            numpy_helper.from_array((rng.standard_normal(hidden) * 0.1).astype(np.float32), "Wbi"),
            numpy_helper.from_array((rng.standard_normal(hidden) * 0.1).astype(np.float32), "Rbi"),
        ],
    )
    graph = h.make_graph(
        [h.make_node("Scan", ["H_0", "X"], ["Y_h", "Y"], name="rnn", body=cell, num_scan_inputs=1)],
        "rnn-encoding",
        [h.make_tensor_value_info("H_0", T.FLOAT, [hidden]), h.make_tensor_value_info("X", T.FLOAT, ["T", features])],
        [h.make_tensor_value_info("Y_h", T.FLOAT, [hidden]), h.make_tensor_value_info("Y", T.FLOAT, ["T", hidden])],
    )
    return _model(graph)


def loop_spec_sample() -> onnx.ModelProto:
    """The predict-net / body-net example of the Loop spec (a=3, b=6, keepgoing, max_trip_count=10)."""
    body = h.make_graph(
        [
            h.make_node("Add", ["a", "b_in"], ["my_local"], name="my_local"),
            h.make_node("Sub", ["a", "b_in"], ["b_out"], name="b_out"),
            h.make_node("Greater", ["my_local", "b_out"], ["keepgoing_out"], name="keepgoing"),
            h.make_node("Add", ["b_in", "b_in"], ["user_defined_val"], name="user_defined_val"),
        ],
        "body-net",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("keepgoing_in", T.BOOL, []),
         h.make_tensor_value_info("b_in", T.INT32, [])],
        [h.make_tensor_value_info("keepgoing_out", T.BOOL, []), h.make_tensor_value_info("b_out", T.INT32, []),
         h.make_tensor_value_info("user_defined_val", T.INT32, [])],
    )
    graph = h.make_graph(
        [h.make_node("Loop", ["max_trip_count", "keepgoing", "b"], ["b_final", "user_defined_vals"], name="loop",
                     body=body)],
        "predict-net",
        [h.make_tensor_value_info("a", T.INT32, []), h.make_tensor_value_info("b", T.INT32, []),
         h.make_tensor_value_info("keepgoing", T.BOOL, []), h.make_tensor_value_info("max_trip_count", T.INT64, [])],
        [h.make_tensor_value_info("b_final", T.INT32, []), h.make_tensor_value_info("user_defined_vals", T.INT32, ["N"])],
    )
    return _model(graph)


def scan_two_axes() -> onnx.ModelProto:
    """Two scan inputs on different axes, one read backwards; two scan outputs, one prepended on axis 1."""
    body = h.make_graph(
        [
            h.make_node("Add", ["a_t", "b_t"], ["pair"], name="pair_sum"),
            h.make_node("Add", ["total_in", "pair"], ["total_out"], name="running_total"),
            h.make_node("Mul", ["a_t", "b_t"], ["product"], name="product"),
            h.make_node("Identity", ["total_out"], ["running"], name="running"),
        ],
        "zip_body",
        [h.make_tensor_value_info("total_in", T.FLOAT, [3]), h.make_tensor_value_info("a_t", T.FLOAT, [3]),
         h.make_tensor_value_info("b_t", T.FLOAT, [3])],
        [h.make_tensor_value_info("total_out", T.FLOAT, [3]), h.make_tensor_value_info("running", T.FLOAT, [3]),
         h.make_tensor_value_info("product", T.FLOAT, [3])],
    )
    scan = h.make_node(
        "Scan", ["total0", "A", "B"], ["total", "runs", "products"], name="zip", body=body, num_scan_inputs=2,
        scan_input_axes=[0, -1], scan_input_directions=[0, 1], scan_output_axes=[0, -1],
        scan_output_directions=[0, 1])
    graph = h.make_graph(
        [scan], "scan_two_axes",
        [h.make_tensor_value_info("total0", T.FLOAT, [3]), h.make_tensor_value_info("A", T.FLOAT, [5, 3]),
         h.make_tensor_value_info("B", T.FLOAT, [3, 5])],
        [h.make_tensor_value_info("total", T.FLOAT, [3]), h.make_tensor_value_info("runs", T.FLOAT, [5, 3]),
         h.make_tensor_value_info("products", T.FLOAT, [3, 5])],
    )
    return _model(graph)


def while_loop() -> onnx.ModelProto:
    """A while loop (cond only, no trip count): halve x until its norm drops below 1; every x is a scan output."""
    body = h.make_graph(
        [
            h.make_node("Mul", ["x_in", "half"], ["x_out"], name="halve"),
            h.make_node("ReduceL2", ["x_out"], ["norm"], name="norm", keepdims=0),
            h.make_node("Greater", ["norm", "one"], ["cond_out"], name="still_big"),
            h.make_node("Identity", ["x_out"], ["history"], name="history"),
        ],
        "halve_body",
        [h.make_tensor_value_info("iter", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("x_in", T.FLOAT, [2])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("x_out", T.FLOAT, [2]),
         h.make_tensor_value_info("history", T.FLOAT, [2])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half"), numpy_helper.from_array(np.array(1, np.float32), "one")],
    )
    nodes = [
        h.make_node("Mul", ["x", "eight"], ["x8"], name="scale_up"),
        h.make_node("ReduceL2", ["x8"], ["norm0"], name="initial_norm", keepdims=0),
        h.make_node("Greater", ["norm0", "one"], ["big"], name="is_big"),
        h.make_node("Loop", ["", "big", "x8"], ["x_small", "halvings"], name="while", body=body),
    ]
    graph = h.make_graph(
        nodes, "while_loop", [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("x_small", T.FLOAT, [2]), h.make_tensor_value_info("halvings", T.FLOAT, ["N", 2])],
        [numpy_helper.from_array(np.array(1, np.float32), "one"),
         numpy_helper.from_array(np.array(8, np.float32), "eight")],
    )
    return _model(graph)


def loop_sequence() -> onnx.ModelProto:
    """A Loop carrying a sequence: each iteration appends the running prefix sum of x to it."""
    body = h.make_graph(
        [
            h.make_node("Add", ["sum_in", "x"], ["sum_out"], name="accumulate"),
            h.make_node("SequenceInsert", ["seq_in", "sum_out"], ["seq_out"], name="append"),
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
        ],
        "append_body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("sum_in", T.FLOAT, [2]),
         h.make_tensor_sequence_value_info("seq_in", T.FLOAT, [2])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("sum_out", T.FLOAT, [2]),
         h.make_tensor_sequence_value_info("seq_out", T.FLOAT, [2])],
    )
    nodes = [
        h.make_node("SequenceEmpty", [], ["empty"], name="empty", dtype=T.FLOAT),
        h.make_node("Loop", ["n", "", "zeros", "empty"], ["total", "prefix_sums"], name="collect", body=body),
    ]
    graph = h.make_graph(
        nodes, "loop_sequence",
        [h.make_tensor_value_info("x", T.FLOAT, [2]), h.make_tensor_value_info("n", T.INT64, [])],
        [h.make_tensor_value_info("total", T.FLOAT, [2]), h.make_tensor_sequence_value_info("prefix_sums", T.FLOAT, [2])],
        [numpy_helper.from_array(np.zeros(2, np.float32), "zeros")],
    )
    return _model(graph)


def nested_loops() -> onnx.ModelProto:
    """If inside Loop inside Scan: per time step, an inner Loop alternates between adding x_t and halving."""
    then_branch = h.make_graph([h.make_node("Add", ["acc_in", "x_t"], ["acc_then"], name="add_x")], "then_body",
                               [], [h.make_tensor_value_info("acc_then", T.FLOAT, [3])])
    else_branch = h.make_graph([h.make_node("Mul", ["acc_in", "half"], ["acc_else"], name="halve")], "else_body",
                               [], [h.make_tensor_value_info("acc_else", T.FLOAT, [3])])
    loop_body = h.make_graph(
        [
            h.make_node("Mod", ["j", "two"], ["parity"], name="parity"),
            h.make_node("Equal", ["parity", "zero"], ["even"], name="is_even"),
            h.make_node("If", ["even"], ["acc_out"], name="branch", then_branch=then_branch,
                        else_branch=else_branch),
            h.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
        ],
        "inner_body",
        [h.make_tensor_value_info("j", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("acc_in", T.FLOAT, [3])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [3])],
        [numpy_helper.from_array(np.array(2, np.int64), "two"), numpy_helper.from_array(np.array(0, np.int64), "zero"),
         numpy_helper.from_array(np.array(0.5, np.float32), "half")],
    )
    scan_body = h.make_graph(
        [
            h.make_node("Loop", ["steps", "", "s_in"], ["mixed"], name="inner", body=loop_body),
            h.make_node("Tanh", ["mixed"], ["s_out"], name="squash"),
            h.make_node("Identity", ["s_out"], ["y_t"], name="emit"),
        ],
        "enc_body",
        [h.make_tensor_value_info("s_in", T.FLOAT, [3]), h.make_tensor_value_info("x_t", T.FLOAT, [3])],
        [h.make_tensor_value_info("s_out", T.FLOAT, [3]), h.make_tensor_value_info("y_t", T.FLOAT, [3])],
        [numpy_helper.from_array(np.array(3, np.int64), "steps")],
    )
    graph = h.make_graph(
        [h.make_node("Scan", ["s0", "X"], ["s_final", "Y"], name="enc", body=scan_body, num_scan_inputs=1)],
        "nested_loops",
        [h.make_tensor_value_info("s0", T.FLOAT, [3]), h.make_tensor_value_info("X", T.FLOAT, ["T", 3])],
        [h.make_tensor_value_info("s_final", T.FLOAT, [3]), h.make_tensor_value_info("Y", T.FLOAT, ["T", 3])],
    )
    return _model(graph)


def _demo(**arrays: object) -> dict[str, np.ndarray]:
    return {name: np.asarray(value) for name, value in arrays.items()}


def scan_rnn_encoding_inputs() -> dict[str, np.ndarray]:
    """Eight time steps from a zero state."""
    rng = np.random.default_rng(0)
    return _demo(H_0=np.zeros(4, np.float32), X=rng.standard_normal((8, 3)).astype(np.float32))


def loop_spec_inputs() -> dict[str, np.ndarray]:
    """The spec's values: keepgoing becomes false in the second iteration, before the trip count of 10."""
    return _demo(a=np.int32(3), b=np.int32(6), keepgoing=np.bool_(True), max_trip_count=np.int64(10))


def while_loop_inputs() -> dict[str, np.ndarray]:
    """8x = [24, 32] has norm 40: six halvings bring it below 1."""
    return _demo(x=np.array([3, 4], np.float32))


def loop_sequence_inputs() -> dict[str, np.ndarray]:
    """Five iterations: the sequence grows to [1, 2], [2, 4], ..., [5, 10]."""
    return _demo(x=np.array([1, 2], np.float32), n=np.int64(5))


def nested_loops_inputs() -> dict[str, np.ndarray]:
    """Four Scan steps of three inner iterations each."""
    rng = np.random.default_rng(0)
    return _demo(s0=rng.standard_normal(3).astype(np.float32), X=rng.standard_normal((4, 3)).astype(np.float32))


SAMPLES = [
    Sample("scan_rnn_encoding", "Scan: the spec's 'rnn-encoding' example, a tanh RNN cell run over the time axis "
           "of X with the hidden state carried.", scan_rnn_encoding, scan_rnn_encoding_inputs),
    Sample("loop_spec", "Loop: the spec's predict-net example (trip count and cond), reading 'a' from the outer "
           "scope and stacking a scalar per iteration.", loop_spec_sample, loop_spec_inputs),
    Sample("scan_two_axes", "Scan with two inputs on different axes (0 and -1), the second read backwards, and a "
           "scan output prepended along axis -1.", scan_two_axes),
    Sample("while_loop", "Loop as a while loop (cond only, no trip count): halves 8x until its norm is below 1, "
           "keeping every value as a scan output.", while_loop, while_loop_inputs),
    Sample("loop_sequence", "Loop carrying a sequence: each iteration appends a prefix sum with SequenceInsert.",
           loop_sequence, loop_sequence_inputs),
    Sample("nested_loops", "Three levels: If inside Loop inside Scan; the inner Loop alternates between adding "
           "x_t (read from the Scan body) and halving.", nested_loops, nested_loops_inputs),
]
