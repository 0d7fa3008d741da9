"""Small plots as inline SVG text, for pages that must open with nothing else: lines over an index (a tensor
flattened, both sides and their difference) and heatmaps (a gate over time steps and units). Every label passes
through html.escape; numbers are drawn to a few digits."""
from __future__ import annotations

import html
import math
from collections.abc import Mapping

import numpy as np

from . import styles
from .svg_axes import colour as svg_colour
from .svg_axes import pool, thinned

WIDTH, HEIGHT, PAD = 560, 180, 34
MAX_POINTS = 600  # a longer series is drawn by the min and max of equal slices
MAX_CELLS = 96  # per heatmap axis: a larger one is drawn by the max |value| of equal slices


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def line_plot(series: Mapping[str, np.ndarray], title: str, colours: Mapping[str, str] | None = None) -> str:
    """Each series (flattened) over its element index, on one pair of axes; NaN and Inf are left out."""
    colours = colours or {}
    cleaned = {name: np.asarray(v, np.float64).ravel() for name, v in series.items()}
    finite = [v[np.isfinite(v)] for v in cleaned.values()]
    finite = [f for f in finite if f.size]
    lo = min((float(f.min()) for f in finite), default=0.0)
    hi = max((float(f.max()) for f in finite), default=1.0)
    if hi <= lo:
        lo, hi = lo - 1.0, hi + 1.0
    count = max((v.size for v in cleaned.values()), default=1)
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    parts = [f'<svg class="plot" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" xmlns="http://www.w3.org/2000/svg">',
             f"<title>{html.escape(title)}</title>",
             f'<text x="{PAD}" y="16" class="plot-title">{html.escape(title)}</text>',
             f'<rect x="{PAD}" y="{PAD}" width="{inner_w}" height="{inner_h}" class="plot-frame"/>',
             f'<text x="2" y="{PAD + 8}" class="plot-tick">{_fmt(hi)}</text>',
             f'<text x="2" y="{HEIGHT - PAD}" class="plot-tick">{_fmt(lo)}</text>',
             f'<text x="{WIDTH - PAD}" y="{HEIGHT - PAD + 14}" class="plot-tick" text-anchor="end">{count - 1}</text>']
    legend_x = PAD
    for name, values in cleaned.items():
        xs, ys = thinned(values, MAX_POINTS)
        keep = np.isfinite(ys)
        px = PAD + xs[keep] / max(count - 1, 1) * inner_w
        py = PAD + (hi - ys[keep]) / (hi - lo) * inner_h
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(px, py))
        colour = colours.get(name, styles.REPORT_COLOURS["text"])
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.2"/>')
        parts.append(f'<text x="{legend_x}" y="{HEIGHT - 6}" fill="{colour}" class="plot-tick">'
                     f"{html.escape(name)}</text>")
        legend_x += 12 + 7 * len(name)
    parts.append("</svg>")
    return "".join(parts)


def heatmap(z: np.ndarray, title: str, *, bounds: tuple[float, float] | None = None,
            row_label: str = "time step", column_label: str = "unit", marked_row: int | None = None,
            css_class: str = "heatmap") -> str:
    """A 2-D array as coloured cells (rows down, columns across) on the heat scale between `bounds` (default: its
    finite min and max); `marked_row` (a departing step) is outlined."""
    z = np.asarray(z, np.float64)
    if z.ndim != 2:
        z = z.reshape(z.shape[0] if z.ndim else 1, -1)
    rows_all = z.shape[0]
    z = pool(z, MAX_CELLS)[0]
    finite = z[np.isfinite(z)]
    lo, hi = bounds if bounds is not None else (float(finite.min()) if finite.size else 0.0,
                                                float(finite.max()) if finite.size else 1.0)
    span = hi - lo if hi > lo else 1.0
    rows, columns = z.shape
    cell_w = max(3.0, min(16.0, (WIDTH - 2 * PAD) / max(columns, 1)))
    cell_h = max(3.0, min(16.0, 260 / max(rows, 1)))
    width = max(PAD + columns * cell_w + 8, 7.0 * max(len(title), 40))  # room for the title and the scale line
    height = PAD + rows * cell_h + 24
    parts = [f'<svg class="{css_class}" width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" xmlns="http://www.w3.org/2000/svg">',
             f"<title>{html.escape(title)}</title>",
             f'<text x="2" y="14" class="plot-title">{html.escape(title)}</text>',
             f'<text x="2" y="{height - 6:.0f}" class="plot-tick">{html.escape(row_label)} ↓ · '
             f"{html.escape(column_label)} → · {_fmt(lo)} … {_fmt(hi)}</text>"]
    for r in range(rows):
        for c in range(columns):
            value = z[r, c]
            colour = svg_colour(styles.HEAT_SCALE, (value - lo) / span) if math.isfinite(value) \
                else styles.REPORT_COLOURS["muted"]
            parts.append(f'<rect x="{PAD + c * cell_w:.1f}" y="{PAD - 10 + r * cell_h:.1f}" width="{cell_w:.1f}" '
                         f'height="{cell_h:.1f}" fill="{colour}"/>')
    if marked_row is not None and rows_all:
        r = marked_row * rows / rows_all
        parts.append(f'<rect class="marked-step" x="{PAD - 2}" y="{PAD - 10 + math.floor(r) * cell_h - 1:.1f}" '
                     f'width="{columns * cell_w + 4:.1f}" height="{cell_h + 2:.1f}" fill="none" '
                     f'stroke="{styles.REPORT_COLOURS["departing"]}" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)
