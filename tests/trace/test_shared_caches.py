"""Caches recorded once (explorer/trace/shared_caches.py), on hand-made steps: a cache whose rows the beams reorder
is held as its final size and read back value for value; a cache that rewrites old positions is left as recorded."""
from __future__ import annotations

import numpy as np

from explorer.trace.shared_caches import CacheSteps, ReorderedCache, held_bytes, share_caches
from explorer.trace.trace import Event, Iteration, Trace
from explorer.trace.values import RecordedValues

ROWS, HEADS, SIZE = 3, 2, 4


def _beam_steps(steps: int, seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """(presents, parents, nexts) of a beam search written out by hand: each present is the previous one's rows
    taken from the parents plus one new position; the prompt has 2 positions."""
    rng = np.random.default_rng(seed)
    present = rng.standard_normal((ROWS, HEADS, 2, SIZE)).astype(np.float32)
    presents, parents, nexts = [], [], []
    for _ in range(steps):
        presents.append(present)
        rows = rng.integers(0, ROWS, ROWS)
        parents.append(rows)
        nexts.append(present[rows].copy())
        present = np.concatenate([nexts[-1], rng.standard_normal((ROWS, HEADS, 1, SIZE)).astype(np.float32)],
                                 axis=2)
    return presents, parents, nexts


def _trace(presents: list[np.ndarray], nexts: list[np.ndarray]) -> Trace:
    """A trace whose events and iterations hold the steps' presents and pasts, as a generation loop records them."""
    trace = Trace()
    for step, present in enumerate(presents):
        past = nexts[step - 1] if step else np.zeros((ROWS, HEADS, 0, SIZE), np.float32)
        trace.events.append(Event.of(step, "concat", "Concat", (step,), {"past": past}, {"present": present}, 0.0))
        trace.iteration_records.append(Iteration("loop", (step,), {"past": past},
                                                 {"present": present, "next": nexts[step]}))
    trace.outputs["final"] = nexts[-1]
    return trace


def test_a_reordered_cache_is_held_once_and_read_back_value_for_value() -> None:
    presents, parents, nexts = _beam_steps(12)
    trace = _trace(presents, nexts)
    share_caches(trace, [CacheSteps(presents, parents, nexts)])
    for step, present in enumerate(presents):
        event = trace.events[step]
        assert isinstance(event.output_values[0], ReorderedCache) or step == 0
        np.testing.assert_array_equal(event.outputs["present"], present)
        np.testing.assert_array_equal(trace.iteration_records[step].outputs["next"], nexts[step])
        if step:
            np.testing.assert_array_equal(dict(trace.iteration_records[step].inputs)["past"], nexts[step - 1])
    np.testing.assert_array_equal(trace.outputs["final"], nexts[-1])
    assert isinstance(trace.outputs, RecordedValues)
    held = [v for record in trace.iteration_records for side in (record.inputs, record.outputs)
            for v in dict.values(side)]
    final = nexts[-1].nbytes
    assert held_bytes(held) == final  # every step's new position once: the final cache's size
    assert held_bytes(presents + nexts) > 5 * final  # what the steps held before


def test_rows_that_never_move_are_views_of_one_buffer() -> None:
    presents, _, _ = _beam_steps(6)
    steps = [presents[0]]
    for _ in range(5):
        steps.append(np.concatenate([steps[-1], np.ones((ROWS, HEADS, 1, SIZE), np.float32)], axis=2))
    trace = _trace(steps, steps)
    share_caches(trace, [CacheSteps(steps, [None] * 6, [None] * 6)])
    shared = [trace.events[k].output_values[0] for k in range(6)]
    assert all(isinstance(v, np.ndarray) and np.shares_memory(v, shared[-1]) for v in shared)
    for value, want in zip(shared, steps):
        np.testing.assert_array_equal(value, want)


def test_a_cache_that_rewrites_old_positions_is_left_as_recorded_from_there() -> None:
    presents, parents, nexts = _beam_steps(6)
    rewritten = presents[4].copy()
    rewritten[0, 0, 0, 0] += 1  # a rolling window would change a position the past held
    presents[4] = rewritten
    trace = _trace(presents, nexts)
    share_caches(trace, [CacheSteps(presents, parents, nexts)])
    assert trace.events[4].output_values[0] is rewritten and trace.events[5].output_values[0] is presents[5]
    assert not isinstance(trace.events[3].output_values[0], np.ndarray)  # the steps before it are shared
    for step, present in enumerate(presents):
        np.testing.assert_array_equal(trace.events[step].outputs["present"], present)
