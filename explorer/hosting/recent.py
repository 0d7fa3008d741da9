"""What a server process keeps for every session or task, the least recently used going first past a bound; and
what it makes once for every caller (MadeOnce)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """At most `limit` of the entries' weights (`weight(value)` when kept, 1 each by default), safe to share between
    threads; the last entry kept stays whatever it weighs."""

    def __init__(self, limit: int, weight: Callable[[V], int] | None = None) -> None:
        self.limit = limit
        self._weight = weight
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()  # key -> (value, its weight when kept)
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The entry under `key` (now the most recently used), or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def put(self, key: K, value: V) -> None:
        """Keeps `value` under `key` (weighed now: putting an entry again weighs it again); the least recently used
        entries go while the weights pass the limit."""
        with self._lock:
            self._keep(key, value)

    def get_or_put(self, key: K, make: Callable[[], V]) -> tuple[V, bool]:
        """(the entry under `key`, False), or (`make()` kept under it now, True): of callers at once, one makes it
        (`make` runs under the lock: it must be quick)."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found[0], False
            made = make()
            self._keep(key, made)
            return made, True

    def take(self, key: K) -> V | None:
        """The entry under `key`, dropped; None when there is none (of callers at once, one gets it)."""
        with self._lock:
            found = self._entries.pop(key, None)
            if found is None:
                return None
            self._total -= found[1]
            return found[0]

    def discard(self, key: K, value: V) -> None:
        """Drops the entry under `key` if it is `value` (not one kept there since)."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] is value:
                self._total -= self._entries.pop(key)[1]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._total = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _keep(self, key: K, value: V) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._total -= old[1]
        weight = 1 if self._weight is None else self._weight(value)
        self._entries[key] = (value, weight)
        self._total += weight
        while self._total > self.limit and len(self._entries) > 1:
            self._total -= self._entries.popitem(last=False)[1][1]


class MadeOnce(Generic[K, V]):
    """Values each made once for every caller and kept (at most `limit` of their weights, `weight(value)`, 1 each by
    default; the least recently used go first). A caller asking for a value under way, made by another caller or
    ahead on a thread of its own, waits for it; a failure reaches the callers waiting for it and is not kept."""

    def __init__(self, limit: int, weight: Callable[[V], int] | None = None) -> None:
        def weigh(made: Future[V]) -> int:  # a value under way weighs nothing until it is made
            if weight is None:
                return 1
            return weight(made.result()) if made.done() and made.exception() is None else 0

        self._kept: Recent[K, Future[V]] = Recent(limit, weigh)

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The value under `key`: made now by `make()` in this thread when nobody is making it, else waited for."""
        made, mine = self._kept.get_or_put(key, Future)
        if mine:
            self._make(key, made, make)
        return made.result()

    def ahead(self, key: K, make: Callable[[], V], name: str) -> None:
        """Starts making the value under `key` on a daemon thread named `name` (a server stopped meanwhile does not
        wait for it), unless it is made or under way."""
        made, mine = self._kept.get_or_put(key, Future)
        if mine:
            threading.Thread(target=self._make, args=(key, made, make), name=name, daemon=True).start()

    def find(self, key: K) -> Future[V] | None:
        """The value under `key`, made or under way, or None."""
        return self._kept.get(key)

    def ready(self, key: K) -> bool:
        """Whether the value under `key` is made (asking for it then waits for nothing)."""
        made = self._kept.get(key)
        return made is not None and made.done() and made.exception() is None

    def _make(self, key: K, made: Future[V], make: Callable[[], V]) -> None:
        try:
            value = make()
        except BaseException as exc:  # noqa: BLE001 - raised to the callers waiting for it
            self._kept.discard(key, made)
            made.set_exception(exc)
        else:
            made.set_result(value)
            self._kept.put(key, made)  # weighed again, now that it is made
