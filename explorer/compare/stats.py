"""Error statistics of one value against another: max abs/rel error and whether it is within tolerance.
Integers, booleans and strings must be equal; floats (any precision, compared in float64) within
atol + rtol·|reference|; sequences element by element, maps key by key; NaN equals NaN and an infinity the same
infinity."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

RTOL, ATOL = 1e-4, 1e-5
CHUNK_ELEMENTS = 1 << 20  # elements measured at once: a large value's float64 temporaries stay a few MiB


@dataclass
class OutputDiff:
    """How far one value is from its reference. `note` says why values could not be compared numerically."""

    name: str
    max_abs: float
    max_rel: float
    ok: bool
    note: str = ""

    def line(self) -> str:
        note = f" ({self.note})" if self.note else ""
        return f"{self.name}: {diff_text(self.max_abs, self.max_rel)} {'ok' if self.ok else 'MISMATCH'}{note}"


def diff_text(max_abs: float, max_rel: float) -> str:
    """How two values differ, as every report words it."""
    return f"max abs diff {max_abs:.3g}, max rel diff {max_rel:.3g}"


def _unequal(name: str, note: str = "") -> OutputDiff:
    return OutputDiff(name, float("inf"), float("inf"), False, note)


def compare_values(name: str, ours: Any, theirs: Any, rtol: float = RTOL, atol: float = ATOL,
                   slack: Any = 0.0) -> OutputDiff:
    """`ours` against the reference `theirs` (the relative error divides by |theirs|); `slack` (a number, or an
    array of the values' shape) widens the absolute tolerance of floats: the rounding an operation can make."""
    if isinstance(ours, list) or isinstance(theirs, list):
        if not (isinstance(ours, list) and isinstance(theirs, list)) or len(ours) != len(theirs):
            return _unequal(name, "sequence length or kind differs")
        parts = [compare_values(f"{name}[{i}]", a, b, rtol, atol) for i, (a, b) in enumerate(zip(ours, theirs))]
        return OutputDiff(name, max((p.max_abs for p in parts), default=0.0),
                          max((p.max_rel for p in parts), default=0.0), all(p.ok for p in parts))
    if isinstance(ours, dict) or isinstance(theirs, dict):
        if not (isinstance(ours, dict) and isinstance(theirs, dict)) or set(ours) != set(theirs):
            return _unequal(name, "map keys or kind differ")
        keys = list(theirs)
        return compare_values(name, np.array([ours[k] for k in keys]), np.array([theirs[k] for k in keys]), rtol, atol)
    if ours is None or theirs is None:
        return OutputDiff(name, 0.0, 0.0, True) if ours is None and theirs is None else _unequal(name, "one is empty")
    a, b = np.asarray(ours), np.asarray(theirs)
    if a.shape != b.shape:
        return _unequal(name, f"shape {a.shape} vs {b.shape}")
    if a.dtype.kind in "OUS" or b.dtype.kind in "OUS":
        same = bool(np.array_equal(a.astype(str), b.astype(str)))
        return OutputDiff(name, 0.0, 0.0, True) if same else _unequal(name)
    if a.dtype == b.dtype and (a is b or np.array_equal(a, b)):  # the common case, without float64 copies
        return OutputDiff(name, 0.0, 0.0, True)
    if a.dtype.kind in "fcV" or b.dtype.kind in "fcV":  # V: bfloat16/float8 from ml_dtypes
        max_abs, max_rel, beyond = _float_extremes(a, b, rtol, atol, slack)
        return OutputDiff(name, max_abs, max_rel, not beyond)
    diff = np.abs(a.astype(np.int64) - b.astype(np.int64)) if a.size else np.zeros(0)
    return OutputDiff(name, float(diff.max(initial=0)), 0.0, bool(np.array_equal(a, b)))


def _float_extremes(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, slack: Any) -> tuple[float, float, bool]:
    """The max abs and rel errors of float_errors and whether any element is beyond the tolerance, computed a chunk
    of elements at a time (the same values: each element's errors do not depend on the others)."""
    if a.size <= CHUNK_ELEMENTS or (np.ndim(slack) and np.shape(slack) != a.shape):
        pieces = [(a, b, slack)]
    else:
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)
        flat_slack = np.reshape(slack, -1) if np.ndim(slack) else None
        pieces = [(flat_a[k:k + CHUNK_ELEMENTS], flat_b[k:k + CHUNK_ELEMENTS],
                   slack if flat_slack is None else flat_slack[k:k + CHUNK_ELEMENTS])
                  for k in range(0, a.size, CHUNK_ELEMENTS)]
    max_abs = max_rel = 0.0
    beyond = False
    for ours, theirs, extra in pieces:
        abs_err, rel_err, bad = float_errors(ours, theirs, rtol, atol, extra)
        max_abs = max(max_abs, float(abs_err.max(initial=0.0)))
        max_rel = max(max_rel, float(rel_err.max(initial=0.0)))
        beyond = beyond or bool(bad.any())
    return max_abs, max_rel, beyond


def float_errors(ours: np.ndarray, theirs: np.ndarray, rtol: float = RTOL, atol: float = ATOL,
                 slack: Any = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Element-wise (abs error, rel error, beyond tolerance) of two same-shaped arrays, in float64; `slack` is
    added to the absolute tolerance."""
    a64, b64 = ours.astype(np.float64), theirs.astype(np.float64)
    both_nan = np.isnan(a64) & np.isnan(b64)
    same_inf = np.isinf(a64) & (a64 == b64)
    with np.errstate(invalid="ignore"):
        diff = np.where(both_nan | same_inf, 0.0, np.abs(a64 - b64))
    diff = np.nan_to_num(diff, nan=np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(diff == 0, 0.0, diff / np.maximum(np.abs(b64), 1e-12))
    bad = diff > atol + rtol * np.abs(np.nan_to_num(b64)) + slack
    return diff, np.nan_to_num(rel, nan=np.inf), bad
