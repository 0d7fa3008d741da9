"""The gates of a recurrent cell written as a loop, a scan or an unrolled graph on both sides of a comparison,
aligned as the operators' are: side A's gathered from its run; B's from its own run, from onnxruntime's values
of the same body nodes at each iteration (exposed as extra outputs), or recomputed by the framework's
equations (reference values, PyTorch)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..cells import RecurrentCell, recurrent_cells
from ..cells.cell_gates import StepValues, gather
from ..trace.cell_layout import DirectionSteps, Source
from .cell_check import check_cell
from .gate_departures import GateDivergence, first_departure
from .recording import Key, Produced, Recording
from .sides import ONNXRUNTIME, PYTORCH

Gates = dict[str, np.ndarray]


def produced_values(produced: Mapping[Key, Produced]) -> StepValues:
    """Per-step values of a cell from a recording's values by (node, value) and iteration tuple."""
    def values_of(steps: DirectionSteps, wanted: Mapping[str, Source],
                  iteration: tuple[int, ...]) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {name: [] for name in wanted}
        if steps.loop is not None:
            for name, source in wanted.items():
                found = produced.get((source.node, source.value))
                if found is not None:
                    inside = sorted(k for k in found.values if len(k) == len(iteration) + 1 and k[:-1] == iteration)
                    out[name] = [found.values[k] for k in inside]
            return out
        for step in steps.steps:
            for name, source in (*step.items(), *((("mask", steps.mask),) if steps.mask else ())):
                found = produced.get((source.node, source.value))
                if found is not None and iteration in found.values:
                    out[name].append(found.values[iteration])
        return out

    return values_of


def executions(recording: Recording, cell: RecurrentCell) -> list[tuple[int, ...]]:
    """The iteration tuples at which a cell ran in a recorded run (its loop's, or its first step's)."""
    if recording.trace is None:
        return []
    anchor = cell.loops[0] if cell.loops else cell.gate_nodes[0].get("H", "")
    return [e.iteration for e in recording.trace.events_of(anchor) if not e.summarized]


def theirs_of(a: Recording, b: Recording, cell: RecurrentCell, iteration: tuple[int, ...], rtol: float,
              atol: float) -> tuple[Gates, str] | None:
    """B's gates of a cell of A's model at one execution, and where they come from; None when B has none."""
    assert cell.layout is not None
    if b.kind == "explorer" and b.trace is not None:
        if cell.path not in b.trace.cells:
            return None
        return _without_mask(b.trace.gates(cell.path, iteration)), f"recorded by B's run of {cell.path!r}"
    if b.kind == ONNXRUNTIME:
        try:
            return _without_mask(gather(produced_values(b.produced), cell.layout, iteration)), \
                "onnxruntime's values of the same nodes at each step"
        except KeyError:
            return None
    if b.kind in ("reference", PYTORCH) and a.model is not None and a.trace is not None:
        check = check_cell(a.model, a.trace, cell.path, iteration, reference=b.given or None, rtol=rtol, atol=atol)
        return (check.theirs, f"{check.against}'s equations from {check.weights_from}") if check.theirs else None
    return None


def cell_departures(a: Recording, b: Recording, rtol: float, atol: float,
                    notes: list[str]) -> tuple[list[GateDivergence], list[str]]:
    """The first gate departure of every cell of A's model written as a loop, scan or unrolled graph, and the
    cells compared gate by gate."""
    found: list[GateDivergence] = []
    checked: list[str] = []
    if a.model is None or a.trace is None:
        return found, checked
    for cell in recurrent_cells(a.model):
        if cell.form == "op" or cell.layout is None:
            continue
        reverse = [d.reverse for d in cell.layout.directions]
        for iteration in executions(a, cell):
            try:
                ours = _without_mask(a.trace.gates(cell.path, iteration))
                theirs = theirs_of(a, b, cell, iteration, rtol, atol)
            except KeyError as exc:
                notes.append(f"gates of {cell.path!r}: {exc.args[0] if exc.args else exc}")
                break
            if theirs is None:
                break
            checked.append(f"{cell.kind} {cell.form} {cell.path!r}")
            other_kind = _kind_on(b, cell.path)
            if other_kind not in (None, cell.kind) and not any(cell.path in n and "carried state" in n for n in notes):
                notes.append(f"{cell.path!r} is {_named(cell.kind)} in A's model and {_named(other_kind)} in B's: "
                             "compared by their carried state")
            against = {"explorer": "B", ONNXRUNTIME: ONNXRUNTIME}.get(b.kind, cell.framework)
            departure = first_departure(cell.kind, cell.path, iteration, ours, theirs[0], reverse, against, rtol,
                                        atol)
            if departure is not None:
                found.append(departure)
                break
    return found, list(dict.fromkeys(checked))


def _kind_on(side: Recording, path: str) -> str | None:
    """The kind of cell the side's own run recognized at `path` (None when it recorded none there)."""
    if side.kind != "explorer" or side.trace is None or path not in side.trace.cells:
        return None
    return side.trace.cells[path].kind


def _named(kind: str) -> str:
    if kind == "recurrence":
        return "a cell of no known kind (a recurrence)"
    return f"{'an' if kind[0] in 'AEFHILMNORSX' else 'a'} {kind} cell"  # an LSTM, an RNN, a GRU: as spoken


def _without_mask(gates: Gates) -> Gates:
    return {k: v for k, v in gates.items() if k != "mask"}
