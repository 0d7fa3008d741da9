"""The error of one aligned value at every iteration it ran: max abs/rel error per iteration tuple, where it
first exceeds the tolerance, and its growth (over iterations, and over time steps for a recurrent node's Y)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .align import Pair
from .precision import FLOAT32, Tolerance
from .recording import is_summary
from .rounding import assess
from .stats import float_errors


@dataclass
class IterationError:
    iteration: tuple[int, ...]
    order: int  # event index in A's run: execution order
    max_abs: float
    max_rel: float
    ok: bool
    note: str = ""
    within: str = ""  # why a difference is no divergence: "float16 rounding", "rounding carried from its inputs"...
    own_error: float | None = None  # the node run on B's inputs against B's value (own_error.py), when asked


@dataclass
class ValueComparison:
    """One value on both sides (A's node path and name, B's), and its error at every iteration."""

    node: str
    name: str
    op_type: str
    b_node: str
    b_name: str
    how: str
    errors: list[IterationError] = field(default_factory=list)
    steps: list[float] | None = None  # max abs error per time step (a recurrent node's Y), worst iteration
    notes: list[str] = field(default_factory=list)
    tolerance: Tolerance = FLOAT32

    @property
    def ok(self) -> bool:
        return all(e.ok for e in self.errors)

    @property
    def max_abs(self) -> float:
        return max((e.max_abs for e in self.errors), default=0.0)

    @property
    def max_rel(self) -> float:
        return max((e.max_rel for e in self.errors), default=0.0)

    @property
    def first_exceeding(self) -> IterationError | None:
        """The first execution (in execution order) beyond the tolerance."""
        return next((e for e in self.errors if not e.ok), None)

    @property
    def growth(self) -> list[float]:
        """Max abs error per iteration, in execution order (one entry for a value outside loops)."""
        return [e.max_abs for e in self.errors]

    @property
    def in_loop(self) -> bool:
        return any(e.iteration for e in self.errors)


def measure(pair: Pair, tolerance: Tolerance, time_axis: int | None = None) -> ValueComparison:
    """The value's error at every iteration, judged at its precision (rounding.assess); `time_axis` (a recurrent
    node's Y) adds the error per time step."""
    a, b = pair.a, pair.b
    rtol, atol = tolerance.rtol, tolerance.atol
    result = ValueComparison(a.node, a.name, a.op_type, b.node, b.name, pair.how, tolerance=tolerance)
    skipped = 0
    for iteration in sorted(a.values, key=lambda it: a.order[it]):
        ours = a.values[iteration]
        if iteration not in b.values:
            result.errors.append(IterationError(iteration, a.order[iteration], float("inf"), float("inf"), False,
                                                "ran on side A only"))
            continue
        theirs = b.values[iteration]
        if is_summary(ours) or is_summary(theirs):
            skipped += 1
            continue
        diff = assess(a.name, ours, theirs, tolerance, a.op_type)
        within = ""
        if diff.ok and diff.max_abs > 0 and tolerance.precision not in (FLOAT32.precision, "given") \
                and not assess(a.name, ours, theirs, FLOAT32, a.op_type).ok:
            within = tolerance.rounding
        result.errors.append(IterationError(iteration, a.order[iteration], diff.max_abs, diff.max_rel, diff.ok,
                                            diff.note, within))
    extra = len(set(b.values) - set(a.values))
    if extra:
        result.notes.append(f"ran {extra} more time(s) on side B")
        result.errors.append(IterationError(max(b.values), max(a.order.values(), default=0), float("inf"),
                                            float("inf"), False, "ran on side B only"))
    if skipped:
        result.notes.append(f"{skipped} execution(s) recorded as summaries only (trace budget): not compared")
    if time_axis is not None:
        result.steps = _step_errors(a.values, b.values, time_axis, rtol, atol)
    return result


def _step_errors(ours: dict[tuple[int, ...], Any], theirs: dict[tuple[int, ...], Any], time_axis: int,
                 rtol: float, atol: float) -> list[float] | None:
    """Max abs error per time step along `time_axis`, at the iteration where it is worst."""
    worst: list[float] | None = None
    for iteration, y in ours.items():
        other = theirs.get(iteration)
        if not isinstance(y, np.ndarray) or not isinstance(other, np.ndarray) or y.shape != other.shape \
                or y.ndim <= time_axis or y.dtype.kind not in "fV":
            continue
        abs_err, _, _ = float_errors(y, other, rtol, atol)
        abs_err = np.moveaxis(abs_err, time_axis, 0)
        steps = abs_err.reshape(abs_err.shape[0], -1).max(axis=1, initial=0.0)
        if worst is None or steps.max(initial=0.0) > max(worst, default=0.0):
            worst = [float(s) for s in steps]
    return worst
