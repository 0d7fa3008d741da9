"""The BLAS threads of a run: numpy's BLAS libraries use `Limits.threads` threads while explorer runs a model.

By default that is the available cores (limits.default_threads), so the large products of convolutions,
Gemm, MatMul and the recurrent cells use the user's machine. BLAS itself runs small products on one thread.
On a machine whose cores are busy, multi-threaded OpenBLAS spins its worker threads between calls and a product
of milliseconds can take tens of milliseconds: there (and inside a worker of a process pool) ask for one thread.
The previous count is restored when the run ends."""
from __future__ import annotations

from collections.abc import Callable
from functools import cache
from types import TracebackType
from typing import Any

from threadpoolctl import ThreadpoolController


@cache
def _blas_libraries() -> list[tuple[Any, Callable[[], int]]]:
    """threadpoolctl's controllers of the BLAS libraries loaded so far (found once: built after numpy is
    imported), each with the C function that reads its thread count. threadpoolctl's own get call asks which
    threading layer the library has every time (a few microseconds per run); its set call holds the logic of
    which Python thread may set the count, and is used as it is. A `limit` context re-inspects every library
    (~20 us, a visible share of a small model's run)."""
    found = []
    for lib in ThreadpoolController().lib_controllers:
        if lib.user_api != "blas":
            continue
        symbol = getattr(lib, "_get_symbol", None)  # threadpoolctl's, for OpenBLAS: its C functions by name
        getter = None
        if symbol is not None and lib.internal_api == "openblas":
            getter = symbol("omp_get_max_threads" if lib.threading_layer == "openmp" else "openblas_get_num_threads")
        found.append((lib, getter or lib.get_num_threads))
    return found


class blas_threads:  # noqa: N801 - used as the function it was: `with blas_threads(n):`
    """A context in which the BLAS libraries numpy loaded use `threads` threads (restored on exit).

    OpenBLAS's thread pool is process-wide: threadpoolctl lets one Python thread at a time set it (the others'
    calls do nothing) and the context gives that control back when it ends, so the next run sets its count from
    whatever thread it runs in (the app runs each script run in a thread of its own). While another thread holds
    the control (a run in another thread, a `threadpool_limits` block), a run keeps the count that thread set.
    A context that changed nothing took no control and gives none back."""

    __slots__ = ("threads", "_changed")

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def __enter__(self) -> None:
        threads = self.threads
        changed = []
        for lib, count in _blas_libraries():
            before = count()
            if before != threads:
                lib.set_num_threads(threads)
                changed.append((lib, before))
        self._changed = changed

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if not self._changed:
            return
        for lib, before in self._changed:
            lib.set_num_threads(before)
        for lib, _ in _blas_libraries():
            release = getattr(lib, "clear_controlling_thread", None)  # threadpoolctl >= 3.6 for OpenBLAS
            if release is not None:
                release()
