"""The gates of a recurrent cell that an exporter wrote as a loop, a scan or an unrolled graph, gathered from a
recorded run by its layout (trace/cell_layout.py) into the arrays `Trace.gates` gives for the GRU/LSTM/RNN
operators: gate -> [seq, num_directions, batch, hidden], time first, plus `mask` [seq, num_directions, batch].
Steps where a mask keeps
the state (Keras's masking) are NaN in every series and False in `mask`, as steps past `sequence_lens` are for
the operators."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..trace.cell_layout import CellLayout, DirectionSteps, Source

if TYPE_CHECKING:
    from ..trace.trace import Event, Trace


StepValues = Callable[[DirectionSteps, Mapping[str, Source], tuple[int, ...]], dict[str, list[Any]]]


def gather_gates(trace: Trace, layout: CellLayout, iteration: tuple[int, ...] = ()) -> dict[str, np.ndarray]:
    """The cell's series at one execution (`iteration`: where its loops ran), as `Trace.gates` gives them.
    KeyError when the run did not reach the cell or its values were kept as summaries only."""
    return gather(lambda steps, wanted, at: _from_trace(trace, steps, wanted, at), layout, iteration)


def gather(values_of: StepValues, layout: CellLayout, iteration: tuple[int, ...] = ()) -> dict[str, np.ndarray]:
    """The cell's series from any side's per-step values: `values_of(direction, wanted, iteration)` gives, for
    each wanted series, its value at every step of the direction in processing order."""
    per_direction = [_direction(values_of, d, iteration) for d in layout.directions]
    names = [name for name in per_direction[0][0] if all(name in s for s, _ in per_direction)]
    lengths = {next(iter(s.values())).shape[:2] for s, _ in per_direction if s}
    if len(lengths) != 1:
        raise KeyError("the directions of this cell ran different numbers of steps or batch items")
    mask = np.stack([m for _, m in per_direction], axis=1)
    out: dict[str, np.ndarray] = {}
    for name in names:
        stacked = np.stack([s[name] for s, _ in per_direction], axis=1)
        if not mask.all() and np.issubdtype(stacked.dtype, np.floating):
            stacked = np.where(mask[..., None], stacked, np.nan)
        out[name] = stacked
    out["mask"] = mask
    return out


def wanted_series(steps: DirectionSteps) -> dict[str, Source]:
    """The series a direction records (its gates, states and mask), each where a step writes it."""
    wanted = dict(steps.series if steps.loop is not None or not steps.steps else steps.steps[0])
    if steps.mask is not None:
        wanted["mask"] = steps.mask
    return wanted


def _direction(values_of: StepValues, steps: DirectionSteps,
               iteration: tuple[int, ...]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """One direction's series [seq, batch, units] in input-position order, and its mask [seq, batch]."""
    wanted = wanted_series(steps)
    values = values_of(steps, wanted, iteration)
    perms = {name: source.perm for name, source in wanted.items()}
    series = {name: _stack(name, v, perms[name]) for name, v in values.items() if name != "mask"}
    if not series or not all(len(v) for v in values.values()):
        raise KeyError(f"the run holds no steps of this cell{f' at iteration {iteration}' if iteration else ''}")
    seq, batch = next(iter(series.values())).shape[:2]
    mask: np.ndarray = np.ones((seq, batch), bool)
    if steps.mask is not None:
        raw = _stack("mask", values["mask"])
        if raw.shape[:2] == (seq, batch):
            mask = np.asarray(raw.astype(bool).any(axis=2))
    if steps.reverse:
        series = {name: v[::-1] for name, v in series.items()}
        mask = mask[::-1]
    return series, np.ascontiguousarray(mask)


def _from_trace(trace: Trace, steps: DirectionSteps, wanted: Mapping[str, Source],
                iteration: tuple[int, ...]) -> dict[str, list[Any]]:
    values: dict[str, list[Any]] = {name: [] for name in wanted}
    if steps.loop is None:
        for step in steps.steps:
            for name, source in step.items():
                if name in values:
                    values[name].append(trace.event(source.node, iteration).outputs.get(source.value))
            if steps.mask is not None:
                values["mask"].append(trace.event(steps.mask.node, iteration).outputs.get(steps.mask.value))
        return values
    loop = trace.event(steps.loop, iteration)
    depth = len(iteration) + 1
    where = {(s.node, f"#{s.gate}" if s.gate else s.value): name for name, s in wanted.items()}
    by_node = {s.node for s in wanted.values()}
    for event in trace.children(loop):
        if event.node in by_node and len(event.iteration) == depth:
            _collect(event, where, values)
    formal = {name: s.value for name, s in wanted.items() if s.node == steps.loop}
    if formal:  # body inputs (a Scan's slices): each iteration's record holds them
        for record in trace.iterations(steps.loop):
            if record.index[:-1] == tuple(iteration):
                for name, value_name in formal.items():
                    values[name].append(record.inputs.get(value_name))
    return values


def _collect(event: Event, where: Mapping[tuple[str, str], str], values: dict[str, list[Any]]) -> None:
    for value_name, value in event.outputs.items():
        name = where.get((event.node, value_name))
        if name is not None:
            values[name].append(value)
    for gate, series in event.info.get("gates", {}).items():
        name = where.get((event.node, f"#{gate}"))
        if name is not None:  # an operator's one step: [1, directions, batch, hidden]
            values[name].append(series[0, 0] if isinstance(series, np.ndarray) else series)


def _stack(name: str, values: list[Any], perm: tuple[int, ...] = ()) -> np.ndarray:
    """Per-step values as [seq, batch, units]: a value of rank >= 2 is [batch, ...], a vector one batch item."""
    rows = []
    for value in values:
        if not isinstance(value, np.ndarray):
            raise KeyError(f"series {name!r} was kept as a summary only (the trace memory budget was spent)")
        if perm and value.ndim == len(perm):
            value = value.transpose(perm)
        elif value.ndim == 3 and value.shape[0] == 1:
            value = value[0]  # [1, batch, hidden]: one direction of one layer, as PyTorch's exports hold states
        rows.append(value.reshape(1, -1) if value.ndim < 2 else value.reshape(value.shape[0], -1))
    if len({r.shape for r in rows}) != 1:
        raise KeyError(f"series {name!r} changes shape from step to step")
    return np.stack(rows)
