"""Work a server does ahead of anyone asking (an optimization, its proof, its drawings' layouts) runs at the
lowest CPU priority: on 2 cores it otherwise took the CPU from the page being drawn meanwhile (a new browser's
Graph page opened 0.1 to 0.3 s later while its model was optimized and proved ahead). On Linux the nice value is
a thread's own, and the threads and processes a thread starts inherit it. Elsewhere nothing changes."""
from __future__ import annotations

import contextlib
import os
import threading

LOWEST = 19


def lower_this_thread() -> None:
    """The calling thread, and whatever it starts from now on, at the lowest CPU priority."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOWEST)


def this_thread_lowered() -> bool:
    """Whether the calling thread runs below its process's main thread (background work)."""
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) > os.getpriority(os.PRIO_PROCESS, os.getpid())
    except (AttributeError, OSError):
        return False
