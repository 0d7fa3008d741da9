"""What a server process keeps for every session or task, the least recently used going first past a bound."""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """At most `limit` of the entries' weights (`weight(value)`, 1 each by default), safe to share between threads;
    the last entry kept stays whatever it weighs."""

    def __init__(self, limit: int, weight: Callable[[V], int] | None = None) -> None:
        self.limit = limit
        self._weight = weight
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The entry under `key` (now the most recently used), or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        """Keeps `value` under `key`; the least recently used entries go while the weights pass the limit."""
        with self._lock:
            self._keep(key, value)

    def _keep(self, key: K, value: V) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._total -= self._weigh(old)
        self._entries[key] = value
        self._total += self._weigh(value)
        while self._total > self.limit and len(self._entries) > 1:
            self._total -= self._weigh(self._entries.popitem(last=False)[1])

    def get_or_put(self, key: K, make: Callable[[], V]) -> tuple[V, bool]:
        """(the entry under `key`, False), or (`make()` kept under it now, True): of callers at once, one makes it
        (`make` runs under the lock: it must be quick)."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found, False
            made = make()
            self._keep(key, made)
            return made, True

    def discard(self, key: K, value: V) -> None:
        """Drops the entry under `key` if it is `value` (not one kept there since)."""
        with self._lock:
            if self._entries.get(key) is value:
                self._total -= self._weigh(self._entries.pop(key))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._total = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _weigh(self, value: V) -> int:
        return 1 if self._weight is None else self._weight(value)
