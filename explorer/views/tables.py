"""Values as table rows: shape, dtype, min/max/mean, NaN/Inf counts, and small tensors as 2-D grids."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..trace.values import MapSequence, ValueSummary, count_nonfinite, describe, summarize

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
    elif isinstance(value, MapSequence):  # its values' statistics (its shape is its table's)
        summary = summarize(value.table)
        row["dtype"] = str(value.table.dtype)
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


@dataclass(frozen=True)
class Grid:
    """A small tensor laid out for a table: cell texts (NaN and Inf spelt out), row and column labels, and a
    caption saying which axes the rows and columns are (for rank ≥ 3, rows are index tuples of the leading
    axes)."""

    cells: list[list[str]]
    rows: list[str]
    columns: list[str]
    caption: str


def cell_text(item: Any) -> str:
    """One table cell: `NaN`, `Inf`, `-Inf` for non-finite floats, 6 significant digits for other floats."""
    if isinstance(item, (float, np.floating)):
        if np.isnan(item):
            return "NaN"
        if np.isinf(item):
            return "Inf" if item > 0 else "-Inf"
        return f"{float(item):.6g}"
    if isinstance(item, (complex, np.complexfloating)):
        return f"{complex(item):.4g}"
    return str(item.item() if isinstance(item, np.generic) else item)


def grid_items(value: Any, max_cells: int = MAX_TABLE_CELLS) -> np.ndarray | None:
    """The items a value's table shows, as a 2-D array (see `value_grid`), or None when it has no small table."""
    if isinstance(value, MapSequence):
        return value.table if 0 < value.table.size <= max_cells else None
    if isinstance(value, dict):
        if not 0 < len(value) <= max_cells:
            return None
        items = np.empty((len(value), 1), dtype=object)
        items[:, 0] = list(value.values())
        return items
    return as_grid(value, max_cells)


def _key_texts(keys: Any) -> list[str]:
    return [str(k.item() if isinstance(k, np.generic) else k) for k in keys]


def map_grid(value: Any, max_cells: int = MAX_TABLE_CELLS) -> Grid | None:
    """A sequence of maps sharing their keys (one row per map, one column per key) or one map (one row per key)
    as a Grid; None for anything else or too big."""
    items = grid_items(value, max_cells) if isinstance(value, (MapSequence, dict)) else None
    if items is None:
        return None
    cells = [[cell_text(item) for item in row] for row in items]
    if isinstance(value, MapSequence):
        return Grid(cells, [str(i) for i in range(len(items))], _key_texts(value.keys),
                    "rows: the sequence's maps · columns: their keys")
    return Grid(cells, _key_texts(value), ["value"], "rows: the map's keys")


def value_grid(value: Any, max_cells: int = MAX_TABLE_CELLS) -> Grid | None:
    """`value` as a Grid (see `as_grid` for the layout; maps: `map_grid`), or None when it is no small tensor or
    map."""
    if isinstance(value, (MapSequence, dict)):
        return map_grid(value, max_cells)
    grid = as_grid(value, max_cells)
    if grid is None:
        return None
    if grid.dtype.kind == "V":
        grid = _numeric(grid)
    cells = [[cell_text(item) for item in row] for row in grid]
    columns = [str(j) for j in range(grid.shape[1])]
    if value.ndim <= 2:
        rows = [str(i) for i in range(grid.shape[0])]
        caption = {0: "scalar", 1: "columns: axis 0"}.get(value.ndim, "rows: axis 0 · columns: axis 1")
        return Grid(cells, rows, columns, caption)
    lead = value.shape[:-1]
    rows = ["[" + ", ".join(map(str, index)) + "]" for index in np.ndindex(*lead)]
    last = value.ndim - 1
    caption = (f"rows: axes 0–{last - 1} (index [{', '.join(f'i{k}' for k in range(last))}]) · "
               f"columns: axis {last}")
    return Grid(cells, rows, columns, caption)


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
