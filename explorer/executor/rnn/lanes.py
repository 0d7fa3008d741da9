"""Processing order of the time steps: every direction runs forward in its own order, so the directions of a
bidirectional node advance together, one stacked operation per gate and step for all of them.

A reverse direction reads each batch item's sequence from its end: processing step s reads time step
len_b - 1 - s of item b (seq_length - 1 - s without sequence_lens). The same permutation takes the values it
produced back to time order. Steps past an item's length keep its previous state (see `schedule`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class TimeOrder:
    """Which time step each processing step of one direction reads, per batch item."""

    reverse: bool
    index: np.ndarray | None = None  # [seq, batch] for a reverse direction with sequence_lens (its own inverse)
    _gathers: dict[tuple[tuple[int, ...], int], tuple[np.ndarray, ...]] = field(
        default_factory=dict, compare=False, repr=False)

    def apply(self, array: np.ndarray, batch_axis: int) -> np.ndarray:
        """`array` (time first, batch items along `batch_axis`) permuted between time and processing order."""
        if not self.reverse:
            return array
        if self.index is None:
            return array[::-1]
        key = (array.shape, batch_axis)
        gather = self._gathers.get(key)
        if gather is None:
            gather = self._gathers[key] = _gather(self.index, array.shape, batch_axis)
        gathered: np.ndarray = array[gather]
        return gathered


def _gather(index: np.ndarray, shape: tuple[int, ...], batch_axis: int) -> tuple[np.ndarray, ...]:
    """The fancy index np.take_along_axis(array, index, axis=0) builds (`index` [seq, batch] set along axes 0 and
    `batch_axis`, every other axis its own range), made once per shape: take_along_axis builds it in Python at
    every call, which costs a small cell more than the gather."""
    ndim = len(shape)
    index_shape = [1] * ndim
    index_shape[0], index_shape[batch_axis] = index.shape
    found = [index.reshape(index_shape)]
    for axis in range(1, ndim):
        axis_shape = [1] * ndim
        axis_shape[axis] = shape[axis]
        found.append(np.arange(shape[axis]).reshape(axis_shape))
    return tuple(found)


_FORWARD, _BACKWARD = TimeOrder(False), TimeOrder(True)


def time_order(reverse: bool, seq: int, lens: np.ndarray | None) -> TimeOrder:
    """The order of one direction; `lens` the int64 sequence lengths, or None when every sequence is full."""
    if not reverse or lens is None:
        return _BACKWARD if reverse else _FORWARD
    return _reverse_order(seq, lens.tobytes())


@lru_cache(maxsize=64)
def _reverse_order(seq: int, lens: bytes) -> TimeOrder:
    """A reverse direction's order for these lengths, made once (with its gathers): a model sees the same few."""
    lengths = np.frombuffer(lens, np.int64)
    t = np.arange(seq)[:, None]
    index = np.where(t < lengths[None, :], lengths[None, :] - 1 - t, t)
    index.flags.writeable = False
    return TimeOrder(True, index)


Schedule = list[tuple[int, "np.ndarray | None"]]


def schedule(seq: int, lens: np.ndarray | None) -> Schedule:
    """(processing step, mask [batch, 1] of the items whose sequence has ended, to keep their previous state, or
    None when every item is still running) for each step any item needs. Made once per length and lengths (the
    cells only read it)."""
    return _schedule(seq, None if lens is None else lens.tobytes())


@lru_cache(maxsize=64)
def _schedule(seq: int, lens: bytes | None) -> Schedule:
    if lens is None:
        return [(s, None) for s in range(seq)]
    lengths = np.frombuffer(lens, np.int64)
    shortest = int(lengths.min())
    found: Schedule = []
    for s in range(int(lengths.max())):
        if s < shortest:
            found.append((s, None))
        else:
            mask = (s >= lengths)[:, None]
            mask.flags.writeable = False
            found.append((s, mask))
    return found
