"""Shared timing helpers for the benchmarks: best of N wall-clock runs, measured in the same process."""
from __future__ import annotations

import time
from collections.abc import Callable

SETTLE_SECONDS = 0.1
"""The pause before a timed run when the other side ran last: after a run, onnxruntime's thread pool and
OpenBLAS's threads spin for tens of milliseconds before they sleep, and on a machine of few cores a run started
meanwhile shares its cores with them. On 2 cores, explorer's SqueezeNet run right after onnxruntime's took twice
its time alone; 100 ms later it took its time alone again. The pause lets each side be timed without the other's
spinning threads."""


def settle() -> None:
    """Waits until the other side's threads have stopped spinning (SETTLE_SECONDS)."""
    time.sleep(SETTLE_SECONDS)


def best_of(fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> float:
    """Best wall-clock seconds of `repeat` calls after `warmup` calls."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def best_interleaved(runners: list[Callable[[], object]], rounds: int = 9) -> list[float]:
    """Best wall-clock seconds of each runner, the runners taking turns round after round so that a change in
    the machine's load hits all of them alike."""
    for run in runners:
        run()
    best = [float("inf")] * len(runners)
    for _ in range(rounds):
        for k, run in enumerate(runners):
            settle()
            for _ in range(2):  # the first run after the pause also wakes the cores and caches
                start = time.perf_counter()
                run()
                best[k] = min(best[k], time.perf_counter() - start)
    return best


def reference_runner(model_proto, feeds):
    from onnx.reference import ReferenceEvaluator

    evaluator = ReferenceEvaluator(model_proto)
    return lambda: evaluator.run(None, feeds)


def onnxruntime_runner(model_proto, feeds):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model_proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda: session.run(None, feeds)


def report(title: str, ours: float, reference: float | None, runtime: float | None, goal: str = "") -> None:
    parts = [f"{title}: explorer {ours * 1e3:.2f} ms"]
    if reference is not None:
        parts.append(f"ReferenceEvaluator {reference * 1e3:.2f} ms (ratio {ours / reference:.2f})")
    if runtime is not None:
        parts.append(f"onnxruntime {runtime * 1e3:.2f} ms (ratio {ours / runtime:.1f})")
    if goal:
        parts.append(f"goal: {goal}")
    print(" | ".join(parts))
