"""Peak memory of loading and of optimizing a ~400 MB model (big initializers), as a multiple of the model's
size. Each measurement runs in a fresh process: peak RSS after the step minus RSS before it (imports done).

    python bench/bench_memory.py [--mb 400]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

STEP = r"""
import json, resource, sys
import explorer
from explorer.optimizer import optimize
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
before = rss()
model = explorer.load(sys.argv[1])
if sys.argv[2] == "optimize":
    result = optimize(model)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"before": before, "peak": peak}))
"""


def build(path: str, megabytes: int) -> int:
    """x[1, n] through MatMul + Add + Relu layers whose n×n float32 weights total about `megabytes`."""
    n = 2048  # 16 MiB per weight matrix
    layers = max(1, megabytes * (1 << 20) // (n * n * 4))
    rng = np.random.default_rng(0)
    nodes, inits, current = [], [], "x"
    for k in range(layers):
        inits.append(numpy_helper.from_array(rng.standard_normal((n, n), dtype=np.float32) * 0.01, f"w{k}"))
        inits.append(numpy_helper.from_array(np.zeros(n, np.float32), f"b{k}"))
        nodes += [h.make_node("MatMul", [current, f"w{k}"], [f"m{k}"]),
                  h.make_node("Add", [f"m{k}", f"b{k}"], [f"a{k}"]),
                  h.make_node("Relu", [f"a{k}"], [f"r{k}"])]
        current = f"r{k}"
    graph = h.make_graph(nodes, "big", [h.make_tensor_value_info("x", T.FLOAT, [1, n])],
                         [h.make_tensor_value_info(current, T.FLOAT, [1, n])], inits)
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]), path)
    return os.path.getsize(path)


def measure(path: str, step: str) -> int:
    out = subprocess.run([sys.executable, "-c", STEP, path, step], capture_output=True, text=True, check=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    return figures["peak"] - figures["before"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=400, help="size of the model's initializers in MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "big.onnx")
        size = build(path, args.mb)
        print(f"model: {size / 2**20:.0f} MiB")
        for step in ("load", "optimize"):
            extra = measure(path, step)
            print(f"{step:9s} peak {extra / 2**20:7.0f} MiB above the baseline = {extra / size:.2f} x the model "
                  f"(goal <= 3 x)")


if __name__ == "__main__":
    main()
