"""Peak memory of loading and of optimizing a ~400 MB model (big initializers), as a multiple of the model's
size, with its nodes named as exporters name them (`/layer3/MatMul`) and unnamed. Each measurement runs in a
fresh process: peak RSS after the step minus RSS before it (imports done).

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

# VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over exec, so a child would report the peak of the
# process that started it (this one, after building the model)
STEP = r"""
import json, sys
import explorer
from explorer.optimizer import optimize
def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))
before = status("VmRSS")
model = explorer.load(sys.argv[1])
if sys.argv[2] == "optimize":
    result = optimize(model)
print(json.dumps({"before": before, "peak": status("VmHWM")}))
"""


def build(path: str, megabytes: int, named: bool = True) -> int:
    """x[1, n] through MatMul + Add + Relu layers whose n×n float32 weights total about `megabytes`; nodes
    named like an exporter's when `named`."""
    n = 2048  # 16 MiB per weight matrix
    layers = max(1, megabytes * (1 << 20) // (n * n * 4))
    rng = np.random.default_rng(0)
    nodes, inits, current = [], [], "x"
    for k in range(layers):
        inits.append(numpy_helper.from_array(rng.standard_normal((n, n), dtype=np.float32) * 0.01, f"w{k}"))
        inits.append(numpy_helper.from_array(np.zeros(n, np.float32), f"b{k}"))
        names = [f"/layer{k}/{op}" if named else "" for op in ("MatMul", "Add", "Relu")]
        nodes += [h.make_node("MatMul", [current, f"w{k}"], [f"m{k}"], name=names[0]),
                  h.make_node("Add", [f"m{k}", f"b{k}"], [f"a{k}"], name=names[1]),
                  h.make_node("Relu", [f"a{k}"], [f"r{k}"], name=names[2])]
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
        for named in (True, False):
            path = os.path.join(folder, "big.onnx")
            size = build(path, args.mb, named)
            print(f"model: {size / 2**20:.0f} MiB, nodes {'named as exporters name them' if named else 'unnamed'}")
            for step in ("load", "optimize"):
                extra = measure(path, step)
                print(f"  {step:9s} peak {extra / 2**20:7.0f} MiB above the baseline = {extra / size:.2f} x the "
                      "model (goal <= 3 x)")

if __name__ == "__main__":
    main()
