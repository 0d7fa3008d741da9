"""Caches recorded once: the present of step t is the past of step t plus new positions, so every step's cache is
made a view of one buffer per cache, and the trace holds each position once instead of a copy per step.

Done on the finished trace: every value recorded as a step's `present.*` (the event that made it, the events that
read it, the iteration record, the past the next step reads: the same array object) is replaced by a view of the
buffer holding the same values. With beams the next step's past is the present reordered by the beams, a copy no
view can express: there, each step's past becomes a view of the present it returns, and the trace holds one cache
per step (about half the steps × the final cache). A cache whose steps do not extend one another (a rolling window, a model that
rewrites old positions) is left as recorded from the first step where it does not."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..trace.trace import Iteration, Trace
from .decoder import CachePair
from .parts import LOOP

POSITION_AXIS = -2  # [batch, heads, positions, head size], as optimum and onnxruntime's tools lay caches out


def _root(value: np.ndarray) -> np.ndarray:
    while isinstance(value.base, np.ndarray):
        value = value.base
    return value


def held_bytes(values: Iterable[Any]) -> int:
    """Bytes of memory the arrays among `values` hold, each buffer counted once however many views it has."""
    roots = {}
    for value in values:
        if isinstance(value, np.ndarray):
            root = _root(value)
            roots[id(root)] = root.nbytes
    return sum(roots.values())


def _extends(previous: np.ndarray, present: np.ndarray) -> bool:
    """`present` holds `previous` followed by new positions along POSITION_AXIS."""
    if present.ndim < 2 or previous.ndim != present.ndim or previous.dtype != present.dtype:
        return False
    axis = present.ndim + POSITION_AXIS
    if previous.shape[:axis] != present.shape[:axis] or previous.shape[axis + 1:] != present.shape[axis + 1:]:
        return False
    length = previous.shape[axis]
    return length <= present.shape[axis] and np.array_equal(present[(slice(None),) * axis + (slice(0, length),)],
                                                            previous)


def _views(series: list[np.ndarray]) -> dict[int, np.ndarray]:
    """id(array) -> its view of one buffer, for the steps of one cache while each extends the one before."""
    last = series[-1]
    if last.ndim < 2:
        return {}
    axis = last.ndim + POSITION_AXIS
    buffer = np.empty(last.shape, last.dtype)
    lead = (slice(None),) * axis
    views: dict[int, np.ndarray] = {}
    previous: np.ndarray | None = None
    for present in series:
        if previous is not None and not _extends(previous, present):
            break
        if present.shape[:axis] != last.shape[:axis] or present.shape[axis] > last.shape[axis]:
            break
        start = 0 if previous is None else previous.shape[axis]
        stop = present.shape[axis]
        buffer[lead + (slice(start, stop),)] = present[lead + (slice(start, stop),)]
        view = buffer[lead + (slice(0, stop),)]
        view.flags.writeable = False
        views[id(present)] = view
        previous = present
    return views


def _swap(values: tuple[Any, ...], views: dict[int, np.ndarray]) -> tuple[Any, ...]:
    if not any(id(v) in views for v in values):
        return values
    return tuple(views.get(id(v), v) for v in values)


def share_caches(trace: Trace, chains: list[list[Any]]) -> None:
    """Replaces the arrays of every chain (a cache's values, each extending the one before) by views of one buffer
    per chain (see the module docstring); a chain holding something else than arrays (values past the budget,
    summaries or on disk) is left as recorded."""
    views: dict[int, np.ndarray] = {}
    originals = []  # held until every reference is swapped, so that no id is reused meanwhile
    for series in chains:
        if not series or not all(isinstance(value, np.ndarray) for value in series):
            continue
        originals += series
        views.update(_views(series))
    if not views:
        return
    for event in trace.events:
        event.input_values = _swap(event.input_values, views)
        event.output_values = _swap(event.output_values, views)
    for record in trace.iteration_records:
        for side in (record.inputs, record.outputs):
            for name, value in side.items():
                if id(value) in views:
                    side[name] = views[id(value)]
    for name, value in trace.outputs.items():
        if id(value) in views:
            trace.outputs[name] = views[id(value)]
    del originals


def step_chains(records: list[Iteration], caches: list[CachePair]) -> list[list[Any]]:
    """Greedy and sampling: each cache's `present.*` over the steps, each extending the one before."""
    return [[record.outputs.get(pair.present) for record in records] for pair in caches]


def beam_chains(trace: Trace, records: list[Iteration], caches: list[CachePair]) -> list[list[Any]]:
    """Beam search: at each step after the first, a cache's past (the previous step's present reordered by the
    beams) and the present the decoder returns, which extends it; the decoder's presents found in the events of
    the loop's body (`generate/body/...`, one iteration index)."""
    presents = {pair.present: pair for pair in caches if not pair.static}
    returned: dict[tuple[int, str], Any] = {}
    for event in trace.events:
        if len(event.iteration) == 1 and event.node.startswith(f"{LOOP}/body/"):
            for name, value in zip(event.site.outputs, event.output_values):
                if name in presents:
                    returned[(event.iteration[0], name)] = value
    return [[record.inputs.get(pair.past), returned.get((step, present))]
            for step, record in enumerate(records) if step
            for present, pair in presents.items()]
