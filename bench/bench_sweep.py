"""Sweep throughput: inputs per second of `explorer.sweep` on a local Dask cluster of 1 and 2 worker processes,
against a plain loop over `explorer.compare` in this process, on the same inputs (the bundled Scan RNN against
onnxruntime, T in 8..64, six seeds). The clusters are started before they are timed (their start-up is printed
apart); the scheduler's overhead per input is the sweep's wall time on one worker less the seconds its inputs
took inside the worker, over the inputs. Prints the load average before and after.

    python bench/bench_sweep.py [--inputs N]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import explorer  # noqa: E402
from explorer.inputs.samples import sample_path  # noqa: E402
from explorer.sweep.cluster import local_cluster  # noqa: E402

LENGTHS = [8, 16, 32, 64]


def plain_loop(model: explorer.Model, grid: list[tuple[int, int]]) -> float:
    """Seconds of the inputs compared one after another in this process."""
    start = time.perf_counter()
    for length, seed in grid:
        explorer.compare(model, "onnxruntime", model.example_inputs(seed=seed, dims={"T": length}))
    return time.perf_counter() - start


def on_cluster(path: str, workers: int, seeds: list[int]) -> tuple[float, float, float]:
    """(start-up seconds, sweep seconds, seconds spent inside the inputs) on a fresh local cluster."""
    start = time.perf_counter()
    cluster = local_cluster(workers)
    started = time.perf_counter() - start
    try:
        explorer.sweep(path, "onnxruntime", {"T": LENGTHS[:1]}, seeds=[0], scheduler=cluster.scheduler_address)
        # ^ each worker's first input loads explorer, the model and onnxruntime's child: warm them all
        explorer.sweep(path, "onnxruntime", {"T": LENGTHS[:1]}, seeds=list(range(workers)),
                       scheduler=cluster.scheduler_address)
        start = time.perf_counter()
        result = explorer.sweep(path, "onnxruntime", {"T": LENGTHS}, seeds=seeds, scheduler=cluster.scheduler_address)
        took = time.perf_counter() - start
    finally:
        cluster.close()
    assert all(r["status"] == "ok" for r in result.rows), [r["message"] for r in result.rows]
    return started, took, sum(r["seconds"] for r in result.rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=6, help="seeds per length (inputs = 4 x seeds)")
    args = parser.parse_args()
    seeds = list(range(args.seeds))
    path = str(sample_path("scan_rnn_encoding"))
    model = explorer.load(path)
    grid = [(length, seed) for length in LENGTHS for seed in seeds]
    print(f"load average {os.getloadavg()[0]:.1f}; {len(grid)} inputs of scan_rnn_encoding (T in {LENGTHS}) against "
          f"onnxruntime; {os.cpu_count()} cores")
    plain_loop(model, grid[:2])  # onnxruntime's child started, the model compiled
    loop_s = plain_loop(model, grid)
    print(f"plain loop over explorer.compare: {len(grid) / loop_s:6.1f} inputs/s ({loop_s:.2f} s)")
    for workers in (1, 2):
        started, took, inside = on_cluster(path, workers, seeds)
        line = (f"sweep, {workers} local worker{'s' if workers > 1 else ' '}:  {len(grid) / took:6.1f} inputs/s "
                f"({took:.2f} s; {loop_s / took:.2f}x the loop; cluster start-up {started:.1f} s)")
        if workers == 1:
            line += f"; scheduler overhead {1000 * (took - inside) / len(grid):.1f} ms per input"
        print(line)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
