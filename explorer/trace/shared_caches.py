"""Caches recorded once: the present a decoder returns at step t is the past of step t (the present of step t - 1,
its rows reordered by the beams with beam search) plus new positions, so the trace keeps each cache as one buffer
holding every step's new positions once (the final cache's size) and makes every step's past and present from it.

Done on a finished recording: every array recorded as a step's present or past (the event that made it, the
events that read it, the iteration records, the trace's outputs: the same array object) is replaced, after a check
that the buffer gives back exactly its values, by a read-only view of the buffer when the rows never moved (greedy
decoding, sampling), else by a `Deferred` value that gathers each position's rows from the buffer when read
(`ReorderedCache`). A cache whose steps do not extend one another (a rolling window, a model that rewrites old
positions) is left as recorded from the first step where it does not; so is a recording past its memory budget."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .trace import Trace
from .values import Deferred, RecordedValues

POSITION_AXIS = -2  # [.., batch, heads, positions, head size], as optimum and onnxruntime's tools lay caches out


@dataclass
class CacheSteps:
    """One cache over the steps of a generation: `presents[t]` what the decoder returned at step t; the next step's
    past is `presents[t]` with its rows (along `batch_axis`) taken from `parents[t]` (None: each row its own) and
    was recorded as `nexts[t]` (None when not recorded, or the present itself)."""

    presents: list[Any]
    parents: list[np.ndarray | None]
    nexts: list[Any]
    batch_axis: int = 0


@dataclass
class _Buffer:
    """Every step's new positions of one cache, each once: positions [ends[t - 1], ends[t]) are step t's, its rows
    in step t's order; `parents[t]` the rows step t + 1 continues."""

    data: np.ndarray
    ends: list[int]
    parents: list[np.ndarray | None]
    batch_axis: int

    def take(self, start: int, stop: int, rows: np.ndarray | None) -> np.ndarray:
        block = self.data[(slice(None),) * (self.data.ndim + POSITION_AXIS) + (slice(start, stop),)]
        return block if rows is None else np.take(block, rows, axis=self.batch_axis)


class ReorderedCache(Deferred):
    """A cache at one step made from its buffer: step `step`'s present, or with `rows` the next step's past (that
    present's rows taken from `rows`); each position's rows followed back through the steps' parents."""

    __slots__ = ("buffer", "step", "rows", "_shape")

    def __init__(self, buffer: _Buffer, step: int, rows: np.ndarray | None) -> None:
        self.buffer, self.step, self.rows = buffer, step, rows
        shape = list(buffer.data.shape)
        shape[POSITION_AXIS] = buffer.ends[step]
        self._shape = tuple(shape)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.buffer.data.dtype

    def parts(self) -> list[np.ndarray]:
        return [self.buffer.data]

    def resolve(self) -> np.ndarray:
        buffer, rows = self.buffer, self.rows
        blocks = []
        for step in range(self.step, -1, -1):
            blocks.append(buffer.take(buffer.ends[step - 1] if step else 0, buffer.ends[step], rows))
            parents = buffer.parents[step - 1] if step else None
            if parents is not None:
                rows = parents if rows is None else parents[rows]
        whole = np.concatenate(blocks[::-1], axis=POSITION_AXIS)
        whole.flags.writeable = False
        return whole


def _root(value: np.ndarray) -> np.ndarray:
    while isinstance(value.base, np.ndarray):
        value = value.base
    return value


def held_bytes(values: Iterable[Any]) -> int:
    """Bytes of memory the arrays among `values` hold (a Deferred value: the arrays it is made from), each buffer
    counted once however many values share it."""
    roots = {}
    for value in values:
        for array in value.parts() if isinstance(value, Deferred) else [value]:
            if isinstance(array, np.ndarray):
                root = _root(array)
                roots[id(root)] = root.nbytes
    return sum(roots.values())


def _in_memory(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.ndim >= 2 and _root(value).base is None


def _reordered(value: np.ndarray, rows: np.ndarray | None, axis: int) -> np.ndarray:
    return value if rows is None else np.take(value, rows, axis=axis)


def _same_but_positions(a: np.ndarray, b: np.ndarray) -> bool:
    axis = b.ndim + POSITION_AXIS
    return a.ndim == b.ndim and a.dtype == b.dtype and a.shape[:axis] == b.shape[:axis] and \
        a.shape[axis + 1:] == b.shape[axis + 1:]


def _steps_kept(cache: CacheSteps) -> int:
    """How many steps from the first the buffer can give back: each present extends the past made from the one
    before, and each recorded next past is its present's rows reordered."""
    presents, axis = cache.presents, cache.batch_axis
    kept = 0
    for step, present in enumerate(presents):
        if not _in_memory(present) or not _same_but_positions(present, presents[0]):
            break
        if step:
            past = _reordered(presents[step - 1], cache.parents[step - 1], axis)
            length = past.shape[POSITION_AXIS]
            lead = (slice(None),) * (present.ndim + POSITION_AXIS)
            if length > present.shape[POSITION_AXIS] or not np.array_equal(present[lead + (slice(0, length),)], past):
                break
        kept = step + 1
    return kept


def _moved(parents: np.ndarray | None) -> bool:
    return parents is not None and not np.array_equal(parents, np.arange(len(parents)))


def _swaps(cache: CacheSteps) -> dict[int, Any]:
    """id(recorded array) -> what replaces it, for the steps of one cache the buffer gives back."""
    kept = _steps_kept(cache)
    if not kept:
        return {}
    presents, axis = cache.presents[:kept], cache.batch_axis
    last = presents[-1]
    ends = [int(p.shape[POSITION_AXIS]) for p in presents]
    buffer = _Buffer(np.empty(last.shape, last.dtype), ends, list(cache.parents[:kept]), axis)
    lead = (slice(None),) * (last.ndim + POSITION_AXIS)
    swaps: dict[int, Any] = {}
    still = True  # no row has moved up to this step: its values are a view of the buffer
    for step, present in enumerate(presents):
        start = ends[step - 1] if step else 0
        buffer.data[lead + (slice(start, ends[step]),)] = present[lead + (slice(start, ends[step]),)]
        if step:
            still = still and not _moved(cache.parents[step - 1])
        swaps[id(present)] = _whole(buffer, step, None, still)
        following = cache.nexts[step] if step < len(cache.nexts) else None
        if following is not None and following is not present and _in_memory(following):
            rows = cache.parents[step]
            if np.array_equal(following, _reordered(present, rows, axis)):
                swaps[id(following)] = _whole(buffer, step, rows, still and not _moved(rows))
    buffer.data.flags.writeable = False
    return swaps


def _whole(buffer: _Buffer, step: int, rows: np.ndarray | None, still: bool) -> Any:
    if not still:
        return ReorderedCache(buffer, step, rows)
    view = buffer.data[(slice(None),) * (buffer.data.ndim + POSITION_AXIS) + (slice(0, buffer.ends[step]),)]
    view.flags.writeable = False
    return view


def _swapped(values: tuple[Any, ...], swaps: dict[int, Any]) -> tuple[Any, ...]:
    if not any(id(v) in swaps for v in values):
        return values
    return tuple(swaps.get(id(v), v) for v in values)


def _swapped_dict(values: dict[str, Any], swaps: dict[int, Any]) -> dict[str, Any]:
    raw = dict.items(values)  # as recorded, not made whole
    if not any(id(v) in swaps for _, v in raw):
        return values
    new = {name: swaps.get(id(v), v) for name, v in raw}
    return RecordedValues(new) if any(isinstance(v, Deferred) for v in new.values()) else new


def share_caches(trace: Trace, caches: list[CacheSteps], first_event: int = 0) -> None:
    """Replaces every step's recorded present and next past of `caches` by what the shared buffers give (see the
    module docstring), in the events from `first_event` on, the iteration records and the trace's outputs."""
    if trace.spilled_at is not None or trace.budget_exceeded_at is not None:
        return
    swaps: dict[int, Any] = {}
    originals = [cache.presents + cache.nexts for cache in caches]  # held until every reference is swapped
    for cache in caches:
        swaps.update(_swaps(cache))
    if not swaps:
        return
    for event in trace.events[first_event:]:
        event.input_values = _swapped(event.input_values, swaps)
        event.output_values = _swapped(event.output_values, swaps)
    for record in trace.iteration_records:
        record.inputs = _swapped_dict(record.inputs, swaps)
        record.outputs = _swapped_dict(record.outputs, swaps)
    trace.outputs = _swapped_dict(trace.outputs, swaps)
    del originals
