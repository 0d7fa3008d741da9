"""Whether the server is between page runs. Work that stops every thread waits for a quiet moment: a full garbage
collection holds the interpreter while it walks every object the process holds (0.1 to 0.5 s on two busy cores),
and run while a page was being run and sent, or while the browser fetched the files of its elements right after,
it held that page up by as much."""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Quiet:
    """Counts the runs under way (`running`) and when the last one ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._ended = -math.inf

    @contextmanager
    def running(self) -> Iterator[None]:
        """A run under way for the duration of the block (however it ends)."""
        with self._lock:
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                self._ended = time.monotonic()

    def quiet_for(self, seconds: float) -> bool:
        """Whether no run is under way and none ended in the last `seconds`."""
        with self._lock:
            return self._running == 0 and time.monotonic() - self._ended >= seconds

    def wait(self, seconds: float, longest: float, step: float = 0.1) -> bool:
        """Waits until `quiet_for(seconds)`, at most `longest` seconds (a server never quiet still gets its turn);
        whether it was quiet."""
        deadline = time.monotonic() + longest
        while not self.quiet_for(seconds):
            if time.monotonic() >= deadline:
                return False
            time.sleep(step)
        return True


PAGES = Quiet()  # the server's page runs (app.py)
