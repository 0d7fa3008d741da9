"""What one session of the app holds (its runs, the models it uploaded, their drawings): small stores of the
most recently used entries by kind, owned by the session, so they go when it ends, or when it has been idle
longer than the operator allows, instead of staying in a cache of the whole process. Every store is listed in
`HOLDINGS` (weakly), for `release_idle` to walk."""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


class Holdings:
    """One session's entries by kind, at most `sizes[kind]` of each (the least recently used go first)."""

    def __init__(self, owner: str, sizes: dict[str, int], forget: Callable[[], None] | None = None) -> None:
        self.owner = owner  # the session's id
        self.sizes = sizes
        self.used = time.monotonic()
        self.ended = False  # its session ended and was told to go (release_idle's `ended`)
        self.forget = forget  # drops what else the session holds (its app's state), once it has ended
        self._kinds: dict[str, OrderedDict[Any, Any]] = {}
        self._lock = threading.RLock()
        HOLDINGS.add(self)

    def get(self, kind: str, key: Any, make: Callable[[], T]) -> T:
        """The entry `key` of `kind`, made by `make()` when missing (then the oldest beyond the size go)."""
        with self._lock:
            self.used = time.monotonic()
            entries = self._kinds.setdefault(kind, OrderedDict())
            if key in entries:
                entries.move_to_end(key)
                return entries[key]
        value = make()  # outside the lock: a run takes its time
        with self._lock:
            entries = self._kinds.setdefault(kind, OrderedDict())
            entries[key] = value
            entries.move_to_end(key)
            while len(entries) > self.sizes.get(kind, 1):
                entries.popitem(last=False)
        return value

    def has(self, kind: str, key: Any) -> bool:
        with self._lock:
            return key in self._kinds.get(kind, {})

    def count(self) -> int:
        with self._lock:
            return sum(len(entries) for entries in self._kinds.values())

    def release(self) -> bool:
        """Drops every entry (their values go once nothing else holds them); whether there was any."""
        with self._lock:
            held = self.count() > 0
            self._kinds.clear()
        return held


HOLDINGS: weakref.WeakSet[Holdings] = weakref.WeakSet()


def release_idle(alive: Callable[[str], bool], idle_seconds: float | None, holdings: Iterable[Holdings] | None = None,
                 now: float | None = None, ended: Callable[[str], None] | None = None,
                 freeing: Callable[[], None] | None = None) -> int:
    """Releases the holdings of sessions that ended (`alive(owner)` is False; once for each, its `forget` is
    called, then `ended(owner)`) or have been idle longer than `idle_seconds` (`freeing()` is called once before
    the first). Returns how many were released or ended: the caller then collects the garbage (`collect`), which
    gives their memory back to the system."""
    now = time.monotonic() if now is None else now
    count = 0
    for found in list(HOLDINGS if holdings is None else holdings):
        gone = not alive(found.owner)
        due = gone or (idle_seconds is not None and now - found.used > idle_seconds)
        if freeing is not None and ((due and found.count()) or (gone and not found.ended)):
            freeing()
            freeing = None
        done = due and found.release()
        if gone and not found.ended:
            found.ended = done = True
            forget, found.forget = found.forget, None
            if forget is not None:
                forget()
            if ended is not None:
                ended(found.owner)
        count += done
    return count


def collect() -> None:
    """Collects the garbage, then gives the freed memory back to the system."""
    gc.collect()
    give_back_memory()


def give_back_memory() -> None:
    """Returns the C heap's free pages to the system where the C library can (glibc's malloc_trim): freed
    arrays of a run otherwise stay in the process's resident memory."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        trim = None
    if trim is not None:
        trim(0)
