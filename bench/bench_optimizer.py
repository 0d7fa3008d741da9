"""Optimizer time on synthetic graphs of 1,000 and 10,000 nodes (goal: roughly linear growth, <= 5 s at 10,000).

Each block of the synthetic graph is a chain exported models are full of: Identity, x+0, a Transpose pair,
a Reshape pair, Gather(Shape(x)), a Cast to the same type, MatMul+Add and x*1 — 12 nodes, of which the optimizer
removes all but a Gemm and a Relu. Run: python bench/bench_optimizer.py
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from explorer.optimizer import optimize

WIDTH = 8


def block(k: int, x: str) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto], str]:
    """One 12-node block reading `x` ([WIDTH, WIDTH] float), returning its nodes, initializers and output."""
    p = f"b{k}_"
    inits = [
        numpy_helper.from_array(np.zeros((1,), np.float32), p + "zero"),
        numpy_helper.from_array(np.ones((), np.float32), p + "one"),
        numpy_helper.from_array(np.array([WIDTH * WIDTH], np.int64), p + "flat"),
        numpy_helper.from_array(np.array([WIDTH, WIDTH], np.int64), p + "square"),
        numpy_helper.from_array(np.array(0, np.int64), p + "axis0"),
        numpy_helper.from_array((np.eye(WIDTH) * 0.5).astype(np.float32), p + "w"),
        numpy_helper.from_array(np.full(WIDTH, 0.01, np.float32), p + "b"),
    ]
    nodes = [
        helper.make_node("Identity", [x], [p + "id"]),
        helper.make_node("Add", [p + "id", p + "zero"], [p + "a0"]),
        helper.make_node("Transpose", [p + "a0"], [p + "t1"], perm=[1, 0]),
        helper.make_node("Transpose", [p + "t1"], [p + "t2"], perm=[1, 0]),
        helper.make_node("Reshape", [p + "t2", p + "flat"], [p + "r1"]),
        helper.make_node("Reshape", [p + "r1", p + "square"], [p + "r2"]),
        helper.make_node("Shape", [p + "r2"], [p + "shape"]),
        helper.make_node("Gather", [p + "shape", p + "axis0"], [p + "rows"]),
        helper.make_node("Cast", [p + "r2"], [p + "c"], to=TensorProto.FLOAT),
        helper.make_node("MatMul", [p + "c", p + "w"], [p + "m"]),
        helper.make_node("Add", [p + "m", p + "b"], [p + "g"]),
        helper.make_node("Mul", [p + "g", p + "one"], [p + "y"]),
    ]
    return nodes, inits, p + "y"


def synthetic(n_nodes: int) -> onnx.ModelProto:
    """A chain of blocks with about `n_nodes` nodes (a Relu between blocks)."""
    nodes, inits = [], []
    x = "x"
    for k in range(max(1, n_nodes // 13)):
        more, consts, y = block(k, x)
        nodes.extend(more)
        inits.extend(consts)
        nodes.append(helper.make_node("Relu", [y], [f"relu{k}"]))
        x = f"relu{k}"
    graph = helper.make_graph(nodes, "synthetic", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [WIDTH, WIDTH])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [WIDTH, WIDTH])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return onnx.shape_inference.infer_shapes(model)


def measure(n_nodes: int, repeats: int) -> tuple[float, float, int, int, int]:
    """(median wall seconds, median CPU seconds, nodes before, nodes after, rewrites)."""
    model = synthetic(n_nodes)
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = optimize(model)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    before, after = result.node_counts()
    return statistics.median(wall), statistics.median(cpu), before, after, len(result.steps)


def main() -> int:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000]
    rows = []
    for n in sizes:
        seconds, cpu, before, after, steps = measure(n, repeats=3)
        rows.append((n, seconds))
        print(f"{before:6d} nodes -> {after:5d} after {steps:5d} rewrites: {seconds:7.3f} s wall, {cpu:7.3f} s CPU "
              f"({seconds / before * 1e6:6.1f} us/node)")
    if len(rows) >= 2:
        (n0, t0), (n1, t1) = rows[0], rows[-1]
        print(f"{n1 / n0:.0f}x nodes -> {t1 / t0:.1f}x time (goal: <= 15x); "
              f"{t1:.2f} s at {n1} nodes (goal: <= 5 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
