"""A sweep's rows as the Sweep page shows them: a table worst first, the rows to open, and the error against
each swept dim (one line per seed and size of the other swept dims)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..sweep.rows import counts, verdict_of, where, worst_first
from .charts import Chart, colours, line_svg
from .compare import FLOOR
from .markup import plot_text
from .svg_axes import Series, numeric_axis

Row = dict[str, Any]


def table_rows(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """The rows worst first, as table rows."""
    return [{"input": r["input"], "verdict": verdict_of(r), "max abs": r["max_abs"], "max rel": r["max_rel"],
             "first divergence": where(r["first_divergence"]), "first NaN/Inf": where(r["first_nonfinite"]),
             "seconds": round(r["seconds"], 3), "message": r["message"]} for r in worst_first(rows)]


def counts_line(rows: Sequence[Row], total: int) -> str:
    """How many inputs are done and how they came out."""
    found = counts(rows)
    return (f"{len(rows)} of {total} inputs: **{found['differs']} differ**, {found['agrees']} agree, "
            f"{found['error']} error, {found['limit']} stopped at a limit")


def row_choices(rows: Sequence[Row]) -> dict[int, str]:
    """Row index -> its label, worst first (the rows a user may open)."""
    def label(r: Row) -> str:
        error = "" if r["max_abs"] is None else f" · max abs {r['max_abs']:.3g}"
        return f"{r['input']} · {verdict_of(r)}{error}"

    return {r["index"]: label(r) for r in worst_first(rows)}


def swept_dims(rows: Sequence[Row]) -> list[str]:
    """The dims whose size differs between rows, in the order the rows name them."""
    sizes: dict[str, set[int]] = {}
    for row in rows:
        for name, size in row["dims"].items():
            sizes.setdefault(name, set()).add(size)
    return [name for name, found in sizes.items() if len(found) > 1]


def _error_series(rows: Sequence[Row], dim: str) -> list[tuple[str, list[tuple[int, float, str]]]]:
    """(name, points (size, error, input) by size) per line of `error_figure`, in its order."""
    others = [d for d in swept_dims(rows) if d != dim]
    series: dict[str, list[tuple[int, float, str]]] = {}
    for row in rows:
        error = row["max_abs"]
        if dim not in row["dims"] or error is None or not math.isfinite(error):
            continue
        name = ", ".join([f"seed {row['seed']}" if row["seed"] is not None else "files",
                          *(f"{d}={row['dims'][d]}" for d in others if d in row["dims"])])
        series.setdefault(name, []).append((row["dims"][dim], max(error, FLOOR), row["input"]))
    return [(name, sorted(points)) for name, points in
            sorted(series.items(), key=lambda item: (item[0].startswith("files"), item[0]))]


def error_figure(rows: Sequence[Row], dim: str) -> go.Figure:
    """The largest error over the outputs against `dim`'s size, one line per seed and size of every other swept
    dim (so no line joins points across another dim; inputs read from files: one series of points); rows without a
    finite error (errors, limits) are left out."""
    figure = go.Figure()
    for name, points in _error_series(rows, dim):
        figure.add_trace(go.Scatter(x=[p[0] for p in points], y=[p[1] for p in points], text=[p[2] for p in points],
                                    mode="markers" if name.startswith("files") else "lines+markers", name=name,
                                    hovertemplate="%{text}: max abs %{y:.3g}<extra></extra>"))
    figure.update_xaxes(title=plot_text(dim))
    figure.update_yaxes(type="log", title="max abs error (outputs)")
    figure.update_layout(title=plot_text(f"error against {dim}"), height=340, margin={"t": 40, "b": 40})
    return figure


def error_chart(rows: Sequence[Row], dim: str) -> Chart:
    """error_figure's chart (inline SVG or plotly)."""
    def svg() -> str:
        lines = _error_series(rows, dim)
        ink = colours(len(lines))
        series = [Series(name, np.array([p[0] for p in points], np.float64), np.array([p[1] for p in points]),
                         ink[k], lines=not name.startswith("files")) for k, (name, points) in enumerate(lines)]
        xs = np.concatenate([s.x for s in series]) if series else np.zeros(0)
        ys = np.concatenate([s.y for s in series]) if series else np.zeros(0)
        return line_svg(f"error against {dim}", numeric_axis(xs, dim, integer=True),
                        numeric_axis(ys, "max abs error (outputs)", log=True), series, width=640, height=300)

    return Chart(svg, lambda: error_figure(rows, dim))
