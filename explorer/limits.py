"""Bounds that keep a run from taking a laptop down, and the cores it may use."""
from __future__ import annotations

import functools
import os
import shutil
import tempfile
from dataclasses import dataclass, field

from .budgets import MAX_DISK_BYTES

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Environment variables that cap BLAS threads; process pools (Dask's workers, for one) set them to 1."""


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS and Windows have no affinity call
        return os.cpu_count() or 1


def default_threads() -> int:
    """BLAS threads for a run: the available cores, at most what an OPENBLAS/OMP/MKL_NUM_THREADS variable allows
    (a worker of a process pool that sets them to 1 then runs on one thread, so the pool does not oversubscribe
    the machine)."""
    threads = available_cores()
    for name in THREAD_VARIABLES:
        text = os.environ.get(name, "").strip()
        if text.isdigit() and int(text) > 0:
            threads = min(threads, int(text))
    return threads


@functools.cache
def default_disk_bytes() -> int:
    """Disk a run may fill with values past its in-memory budget: half the free space of the temporary folder, at
    most 16 GiB (measured once per process)."""
    try:
        free = shutil.disk_usage(tempfile.gettempdir()).free
    except OSError:
        return 0
    return min(MAX_DISK_BYTES, free // 2)


@dataclass(frozen=True)
class Limits:
    """max_iterations: per Loop/Scan/SequenceMap execution; max_tensor_bytes: any one value a node produces
    (checked before allocation where the size is known up front); trace_budget_bytes: recorded values held in
    memory; beyond it they are written to the run's folder on disk (read back as memory-mapped arrays);
    trace_disk_bytes: the most that folder may take (default: half the free disk, at most 16 GiB), beyond which
    values are kept as summaries (shape, dtype, min, max, mean, NaN/Inf counts); max_input_bytes: what an
    external input (an .npz or .pb of feeds, a trace file) may inflate to, checked before it is read;
    max_events: node executions in one run (each event costs about a kilobyte of records even when its values
    are summaries, so loops nested in loops, each within max_iterations, stay bounded too); threads: the BLAS
    threads of the run's matrix products (default: `default_threads()`; 1 inside a worker of a process pool).
    The budgets explorer sets itself (memo, heap, chunks, folding, depths) are in explorer/budgets.py."""

    max_iterations: int = 100_000
    max_tensor_bytes: int = 1 << 30
    trace_budget_bytes: int = 512 << 20
    max_input_bytes: int = 2 << 30
    max_events: int = 1_000_000
    threads: int = field(default_factory=default_threads)
    trace_disk_bytes: int = field(default_factory=default_disk_bytes)

    def __post_init__(self) -> None:
        for name in ("max_iterations", "max_tensor_bytes", "trace_budget_bytes", "max_input_bytes", "max_events",
                     "trace_disk_bytes"):
            if getattr(self, name) < 0:
                raise ValueError(f"Limits.{name} must be >= 0")
        if self.threads < 1:
            raise ValueError("Limits.threads must be >= 1")
