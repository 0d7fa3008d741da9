"""The app's charts, each in two forms: inline SVG (views/svg_axes.py; what the pages show by default, so a page
opens without plotly.js) and the plotly figure of views/plots.py (the "Interactive charts" of the sidebar). Both
forms show the same thing: title, axes and their titles, legend, colour scale."""
from __future__ import annotations

import base64
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from . import plots, styles
from .svg_axes import (
    Axis,
    Frame,
    Scale,
    Series,
    cells,
    index_axis,
    lines,
    numeric_axis,
    pool,
    thinned,
    value_scale,
)

MAX_LINE_POINTS = 1000  # a longer line is drawn by the min and max of equal slices
GROWTH = 1.25  # an inline chart is drawn up to this times its own size in a wide column


@dataclass(frozen=True)
class Chart:
    """A chart: its SVG text and its plotly figure, each made when asked for."""
    svg: Callable[[], str]
    figure: Callable[[], go.Figure]

    def html(self) -> str:
        """The SVG as an image (the app's HTML blocks keep HTML only: an image is how SVG gets through, and it
        runs and fetches nothing), as wide as its column up to GROWTH times its own width."""
        svg = self.svg()
        width = int(svg.split('width="', 1)[1].split('"', 1)[0])
        title = svg.split("<title>", 1)[1].split("</title>", 1)[0]  # escaped already
        data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        return (f'<img class="chart" alt="{html.escape(html.unescape(title), quote=True)}" '
                f'src="data:image/svg+xml;base64,{data}" style="width: 100%; max-width: {width * GROWTH:.0f}px">')


def colours(count: int) -> list[str]:
    """The colours of `count` successive series (plotly's, cycled)."""
    return [styles.SERIES_COLOURS[k % len(styles.SERIES_COLOURS)] for k in range(count)]


def line_svg(title: str, x: Axis, y: Axis, series: Sequence[Series], *, width: int = 480, height: int = 280) -> str:
    """Series on axes, with a legend when there are several."""
    legend = [(s.name, s.colour, s.dash) for s in series] if len(series) > 1 else []
    frame = Frame(title, x, y, width, height, legend)
    return frame.svg(lines(frame, series))


def heat_svg(z: np.ndarray, title: str, xtitle: str, ytitle: str, *, scale: Scale | None = None, top: bool = False,
             xs: Sequence[str] | None = None, ys: Sequence[str] | None = None, width: int = 480) -> str:
    """A [rows, columns] array as coloured cells with a colour bar: row 0 at the top when `top` (a matrix) else
    at the bottom; `xs`/`ys` label the columns/rows (default: their indices). A large array is drawn in blocks
    of its largest |value|."""
    z = np.asarray(z, np.float64)
    scale = scale or value_scale(z)
    drawn, pooled = pool(z)
    if pooled:
        xtitle += " · each cell the largest |value| of its block"
    x = Axis(xtitle, -0.5, z.shape[1] - 0.5, categories=xs, integer=True)
    y = Axis(ytitle, -0.5, z.shape[0] - 0.5, categories=ys, reversed=top, integer=True)
    frame = Frame(title, x, y, width, scale=scale)
    return frame.svg(cells(frame, drawn, scale, extent=z.shape))


def value_chart(value: Any, title: str = "") -> Chart | None:
    """plots.value_figure's chart: bars (short 1-D), a line (long 1-D), a heatmap (2-D; for rank ≥ 3 the first
    slice of the last two axes, on the scale of the first slices). None for scalars and non-numeric values."""
    array = plots.plottable(value)
    if array is None or array.ndim == 0:
        return None
    return Chart(lambda: _value_svg(array, title), lambda: _figure(plots.value_figure(value, title)))


def _figure(figure: go.Figure | None) -> go.Figure:
    assert figure is not None  # the chart exists only where the figure does
    return figure


def _value_svg(array: np.ndarray, title: str) -> str:
    if array.ndim == 1:
        short = array.size <= plots.MAX_BARS
        xs, ys = (np.arange(array.size, dtype=np.float64), array) if short else thinned(array, MAX_LINE_POINTS)
        fixed = (min(0.0, float(np.nanmin(ys))), max(0.0, float(np.nanmax(ys)))) \
            if short and np.isfinite(ys).any() else None
        y = numeric_axis(ys, "value", fixed=None if fixed is None or fixed[0] == fixed[1] else fixed)
        series = Series("value", xs, ys, colours(1)[0], bars=short, markers=False)
        return line_svg(title, index_axis(array.size, "index"), y, [series])
    if array.ndim == 2:
        return heat_svg(array, title, "axis 1", "axis 0", top=True)
    slices = array.reshape((-1,) + array.shape[-2:])
    count = min(len(slices), plots.MAX_SLICES)
    shown = slices[:count]
    finite = shown[np.isfinite(shown)]
    scale = Scale(styles.DIVERGING_STOPS, float(finite.min()), float(finite.max())) if finite.size else None
    lead = ", ".join("0" for _ in array.shape[:-2])
    return heat_svg(slices[0], f"{title} [{lead}, :, :] (the first of {len(slices)} slices: the interactive "
                    "charts slide over them)", f"axis {array.ndim - 1}", f"axis {array.ndim - 2}", scale=scale, top=True)


def series_chart(values: Sequence[Any], title: str = "", x: Sequence[Any] | None = None,
                 xtitle: str = "iteration") -> Chart | None:
    """plots.series_figure's chart: one value over steps (a line for scalars and sequence lengths, a heatmap step
    × element when each is small, else min/mean/max and L2 norm per step); None when it has none."""
    figure = plots.series_figure(values, title, x, xtitle)
    if figure is None:
        return None
    return Chart(lambda: _series_svg(values, title, x, xtitle), lambda: figure)


def _series_svg(values: Sequence[Any], title: str, x: Sequence[Any] | None, xtitle: str) -> str:
    if values and all(isinstance(v, list) for v in values):
        values, title = [np.array(len(v)) for v in values], f"{title} (sequence length)"
    arrays = [a for a in (plots.plottable(v) for v in values) if a is not None]
    labels = [str(v) for v in (range(len(arrays)) if x is None else x)]
    steps = Axis(xtitle, -0.5, len(labels) - 0.5, categories=labels)
    position = np.arange(len(arrays), dtype=np.float64)
    sizes = {a.size for a in arrays}
    if sizes == {1}:
        y = np.array([float(a.reshape(())) for a in arrays])
        return line_svg(title, steps, numeric_axis(y, "value"), [Series("value", position, y, colours(1)[0])])
    if len(sizes) == 1 and sizes.pop() <= plots.MAX_SIDE:
        z = np.stack([a.ravel() for a in arrays], axis=1)  # element × step
        return heat_svg(z, title, xtitle, "element (flattened)", xs=labels)
    stats = {label: np.array([float(reduce(a)) for a in arrays]) for label, reduce in
             (("min", np.nanmin), ("mean", np.nanmean), ("max", np.nanmax))}
    stats["L2 norm"] = np.array([float(np.linalg.norm(a.ravel())) for a in arrays])
    ink = colours(len(stats))
    series = [Series(name, position, y, ink[k], dash=name == "L2 norm", markers=False)
              for k, (name, y) in enumerate(stats.items())]
    return line_svg(title, steps, numeric_axis(np.concatenate(list(stats.values())), "value"), series)


def time_heatmap_chart(values: np.ndarray, title: str, bounds: tuple[float, float] | None = None, *,
                       xtitle: str = "time step", ytitle: str = "hidden unit",
                       rows: Sequence[str] | None = None, width: int = 480) -> Chart:
    """plots.time_heatmap's chart: a [time, unit] array, time across and units down, on the scale of the
    activation's `bounds` when given; `rows` names the units (e.g. caches); `width`: the SVG's (a narrow column's
    chart drawn narrower keeps its text as large)."""
    values = np.asarray(values, np.float64)
    scale = None if bounds is None else value_scale(values, bounds)

    def figure() -> go.Figure:
        drawn = plots.time_heatmap(values, title, bounds)
        if (xtitle, ytitle) != ("time step", "hidden unit"):
            drawn.update_xaxes(title=xtitle)
            drawn.update_yaxes(title=ytitle)
        if rows is not None:
            drawn.update_yaxes(tickvals=list(range(len(rows))), ticktext=list(rows))
        return drawn

    return Chart(lambda: heat_svg(values.T, title, xtitle, ytitle, scale=scale, ys=rows, width=width), figure)


def lines_chart(series: dict[str, np.ndarray], title: str, xtitle: str = "time step", ytitle: str = "value",
                yrange: tuple[float, float] | None = None, *, log: bool = False) -> Chart:
    """plots.lines_figure's chart: one line per named 1-D series over a shared step axis (`log`: a log y axis)."""
    def svg() -> str:
        count = max((len(y) for y in series.values()), default=1)
        ys = [np.asarray(y, np.float64) for y in series.values()]
        y = numeric_axis(np.concatenate(ys) if ys else np.zeros(0), ytitle, log=log, fixed=yrange)
        drawn = [Series(name, np.arange(len(v), dtype=np.float64), v, ink)
                 for (name, v), ink in zip(zip(series, ys), colours(len(ys)))]
        return line_svg(title, index_axis(count, xtitle), y, drawn)

    def figure() -> go.Figure:
        drawn = plots.lines_figure(series, title, xtitle, ytitle, yrange)
        return drawn.update_yaxes(type="log") if log else drawn

    return Chart(svg, figure)


def saturation_chart(sides: dict[str, tuple[np.ndarray, np.ndarray]], title: str) -> Chart:
    """plots.saturation_figure's chart: per unit and gate, the fraction of time left (x) and right (y) saturated."""
    def svg() -> str:
        ink = colours(len(sides))
        drawn = [Series(gate, np.asarray(left, np.float64), np.asarray(right, np.float64), ink[k], lines=False)
                 for k, (gate, (left, right)) in enumerate(sides.items())]
        x = numeric_axis(np.zeros(0), "fraction of time left saturated (< 0.1)", fixed=(-0.02, 1.02))
        y = numeric_axis(np.zeros(0), "fraction of time right saturated (> 0.9)", fixed=(-0.02, 1.02))
        return line_svg(title, x, y, drawn)

    return Chart(svg, lambda: plots.saturation_figure(sides, title))
