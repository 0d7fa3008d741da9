"""Real models, everything recorded: explorer.run vs onnxruntime on the same inputs in the same run, the
geometric mean of the ratios, the engine's per-node dispatch overhead, and the peak memory of a ResNet-50 run
against the bytes of the values it records.

Each figure is the best of N runs, explorer's and onnxruntime's runs taken in turn, so that both see the same
load when other processes share the machine (a median then measures the load more than the code). The CPU time
explorer's best run took is printed too: on a shared machine a run of tens of milliseconds is preempted where
onnxruntime's sub-millisecond runs are not, and the CPU time is what the code costs whatever the load.

    python bench/bench_models.py [--repeat N] [--only NAME,...]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).parent))
from real_models import benchmark_models, seeded_light_model
from timing import onnxruntime_runner

import explorer
from explorer.executor.run import program_of


def paired_best(ours, theirs, repeat: int, theirs_per_round: int = 2) -> tuple[float, float, float]:
    """Best wall-clock seconds of `ours` and of `theirs` over `repeat` rounds, each round one run of ours and a
    few of theirs (after one warm-up run each), and the least CPU seconds a run of ours took."""
    ours()
    theirs()
    best_ours = best_theirs = best_cpu = math.inf
    for _ in range(repeat):
        cpu, start = time.process_time(), time.perf_counter()
        ours()
        best_ours = min(best_ours, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        for _ in range(theirs_per_round):
            start = time.perf_counter()
            theirs()
            best_theirs = min(best_theirs, time.perf_counter() - start)
    return best_ours, best_theirs, best_cpu


def compare_models(repeat: int, only: set[str] | None) -> None:
    ratios = []
    print(f"{'model':<14} {'nodes':>6} {'explorer ms':>12} {'(CPU ms)':>9} {'onnxruntime ms':>15} {'ratio':>7}")
    for name, (proto, feeds) in benchmark_models().items():
        if only and name not in only:
            continue
        model = explorer.load(proto)
        ours, theirs, cpu = paired_best(lambda model=model, feeds=feeds: explorer.run(model, feeds),
                                        onnxruntime_runner(proto, feeds), repeat)
        ratio = ours / theirs
        ratios.append(ratio)
        print(f"{name:<14} {len(model.index.nodes):>6} {ours * 1e3:>12.1f} {cpu * 1e3:>9.1f} {theirs * 1e3:>15.2f} "
              f"{ratio:>6.1f}x", flush=True)
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"geometric mean of explorer / onnxruntime: {geomean:.2f}x (goal <= 6x); worst {max(ratios):.1f}x "
              "(goal <= 25x)")


def add_chain(n: int = 1000) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    nodes = [helper.make_node("Add", [f"v{i}", "one"], [f"v{i + 1}"], name=f"add{i}") for i in range(n)]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info(f"v{n}", TensorProto.FLOAT, [1])],
        [onnx.numpy_helper.from_array(np.ones(1, np.float32), "one")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), {"v0": np.zeros(1, np.float32)}


def dispatch_overhead(repeat: int) -> None:
    """Time per node of a chain of 1,000 one-element Adds: almost all of it is the engine, not the kernel."""
    proto, feeds = add_chain()
    model = explorer.load(proto)
    ours, theirs, cpu = paired_best(lambda: explorer.run(model, feeds), onnxruntime_runner(proto, feeds),
                                    repeat * 4)
    add = np.add
    a, b = feeds["v0"], np.ones(1, np.float32)
    kernel, _, _ = paired_best(lambda: [add(a, b) for _ in range(1000)], lambda: None, repeat * 4)
    print(f"dispatch: 1,000 one-element Adds: explorer {ours * 1e3:.2f} ms ({ours * 1e3:.2f} us/node, CPU "
          f"{cpu * 1e3:.2f} us/node, of which numpy.add {kernel * 1e3:.2f} us), onnxruntime {theirs * 1e3:.2f} ms "
          f"({theirs * 1e3:.2f} us/node)")


def _owner(array: np.ndarray) -> np.ndarray:
    """The array that owns the memory `array` views."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def memory() -> None:
    """Peak memory traced during one ResNet-50 run against the bytes of the distinct arrays the run created and its
    trace holds (initializers and feeds exist before the run): a run that copied recorded values would peak near
    a multiple of them."""
    proto, feeds = seeded_light_model("resnet50")
    model = explorer.load(proto)
    explorer.run(model, feeds)  # compile first: kernels and initializers are not part of a run
    existing = [*program_of(model).graph("").initializers.values(), *feeds.values()]
    before = {id(_owner(v)) for v in existing}
    tracemalloc.start()
    trace = explorer.run(model, feeds)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    created: dict[int, int] = {}
    referenced = 0
    for event in trace.events:
        for value in (*event.inputs.values(), *event.outputs.values()):
            if isinstance(value, np.ndarray):
                owner = _owner(value)
                referenced += value.nbytes
                if id(owner) not in before:
                    created[id(owner)] = owner.nbytes
    distinct = sum(created.values())
    print(f"memory (ResNet-50): peak traced during the run {peak / 2**20:.1f} MiB; distinct arrays the run created "
          f"and recorded {distinct / 2**20:.1f} MiB (peak / recorded = {peak / distinct:.2f}); event inputs and "
          f"outputs reference {referenced / 2**20:.1f} MiB in all, shared with those arrays and the weights")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--only", default="")
    options = parser.parse_args()
    compare_models(options.repeat, set(options.only.split(",")) - {""} or None)
    dispatch_overhead(options.repeat)
    memory()


if __name__ == "__main__":
    main()
