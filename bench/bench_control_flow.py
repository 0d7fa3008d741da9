"""Control flow with full recording, as ratios against ReferenceEvaluator and onnxruntime in the same run:
a Loop of 2,000 iterations of one Add; a Scan RNN (MatMul, MatMul, Add, Add, Tanh; T=500, H=64); the same Loop
beside 10,000 unused outer initializers (per-iteration cost must not grow with the outer scope)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).parent))
from timing import best_interleaved, best_of, onnxruntime_runner, reference_runner, report  # noqa: E402

import explorer  # noqa: E402


def loop_add(iterations: int = 2000, unused_initializers: int = 0) -> onnx.ModelProto:
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["acc_in", "one"], ["acc_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [4])])
    inits = [numpy_helper.from_array(np.array(iterations, np.int64), "M"), numpy_helper.from_array(np.array(True), "cond"),
             numpy_helper.from_array(np.ones(4, np.float32), "one")]
    inits += [numpy_helper.from_array(np.full(2, i, np.float32), f"unused_{i}") for i in range(unused_initializers)]
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "x"], ["y"], body=body, name="loop")], "loop_add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def scan_rnn(steps: int = 500, hidden: int = 64) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "W"], ["t1"]), helper.make_node("MatMul", ["h_in", "R"], ["t2"]),
         helper.make_node("Add", ["t1", "t2"], ["t3"]), helper.make_node("Add", ["t3", "B"], ["t4"]),
         helper.make_node("Tanh", ["t4"], ["h_out"]), helper.make_node("Identity", ["h_out"], ["y_t"])],
        "cell",
        [helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [1, hidden]),
         helper.make_tensor_value_info("x_t", TensorProto.FLOAT, [1, hidden])],
        [helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [1, hidden]),
         helper.make_tensor_value_info("y_t", TensorProto.FLOAT, [1, hidden])])
    inits = [numpy_helper.from_array((rng.standard_normal((hidden, hidden)) * 0.1).astype(np.float32), name)
             for name in ("W", "R")] + [numpy_helper.from_array(np.zeros((1, hidden), np.float32), "B")]
    graph = helper.make_graph(
        [helper.make_node("Scan", ["h0", "X"], ["h_last", "Y"], body=body, num_scan_inputs=1, name="rnn")], "scan_rnn",
        [helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, hidden]),
         helper.make_tensor_value_info("X", TensorProto.FLOAT, [steps, 1, hidden])],
        [helper.make_tensor_value_info("h_last", TensorProto.FLOAT, [1, hidden]),
         helper.make_tensor_value_info("Y", TensorProto.FLOAT, [steps, 1, hidden])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def measure(title: str, proto: onnx.ModelProto, feeds: dict, goal: str, repeat: int = 5) -> float:
    model = explorer.load(proto)
    limits = explorer.Limits(max_iterations=1_000_000)
    ours, reference, runtime = best_interleaved([
        lambda: explorer.run(model, feeds, limits=limits), reference_runner(proto, feeds),
        onnxruntime_runner(proto, feeds)], rounds=repeat)
    report(title, ours, reference, runtime, goal)
    return ours


def main() -> None:
    x = {"x": np.zeros(4, np.float32)}
    measure("Loop x 2000 (Add)", loop_add(), x, "<= 0.5 x ReferenceEvaluator")
    rng = np.random.default_rng(1)
    feeds = {"h0": np.zeros((1, 64), np.float32), "X": rng.standard_normal((500, 1, 64)).astype(np.float32)}
    measure("Scan RNN T=500 H=64", scan_rnn(), feeds, "<= 0.5 x ReferenceEvaluator")
    measure("Loop x 2000 + 10,000 unused initializers", loop_add(unused_initializers=10_000), x,
            "<= 1.2 x the plain Loop", repeat=3)
    # the growth ratio itself: both models measured in alternating rounds, so machine load hits both alike
    plain_model, crowded_model = explorer.load(loop_add()), explorer.load(loop_add(unused_initializers=10_000))
    best = {"plain": float("inf"), "crowded": float("inf")}
    for _ in range(15):  # enough rounds that one of each falls in a quiet moment on a busy machine
        for key, model in (("plain", plain_model), ("crowded", crowded_model)):
            best[key] = min(best[key], best_of(lambda m=model: explorer.run(m, x), repeat=1, warmup=0))
    print(f"outer-scope growth: {best['crowded'] / best['plain']:.2f} x the plain Loop (goal <= 1.2)")


if __name__ == "__main__":
    main()
