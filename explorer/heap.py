"""The process heap between runs: memory a run frees stays in the process for the next run to reuse.

A run allocates its values and records them; they are freed when the trace goes, and the next run allocates as
much again. By default glibc's malloc gives large blocks (from 128 KiB, adjusted as it goes) straight back to
the system, so every run touches fresh pages and pays a page fault per 4 KiB: on a virtual machine, about 3 us
each, a quarter of an LSTM's run (T=200, H=128). onnxruntime keeps its own arena for the same reason. Here
glibc is asked to serve blocks of up to 32 MiB from its heap and to keep up to 1 GiB of freed heap; larger blocks
still come from the system. Other C libraries and systems keep their own behaviour, and so does a process whose
environment sets glibc's own MALLOC_TRIM_THRESHOLD_ or MALLOC_MMAP_THRESHOLD_ (Dask's nannies set the first for
their workers, to give memory back).

A server that frees what a visitor's session held turns this off for a while (`hand_back`): the memory is freed
by other threads than the ones that allocated it, in their own heaps (glibc's arenas), and only the trim
threshold lets a free shrink such a heap; malloc_trim gives back the free pages inside every heap but the free
end of the first one only."""
from __future__ import annotations

import ctypes
import os
import sys
from functools import cache

from .budgets import HEAP_BLOCK_LIMIT, HEAP_KEPT_FREE_BYTES

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_CHOSEN = {"MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"}  # the process's own choice, left as it is


@cache
def keep_freed_memory() -> bool:
    """Asks glibc's malloc, once per process, to keep freed memory for reuse; False where that is not glibc."""
    if not sys.platform.startswith("linux") or _CHOSEN.intersection(os.environ):
        return False
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return False
    if not hasattr(libc, "gnu_get_libc_version"):  # not glibc (musl has a mallopt that does nothing)
        return False
    mallopt = libc.mallopt
    return bool(mallopt(_M_MMAP_THRESHOLD, HEAP_BLOCK_LIMIT)) and bool(mallopt(_M_TRIM_THRESHOLD, HEAP_KEPT_FREE_BYTES))


def hand_back(on: bool) -> None:
    """On: memory freed from now on goes back to the system (each heap's free end as it is freed); off: it is kept
    again (see keep_freed_memory). Does nothing where keep_freed_memory does nothing."""
    if keep_freed_memory():
        ctypes.CDLL(None).mallopt(_M_TRIM_THRESHOLD, 0 if on else HEAP_KEPT_FREE_BYTES)


def give_back() -> None:
    """Returns the free pages of every heap to the system now (malloc_trim), where keep_freed_memory kept them:
    before another process's work (onnxruntime's judge), the memory a finished run freed is not held twice."""
    if keep_freed_memory():
        ctypes.CDLL(None).malloc_trim(0)
