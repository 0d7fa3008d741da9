"""Gate-level departures of a GRU/LSTM/RNN: given two sets of gates ([seq, num_directions, batch, hidden] as
`Trace.gates` returns them), the first time step, in each direction's processing order, at which some gate
departs beyond the tolerance, and which gates depart there, in the order the cell computes them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spec.rnn import CELLS
from .stats import float_errors

STATES = ("C", "H")


@dataclass(frozen=True)
class GateDivergence:
    """Where a recurrent node's gates first depart from the other side's (`against`: 'B', 'onnxruntime',
    'PyTorch')."""

    node: str
    op_type: str
    iteration: tuple[int, ...]
    direction: int
    step: int  # time step: position in the input sequence
    gate: str  # the first departing gate in the cell's order of computation
    departing: tuple[str, ...]  # every gate departing at that step
    max_abs: float  # the largest error among them at that step
    against: str
    batch_item: int = 0  # where the first departing gate departs first at that step
    unit: int = 0

    def describe(self) -> str:
        where = f" at iteration {self.iteration}" if self.iteration else ""
        return (f"{self.op_type} {self.node!r}{where}: gate {self.gate} departs first from {self.against}, at time "
                f"step {self.step} (direction {self.direction}), unit {self.unit} of batch item {self.batch_item}; "
                f"departing there: {', '.join(self.departing)} (max abs diff {self.max_abs:.3g})")


def first_departure(op_type: str, node: str, iteration: tuple[int, ...], ours: dict[str, np.ndarray],
                    theirs: dict[str, np.ndarray], reverse: list[bool], against: str, rtol: float,
                    atol: float, slack: dict[str, np.ndarray] | None = None) -> GateDivergence | None:
    """The earliest step (processing order) at which any gate of `ours` departs from `theirs`; forward
    direction first. Only the series both sides have are compared: a "recurrence" (a cell of no known kind), or
    a cell the other side recognized as another kind, by its carried state."""
    names = [g for g in computed_order(op_type) if g in ours and g in theirs
             and np.shape(ours[g]) == np.shape(theirs[g])]
    if not names:
        return None
    seq, directions = np.shape(ours[names[0]])[:2]
    slack = slack or {}
    errors = {g: float_errors(np.asarray(ours[g]), np.asarray(theirs[g]), rtol, atol, slack.get(g, 0.0))
              for g in names}
    for d in range(directions):
        steps = range(seq - 1, -1, -1) if reverse[d] else range(seq)
        for t in steps:
            departing = tuple(g for g in names if errors[g][2][t, d].any())
            if departing:
                worst = max(float(errors[g][0][t, d].max()) for g in departing)
                item, unit = np.unravel_index(int(np.argmax(errors[departing[0]][2][t, d])),
                                              np.shape(errors[departing[0]][2][t, d]))
                return GateDivergence(node, op_type, iteration, d, t, departing[0], departing, worst, against,
                                      int(item), int(unit))
    return None


def computed_order(kind: str) -> tuple[str, ...]:
    """The series a cell of `kind` records, in the order one time step computes them: its carried states only
    (C, then H) for a kind explorer does not know by name."""
    return CELLS[kind].computed if kind in CELLS else STATES


def reverse_directions(direction: str, count: int) -> list[bool]:
    """For each recorded direction, whether it runs backwards in time."""
    return [direction == "reverse" or k == 1 for k in range(count)]
