"""Processing order of the time steps: every direction runs forward in its own order, so the directions of a
bidirectional node advance together, one stacked operation per gate and step for all of them.

A reverse direction reads each batch item's sequence from its end: processing step s reads time step
len_b - 1 - s of item b (seq_length - 1 - s without sequence_lens). The same permutation takes the values it
produced back to time order. Steps past an item's length keep its previous state (see `schedule`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TimeOrder:
    """Which time step each processing step of one direction reads, per batch item."""

    reverse: bool
    index: np.ndarray | None = None  # [seq, batch] for a reverse direction with sequence_lens (its own inverse)

    def apply(self, array: np.ndarray, batch_axis: int) -> np.ndarray:
        """`array` (time first, batch items along `batch_axis`) permuted between time and processing order."""
        if not self.reverse:
            return array
        if self.index is None:
            return array[::-1]
        shape = [1] * array.ndim
        shape[0], shape[batch_axis] = self.index.shape
        return np.take_along_axis(array, self.index.reshape(shape), axis=0)


def time_order(reverse: bool, seq: int, lens: np.ndarray | None) -> TimeOrder:
    if not reverse or lens is None:
        return TimeOrder(reverse)
    t = np.arange(seq)[:, None]
    return TimeOrder(True, np.where(t < lens[None, :], lens[None, :] - 1 - t, t))


Schedule = list[tuple[int, "np.ndarray | None"]]


def schedule(seq: int, lens: np.ndarray | None) -> Schedule:
    """(processing step, mask [batch, 1] of the items whose sequence has ended, to keep their previous state, or
    None when every item is still running) for each step any item needs."""
    if lens is None:
        return [(s, None) for s in range(seq)]
    shortest = int(lens.min())
    return [(s, None if s < shortest else (s >= lens)[:, None]) for s in range(int(lens.max()))]
