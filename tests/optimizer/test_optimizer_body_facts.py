"""Shapes known inside Loop and Scan bodies: a Scan slice has its outer input's shape without the scan axis, a
carried value returned unchanged is its initial value, a carried value whose update keeps its shape keeps its
initial shape, and outer values keep what the enclosing graph knows; shape arithmetic on them folds inside the
body, checked against onnxruntime. A carried value that grows is left alone."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

from explorer.optimizer import optimize
from tests.support.optimizer_models import body, info, make, proven, real_model, tensor

SHAPE_OPS = {"Shape", "Gather", "Unsqueeze", "Concat", "Size"}


def body_ops(model, index: int = -1) -> list[str]:
    return [n.op_type for n in model.graph.node[index].attribute[0].g.node]


def reshape_by_own_shape(x: str, out: str) -> list:
    """out = Reshape(x, [x.shape[0], -1]) computed through Shape -> Gather -> Unsqueeze -> Concat."""
    return [h.make_node("Shape", [x], [f"{x}_s"]), h.make_node("Gather", [f"{x}_s", "i0"], [f"{x}_d"]),
            h.make_node("Unsqueeze", [f"{x}_d", "ax0"], [f"{x}_u"]),
            h.make_node("Concat", [f"{x}_u", "minus"], [f"{x}_t"], axis=0),
            h.make_node("Reshape", [x, f"{x}_t"], [out])]


CONSTANTS = [tensor("i0", 0, np.int64), tensor("ax0", [0], np.int64), tensor("minus", [-1], np.int64)]


def test_shape_arithmetic_on_a_scan_slice_folds():
    scan_body = body([*reshape_by_own_shape("x_t", "flat"), h.make_node("ReduceSum", ["flat", "one"], ["r"]),
                      h.make_node("Add", ["acc_in", "r"], ["acc_out"]), h.make_node("Identity", ["r"], ["y_t"])],
                     [info("acc_in", shape=None), info("x_t", shape=None)],
                     [info("acc_out", shape=None), info("y_t", shape=None)])
    model = make([h.make_node("Scan", ["acc0", "x"], ["acc", "ys"], body=scan_body, num_scan_inputs=1,
                              scan_input_axes=[1])],
                 [info("acc0", shape=[2, 1]), info("x", shape=[2, 5, 3, 4])],
                 [info("acc", shape=None), info("ys", shape=None)],
                 [*CONSTANTS, tensor("one", [1], np.int64)])
    result = optimize(model)
    assert not SHAPE_OPS & set(body_ops(result.optimized))
    facts = [f for s in result.steps for f in s.facts]
    assert "x_t has shape [2, 3, 4]" in facts  # the outer [2, 5, 3, 4] without scan axis 1
    proven(result, {"acc0": np.zeros((2, 1), np.float32),
                    "x": np.arange(120, dtype=np.float32).reshape(2, 5, 3, 4)})


def loop(nodes: list, carried: str, update: str) -> object:
    """A Loop of 3 trips over state `carried` (initial `h0`), whose body returns `update` for it and the
    first dim of the state's shape as a scan output `n`."""
    loop_body = body([*nodes, h.make_node("Shape", [carried], ["sh"]), h.make_node("Gather", ["sh", "i0"], ["n"]),
                      h.make_node("Identity", ["cond_in"], ["cond_out"])],
                     [info("iter", T.INT64, []), info("cond_in", T.BOOL, []), info(carried, shape=None)],
                     [info("cond_out", T.BOOL, []), info(update, shape=None), info("n", T.INT64, None)])
    return make([h.make_node("Loop", ["trips", "", "h0"], ["h", "ns"], body=loop_body)],
                [info("h0", shape=[2, 4])], [info("h", shape=None), info("ns", T.INT64, None)],
                [*CONSTANTS, tensor("trips", 3, np.int64), tensor("w", np.full((4, 4), 0.25))])


def test_a_carried_value_whose_update_keeps_its_shape_has_that_shape_on_every_iteration():
    model = loop([h.make_node("MatMul", ["h_in", "w"], ["m"]), h.make_node("Tanh", ["m"], ["t"]),
                  *reshape_by_own_shape("t", "h_out")], "h_in", "h_out")
    result = optimize(model)
    inner = body_ops(result.optimized)
    assert not SHAPE_OPS & set(inner) and "Reshape" not in inner
    proven(result, {"h0": np.arange(8, dtype=np.float32).reshape(2, 4) / 8})


def test_a_carried_value_returned_unchanged_keeps_its_initial_shape():
    model = loop([h.make_node("Relu", ["h_in"], ["r"])], "h_in", "h_in")
    result = optimize(model)
    assert not SHAPE_OPS & set(body_ops(result.optimized))
    proven(result, {"h0": np.ones((2, 4), np.float32)})


def test_a_carried_value_that_grows_keeps_its_shape_computation():
    model = loop([h.make_node("Concat", ["h_in", "h_in"], ["h_out"], axis=0)], "h_in", "h_out")
    result = optimize(model)
    assert {"Shape", "Gather"} <= set(body_ops(result.optimized))
    verdict = proven(result, {"h0": np.ones((2, 4), np.float32)})
    assert verdict.status == "equivalent"


def test_an_assumption_given_up_for_one_state_keeps_the_others():
    """Two carried states: `g` doubles its rows each trip, `h_in` keeps [2, 4]; the Shape of `h_in` still folds
    once the assumption about `g` is dropped."""
    loop_body = body([h.make_node("Concat", ["g_in", "g_in"], ["g_out"], axis=0),
                      h.make_node("Tanh", ["h_in"], ["h_out"]),
                      h.make_node("Shape", ["h_in"], ["sh"]), h.make_node("Gather", ["sh", "i0"], ["n"]),
                      h.make_node("Shape", ["g_in"], ["gs"]), h.make_node("Gather", ["gs", "i0"], ["k"]),
                      h.make_node("Add", ["n", "k"], ["nk"]),
                      h.make_node("Identity", ["cond_in"], ["cond_out"])],
                     [info("iter", T.INT64, []), info("cond_in", T.BOOL, []), info("g_in", shape=None),
                      info("h_in", shape=None)],
                     [info("cond_out", T.BOOL, []), info("g_out", shape=None), info("h_out", shape=None),
                      info("nk", T.INT64, None)])
    model = make([h.make_node("Loop", ["trips", "", "g0", "h0"], ["g", "h", "nks"], body=loop_body)],
                 [info("g0", shape=[1, 3]), info("h0", shape=[2, 4])],
                 [info("g", shape=None), info("h", shape=None), info("nks", T.INT64, None)],
                 [tensor("i0", 0, np.int64), tensor("trips", 3, np.int64)])
    result = optimize(model)
    inner = body_ops(result.optimized)
    assert inner.count("Shape") == 1 and inner.count("Gather") == 1  # g's stays, h's folded
    proven(result, {"g0": np.ones((1, 3), np.float32), "h0": np.ones((2, 4), np.float32)})


def test_scan_bodies_of_a_real_model_fuse_their_matmul_and_add():
    """scan_1 (a CNTK LSTM as four Scans): each body's MatMul + Add on the [1, 3] or [1, 2] slice and state
    becomes a Gemm once the body knows their shapes."""
    path, _ = real_model("testdata/scan_1.onnx")
    result = optimize(path)
    fused = [s for s in result.steps if s.pattern == "MatMulAdd"]
    assert len(fused) == 8 and all("/" in s.graph for s in fused)
    assert any("Input13165_subgraph has shape [1, 3]" in s.facts for s in fused)
    proven(result, {"Input13165": np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 1, 3),
                    **{f"Constant{a}PastValue{b}": np.full((1, 2), 0.1, np.float32)
                       for a, b in [(13649, 16544), (13649, 16566), (14356, 16519), (14356, 16541),
                                    (15063, 16494), (15063, 16516), (15770, 16469), (15770, 16491)]}})


def test_a_settled_body_is_optimized_again_when_what_it_knows_of_outer_values_grows():
    """The Loop's carried `v` starts as ReduceProd([2, 3], keepdims) = [6], a value the propagation cannot
    compute but constant folding can: once the outer graph folds it, the body learns v = [6] (returned
    unchanged, so on every iteration) and its Mul by 2 becomes the constant [12]. The body was settled before
    the fold with the same captured constants, so only outer facts tell it to look again."""
    loop_body = body([h.make_node("Mul", ["v_in", "two"], ["m"]), h.make_node("Add", ["acc_in", "m"], ["acc_out"]),
                      h.make_node("Identity", ["cond_in"], ["cond_out"])],
                     [info("iter", T.INT64, []), info("cond_in", T.BOOL, []), info("v_in", T.INT64, None),
                      info("acc_in", T.INT64, None)],
                     [info("cond_out", T.BOOL, []), info("v_in", T.INT64, None), info("acc_out", T.INT64, None)])
    model = make([h.make_node("ReduceProd", ["dims"], ["v0"], keepdims=1),
                  h.make_node("Loop", ["trips", "", "v0", "acc0"], ["v", "acc"], body=loop_body)],
                 [info("acc0", T.INT64, [1])], [info("v", T.INT64, None), info("acc", T.INT64, None)],
                 [tensor("dims", [2, 3], np.int64), tensor("two", [2], np.int64), tensor("trips", 3, np.int64)])
    result = optimize(model)
    assert "ReduceProd" not in [n.op_type for n in result.optimized.graph.node]
    assert "Mul" not in body_ops(result.optimized)
    assert any("v_in = [6]" in f for s in result.steps for f in s.facts), [s.facts for s in result.steps]
    proven(result, {"acc0": np.array([1], np.int64)})
