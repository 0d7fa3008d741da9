"""Straight-line model of 300 small ops: explorer.run (recording everything) vs ReferenceEvaluator, same run."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).parent))
from timing import best_of, onnxruntime_runner, reference_runner, report  # noqa: E402

import explorer  # noqa: E402


def straight_line(n_nodes: int = 300) -> onnx.ModelProto:
    ops = ["Add", "Mul", "Sub", "Relu", "Neg", "Abs"]
    nodes, prev = [], "x"
    for i in range(n_nodes):
        op = ops[i % len(ops)]
        out = f"v{i}"
        inputs = [prev, "c"] if op in ("Add", "Mul", "Sub") else [prev]
        nodes.append(helper.make_node(op, inputs, [out], name=f"n{i}"))
        prev = out
    graph = helper.make_graph(
        nodes, "line", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4, 8])],
        [onnx.numpy_helper.from_array(np.full((4, 8), 0.5, np.float32), "c")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def main() -> None:
    proto = straight_line()
    feeds = {"x": np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)}
    model = explorer.load(proto)
    ours = best_of(lambda: explorer.run(model, feeds), repeat=15)
    reference = best_of(reference_runner(proto, feeds), repeat=15)
    runtime = best_of(onnxruntime_runner(proto, feeds), repeat=15)
    report("300-node straight line", ours, reference, runtime, "<= 1.0 x ReferenceEvaluator")


if __name__ == "__main__":
    main()
