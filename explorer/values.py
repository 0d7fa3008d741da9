"""Helpers over runtime values (tensors, sequences, optionals, maps): sizes, summaries, descriptions."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ValueSummary:
    """What the trace keeps of a value once the memory budget is spent."""

    shape: tuple[int, ...]
    dtype: str
    min: float | None
    max: float | None
    mean: float | None
    nan_count: int
    inf_count: int

    @property
    def nbytes(self) -> int:
        return 0


def nbytes(value: Any) -> int:
    """Bytes held by a value (sequences summed)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, list):
        return sum(nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    return 0


def count_nonfinite(value: Any) -> tuple[int, int]:
    """(NaN count, Inf count) of a tensor, a sequence of tensors or a summary."""
    if isinstance(value, ValueSummary):
        return value.nan_count, value.inf_count
    if isinstance(value, list):
        pairs = [count_nonfinite(v) for v in value]
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc" and value.size:
        try:
            arr = value.astype(np.float64, copy=False) if value.dtype.kind == "f" else value
        except (TypeError, ValueError):
            return 0, 0
        nan = int(np.count_nonzero(np.isnan(arr)))
        inf = int(np.count_nonzero(np.isinf(arr)))
        return nan, inf
    if isinstance(value, np.ndarray) and value.dtype.kind == "V" and value.size:  # ml_dtypes (bfloat16, float8)
        try:
            return count_nonfinite(value.astype(np.float32))
        except (TypeError, ValueError):
            return 0, 0
    return 0, 0


def has_nonfinite(value: Any) -> bool:
    nan, inf = count_nonfinite(value)
    return bool(nan or inf)


def summarize(value: Any) -> Any:
    """A ValueSummary for a tensor; sequences become lists of summaries; other values are kept as they are."""
    if isinstance(value, list):
        return [summarize(v) for v in value]
    if not isinstance(value, np.ndarray):
        return value
    nan, inf = count_nonfinite(value)
    lo = hi = mean = None
    if value.size and value.dtype.kind in "biuf":
        finite = value[np.isfinite(value)] if value.dtype.kind == "f" else value
        if finite.size:
            lo, hi, mean = float(finite.min()), float(finite.max()), float(finite.mean(dtype=np.float64))
    return ValueSummary(tuple(value.shape), str(value.dtype), lo, hi, mean, nan, inf)


def describe(value: Any) -> str:
    """Short type/shape text, e.g. `float32[2, 3]`, `seq(3) of float32[4]`, `none`."""
    if value is None:
        return "none"
    if isinstance(value, ValueSummary):
        return f"{value.dtype}[{', '.join(map(str, value.shape))}] (summary)"
    if isinstance(value, np.ndarray):
        return f"{value.dtype}[{', '.join(map(str, value.shape))}]"
    if isinstance(value, list):
        inner = describe(value[0]) if value else "?"
        return f"seq({len(value)}) of {inner}"
    if isinstance(value, dict):
        return f"map({len(value)})"
    return type(value).__name__
