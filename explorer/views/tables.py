"""Values as table rows: shape, dtype, min/max/mean, NaN/Inf counts, and small tensors as 2-D grids."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..values import ValueSummary, count_nonfinite, describe, summarize

MAX_TABLE_CELLS = 400


def value_stats(value: Any) -> dict[str, Any]:
    """One row describing a value: type, shape, dtype, min, max, mean, NaN and Inf counts (None where they
    do not apply, e.g. strings or sequences)."""
    nan, inf = count_nonfinite(value)
    row: dict[str, Any] = {"type": describe(value), "shape": None, "dtype": None, "min": None, "max": None,
                           "mean": None, "NaN": nan, "Inf": inf}
    summary = value if isinstance(value, ValueSummary) else None
    if isinstance(value, np.ndarray):
        summary = summarize(_numeric(value))
        row["dtype"] = str(value.dtype)
    if summary is not None:
        row["shape"] = tuple(summary.shape)
        row["dtype"] = row["dtype"] or summary.dtype
        row["min"], row["max"], row["mean"] = summary.min, summary.max, summary.mean
    return row


def _numeric(value: np.ndarray) -> np.ndarray:
    """bool as int and ml_dtypes (bfloat16, float8...) as float32, so statistics can be computed."""
    if value.dtype == np.bool_:
        return value.astype(np.int8)
    if value.dtype.kind == "V":
        try:
            return value.astype(np.float32)
        except (TypeError, ValueError):
            return value
    return value


def as_grid(value: Any, max_cells: int = MAX_TABLE_CELLS) -> np.ndarray | None:
    """A small tensor as a 2-D grid for a table (scalars 1×1, vectors one row, rank ≥ 3 flattened to
    rows × last axis), or None when it is not a tensor or too big to read as a table."""
    if not isinstance(value, np.ndarray) or value.size > max_cells or value.size == 0:
        return None
    if value.ndim == 0:
        return value.reshape(1, 1)
    if value.ndim == 1:
        return value.reshape(1, -1)
    return value.reshape(-1, value.shape[-1])


def short_text(value: Any, max_items: int = 6) -> str:
    """A value in a few characters: the number for scalars, the list for tiny tensors, else type and range."""
    if isinstance(value, np.ndarray) and value.size <= max_items and value.dtype.kind in "biufcOUS":
        if value.ndim == 0:
            item = value.item()
            return f"{item:.6g}" if isinstance(item, float) else repr(item)  # not float32's 17 float64 digits
        return np.array2string(value, separator=", ", precision=4, threshold=max_items).replace("\n", "")
    stats = value_stats(value)
    if stats["min"] is None:
        return stats["type"]
    text = f"{stats['type']} ∈ [{stats['min']:.3g}, {stats['max']:.3g}]"
    if stats["NaN"] or stats["Inf"]:
        text += f" NaN={stats['NaN']} Inf={stats['Inf']}"
    return text
