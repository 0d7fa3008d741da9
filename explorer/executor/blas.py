"""The BLAS threads of a run: numpy's BLAS libraries use `Limits.threads` threads while explorer runs a model.

By default that is the available cores (limits.default_threads), so the large products of convolutions,
Gemm, MatMul and the recurrent cells use the user's machine. BLAS itself runs small products on one thread.
On a machine whose cores are busy, multi-threaded OpenBLAS spins its worker threads between calls and a product
of milliseconds can take tens of milliseconds: there (and inside a worker of a process pool) ask for one thread.
The previous count is restored when the run ends."""
from __future__ import annotations

from collections.abc import Callable
from functools import cache
from threading import active_count, current_thread
from types import TracebackType
from typing import Any

from threadpoolctl import ThreadpoolController


class _Library:
    """One BLAS library numpy loaded: its thread count read and set through its own C functions where
    threadpoolctl names them (its calls cost a small model's run microseconds), with threadpoolctl's rule for a
    process-wide pool (OpenBLAS on pthreads): one Python thread at a time controls it, and the others' calls do
    nothing. Without those functions, threadpoolctl's own calls."""

    __slots__ = ("_lib", "count", "_set", "_shared", "_pool")

    def __init__(self, lib: Any) -> None:
        self._lib = lib
        symbol = getattr(lib, "_get_symbol", None)  # threadpoolctl's, for OpenBLAS: its C functions by name
        openmp = lib.threading_layer == "openmp"
        getter = setter = None
        if symbol is not None and lib.internal_api == "openblas":
            getter = symbol("omp_get_max_threads" if openmp else "openblas_get_num_threads")
            setter = symbol("omp_set_num_threads" if openmp else "openblas_set_num_threads")
        shared: Any = getattr(lib, "_SHARED_STATE", None)  # threadpoolctl >= 3.6 for OpenBLAS: who controls it
        if shared is not None and not (hasattr(shared, "controlling_thread") and hasattr(shared, "lock")):
            shared, setter = None, None  # a threadpoolctl whose rule is not the one above: its own calls
        self.count: Callable[[], int] = getter or lib.get_num_threads
        self._set: Callable[[int], object] | None = setter
        self._shared: Any = shared
        self._pool = shared is not None and not openmp  # OpenMP's counts are per thread: no control to take

    def set(self, threads: int) -> None:
        """Sets the count (a process-wide pool: when this thread controls it or takes control of it)."""
        if self._set is None:
            self._lib.set_num_threads(threads)
            return
        if self._pool:
            shared = self._shared
            owner = shared.controlling_thread
            if owner is None and active_count() == 1:
                self._set(threads)  # no other thread to share the pool with: no control to take (taking and
                return  # giving it back writes a class attribute, which costs more than the call)
            this = current_thread()
            if owner is not this:
                if owner is not None and owner.is_alive():
                    return
                with shared.lock:
                    owner = shared.controlling_thread
                    if owner is None or not owner.is_alive():
                        shared.controlling_thread = owner = this
                if owner is not this:
                    return
        self._set(threads)

    def release(self) -> None:
        """Gives control of a process-wide pool back, when this thread holds it."""
        shared = self._shared
        if shared is None:
            release = getattr(self._lib, "clear_controlling_thread", None)
            if release is not None:
                release()
        elif shared.controlling_thread is not None and shared.controlling_thread is current_thread():
            with shared.lock:
                if shared.controlling_thread is current_thread():
                    shared.controlling_thread = None


@cache
def _blas_libraries() -> list[_Library]:
    """The BLAS libraries loaded so far (found once: built after numpy is imported). A `limit` context of
    threadpoolctl re-inspects every library (~20 us, a visible share of a small model's run)."""
    return [_Library(lib) for lib in ThreadpoolController().lib_controllers if lib.user_api == "blas"]


class blas_threads:  # noqa: N801 - used as the function it was: `with blas_threads(n):`
    """A context in which the BLAS libraries numpy loaded use `threads` threads (restored on exit).

    OpenBLAS's thread pool is process-wide: one Python thread at a time may set it (the others' calls do nothing,
    threadpoolctl's rule) and the context gives that control back when it ends, so the next run sets its count
    from whatever thread it runs in (the app runs each script run in a thread of its own). While another thread
    holds the control (a run in another thread, a `threadpool_limits` block), a run keeps the count that thread
    set. A context that changed nothing took no control and gives none back."""

    __slots__ = ("threads", "_changed")

    _changed: list[tuple[_Library, int]] | None

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def __enter__(self) -> None:
        threads = self.threads
        changed = None
        for lib in _blas_libraries():
            before = lib.count()
            if before != threads:
                lib.set(threads)
                if changed is None:
                    changed = [(lib, before)]
                else:
                    changed.append((lib, before))
        self._changed = changed

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._changed is None:
            return
        for lib, before in self._changed:
            lib.set(before)
            lib.release()
