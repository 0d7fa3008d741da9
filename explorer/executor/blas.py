"""BLAS runs single-threaded while explorer runs a model.

explorer's kernels make many small and mid-sized matrix products, one node at a time. Multi-threaded OpenBLAS
spins its worker threads between calls; on a machine whose cores are busy (another program, onnxruntime's own
thread pool, a browser) those spinning threads make a product of milliseconds take tens of milliseconds:
ResNet-50 ran 2.8 s with two BLAS threads and 0.9 s with one, on the same loaded 2-core machine. One thread
costs at most the parallel speed-up of the largest products on an idle machine."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from threadpoolctl import ThreadpoolController


@cache
def _blas_libraries() -> list[Any]:
    """threadpoolctl's controllers of the BLAS libraries loaded so far (found once: built after numpy is
    imported). Their own get/set calls cost a microsecond; a `limit` context re-inspects every library (~20 us,
    a visible share of a small model's run)."""
    return [lib for lib in ThreadpoolController().lib_controllers if lib.user_api == "blas"]


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """A context in which the BLAS libraries numpy loaded use one thread (restored on exit)."""
    changed = []
    for lib in _blas_libraries():
        threads = lib.get_num_threads()
        if threads != 1:
            lib.set_num_threads(1)
            changed.append((lib, threads))
    try:
        yield
    finally:
        for lib, threads in changed:
            lib.set_num_threads(threads)
