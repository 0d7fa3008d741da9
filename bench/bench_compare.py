"""Time of `explorer.compare(gtcrn, its optimized form)` against the time of the two explorer runs it contains
(goal: compare <= 3 x the two runs), and of a comparison with onnxruntime (every value exposed) against one
explorer run plus one onnxruntime run, all measured in this process. Needs ../shared/models.
Run: python bench/bench_compare.py"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import best_of

import explorer
from explorer.judge.judge import run_onnxruntime
from explorer.optimizer import optimize

GTCRN = Path(__file__).resolve().parents[2] / "shared/models/Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx"


def main() -> None:
    if not GTCRN.exists():
        print(f"skipped: {GTCRN} is not there (../shared/models)")
        return
    model = explorer.load(GTCRN)
    optimized = explorer.load(optimize(model).optimized)
    feeds = model.example_inputs(seed=0)
    runs = best_of(lambda: (explorer.run(model, feeds), explorer.run(optimized, feeds)), repeat=3)
    both = best_of(lambda: explorer.compare(model, optimized, feeds), repeat=3)
    result = explorer.compare(model, optimized, feeds)
    print(f"gtcrn ({len(model.index.nodes)} nodes) vs optimized ({len(optimized.index.nodes)} nodes): "
          f"two runs {runs * 1e3:.0f} ms, compare {both * 1e3:.0f} ms (ratio {both / runs:.2f}, goal <= 3); "
          f"{len(result.values)} values aligned, {len(result.unaligned)} not aligned, first divergence "
          f"{result.first.describe() if result.first else 'none'}")
    judge = best_of(lambda: (explorer.run(model, feeds), run_onnxruntime(model, feeds)), repeat=3)
    against = best_of(lambda: explorer.compare(model, "onnxruntime", feeds), repeat=3)
    print(f"gtcrn vs onnxruntime: one run each {judge * 1e3:.0f} ms, compare with every value exposed "
          f"{against * 1e3:.0f} ms (ratio {against / judge:.2f})")


if __name__ == "__main__":
    main()
