"""The BLAS threads of a run: numpy's BLAS libraries use `Limits.threads` threads while explorer runs a model.

By default that is the available cores (limits.default_threads), so the large products of convolutions,
Gemm, MatMul and the recurrent cells use the user's machine. BLAS itself runs small products on one thread.
On a machine whose cores are busy, multi-threaded OpenBLAS spins its worker threads between calls and a product
of milliseconds can take tens of milliseconds: there (and inside a worker of a process pool) ask for one thread.
The previous count is restored when the run ends."""
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
def blas_threads(threads: int) -> Iterator[None]:
    """A context in which the BLAS libraries numpy loaded use `threads` threads (restored on exit).

    OpenBLAS's thread pool is process-wide: threadpoolctl lets one Python thread at a time set it (the others'
    calls do nothing) and the context gives that control back when it ends, so the next run sets its count from
    whatever thread it runs in (the app runs each script run in a thread of its own). While another thread holds
    the control (a run in another thread, a `threadpool_limits` block), a run keeps the count that thread set."""
    libraries = _blas_libraries()
    changed = []
    for lib in libraries:
        before = lib.get_num_threads()
        if before != threads:
            lib.set_num_threads(threads)
            changed.append((lib, before))
    try:
        yield
    finally:
        for lib, before in changed:
            lib.set_num_threads(before)
        for lib in libraries:
            release = getattr(lib, "clear_controlling_thread", None)  # threadpoolctl >= 3.6 for OpenBLAS
            if release is not None:
                release()
