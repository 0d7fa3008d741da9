"""BLAS runs single-threaded while explorer runs a model.

explorer's kernels make many small and mid-sized matrix products, one node at a time. Multi-threaded OpenBLAS
spins its worker threads between calls; on a machine whose cores are busy (another program, onnxruntime's own
thread pool, a browser) those spinning threads make a product of milliseconds take tens of milliseconds:
ResNet-50 ran 2.8 s with two BLAS threads and 0.9 s with one, on the same loaded 2-core machine. One thread
costs at most the parallel speed-up of the largest products on an idle machine."""
from __future__ import annotations

from contextlib import AbstractContextManager
from functools import cache
from typing import Any

from threadpoolctl import ThreadpoolController


@cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()  # inspects the libraries loaded so far: built after numpy is imported


def single_threaded_blas() -> AbstractContextManager[Any]:
    """A context in which the BLAS libraries numpy loaded use one thread (restored on exit)."""
    limiter: AbstractContextManager[Any] = _controller().limit(limits=1, user_api="blas")
    return limiter
