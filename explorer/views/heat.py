"""Colouring nodes by a number: a `NodeValues` (node path -> scalar, with what it measures) binned onto a colour
scale, with the legend saying what each colour means. Built from a trace (time spent, max |value|, NaN/Inf) or
from any other source of per-node scalars (e.g. the error between two runs)."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..trace.trace import Trace
from ..trace.values import ValueSummary, count_nonfinite
from . import styles


@dataclass(frozen=True)
class NodeValues:
    """A scalar per node path. `combine` says how a box standing for several nodes (a collapsed scope or body)
    aggregates them: "sum" (time) or "max"."""

    title: str
    values: Mapping[str, float] = field(default_factory=dict)
    unit: str = ""
    combine: str = "max"

    def bounds(self) -> tuple[float, float] | None:
        finite = [v for v in self.values.values() if math.isfinite(v)]
        return (min(finite), max(finite)) if finite else None

    def level(self, value: float) -> int:
        """Index into styles.HEAT_SCALE: 0 for the smallest value, the last for the largest (log-spaced
        when the values span more than two decades)."""
        bounds = self.bounds()
        steps = len(styles.HEAT_SCALE)
        if bounds is None or not math.isfinite(value):
            return steps - 1
        lo, hi = bounds
        if hi <= lo:
            return steps - 1
        if lo > 0 and hi / lo > 100:
            lo, hi, value = math.log10(lo), math.log10(hi), math.log10(max(value, lo))
        share = (value - lo) / (hi - lo)
        return min(steps - 1, max(0, int(share * steps)))

    def colour(self, value: float) -> str:
        return styles.HEAT_SCALE[self.level(value)]

    def legend(self) -> list[tuple[str, str]]:
        """(colour, what it means) pairs, lowest first; an empty list when there is nothing to colour."""
        bounds = self.bounds()
        if bounds is None:
            return []
        lo, hi = bounds
        steps = len(styles.HEAT_SCALE)
        logarithmic = lo > 0 and hi / lo > 100
        edges = []
        for k in range(steps + 1):
            share = k / steps
            edges.append(10 ** (math.log10(lo) + share * (math.log10(hi) - math.log10(lo))) if logarithmic
                         else lo + share * (hi - lo))
        unit = f" {self.unit}" if self.unit else ""
        if hi <= lo:
            return [(styles.HEAT_SCALE[-1], f"{hi:.3g}{unit}")]
        return [(styles.HEAT_SCALE[k], f"{edges[k]:.3g} – {edges[k + 1]:.3g}{unit}") for k in range(steps)]

    def aggregate(self, paths: list[str]) -> float | None:
        found = [self.values[p] for p in paths if p in self.values]
        if not found:
            return None
        return sum(found) if self.combine == "sum" else max(found)


def time_spent(trace: Trace) -> NodeValues:
    """Recorded seconds per node (every execution summed), in milliseconds."""
    totals: dict[str, float] = {}
    for event in trace.events:
        totals[event.node] = totals.get(event.node, 0.0) + event.seconds * 1e3
    return NodeValues("time spent", totals, "ms", combine="sum")


def _max_abs(value: Any) -> float | None:
    if isinstance(value, ValueSummary):
        found = [abs(v) for v in (value.min, value.max) if v is not None]
        return max(found) if found else None
    if isinstance(value, list):
        found = [m for m in (_max_abs(v) for v in value) if m is not None]
        return max(found) if found else None
    if isinstance(value, np.ndarray) and value.size and value.dtype.kind in "biufc":
        magnitude = np.abs(value.astype(np.float64) if value.dtype.kind != "c" else value)
        finite = magnitude[np.isfinite(magnitude)]
        return float(finite.max()) if finite.size else None
    return None


def max_abs(trace: Trace) -> NodeValues:
    """The largest finite |value| each node wrote, over all its executions."""
    out: dict[str, float] = {}
    for event in trace.events:
        for value in event.outputs.values():
            found = _max_abs(value)
            if found is not None:
                out[event.node] = max(out.get(event.node, 0.0), found)
    return NodeValues("max |value| written", out)


def nonfinite(trace: Trace) -> NodeValues:
    """How many NaN or Inf elements each node wrote (nodes that wrote none are absent)."""
    out: dict[str, float] = {}
    for event in trace.events:
        count = sum(sum(count_nonfinite(v)) for v in event.outputs.values())
        if count:
            out[event.node] = out.get(event.node, 0) + count
    return NodeValues("NaN/Inf elements written", out, combine="sum")


OVERLAYS = {"time": time_spent, "magnitude": max_abs, "nonfinite": nonfinite}
OVERLAY_TITLES = {"time": "time spent", "magnitude": "max |value|", "nonfinite": "NaN/Inf"}
