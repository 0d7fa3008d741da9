"""Trace values as plotly figures: one tensor (heatmap for 2-D, bars/line for 1-D, slices for higher rank),
loop-carried values across iterations, and recurrent gates over time."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from . import styles
from .markup import plot_text

MAX_SIDE = 256  # heatmap rows/columns drawn; bigger tensors show their leading corner
MAX_SLICES = 64
MAX_BARS = 64
HEIGHT = 320


def plottable(value: Any) -> np.ndarray | None:
    """A real float array to draw, or None (strings, summaries, sequences, empty tensors)."""
    if not isinstance(value, np.ndarray) or value.size == 0:
        return None
    if value.dtype.kind == "c":
        return np.abs(value).astype(np.float64)
    if value.dtype.kind in "biuf":
        return value.astype(np.float64)
    if value.dtype.kind == "V":  # ml_dtypes (bfloat16, float8, int4...)
        try:
            return value.astype(np.float32).astype(np.float64)
        except (TypeError, ValueError):
            return None
    return None


def _layout(fig: go.Figure, title: str, xtitle: str = "", ytitle: str = "") -> go.Figure:
    fig.update_layout(title=plot_text(title), height=HEIGHT, margin={"l": 40, "r": 10, "t": 40, "b": 30},
                      xaxis_title=xtitle, yaxis_title=ytitle)
    return fig


def _index_ticks(count: int) -> dict[str, Any]:
    """Axis settings for `count` rows or columns of a tensor: whole-number ticks (not 0.5 steps)."""
    return {"tick0": 0, "dtick": 1 if count <= 12 else max(1, round(count / 8))}


def _matrix_axes(fig: go.Figure, rows: int, columns: int) -> go.Figure:
    """Row 0 at the top, as in the value's table; whole-number ticks."""
    fig.update_yaxes(autorange="reversed", **_index_ticks(rows))
    fig.update_xaxes(**_index_ticks(columns))
    return fig


def _heatmap(z: np.ndarray, **kwargs: Any) -> go.Heatmap:
    return go.Heatmap(z=z[:MAX_SIDE, :MAX_SIDE], colorscale=styles.DIVERGING_SCALE, zmid=0 if np.nanmin(z) < 0 < np.nanmax(z)
                      else None, **kwargs)


def value_figure(value: Any, title: str = "") -> go.Figure | None:
    """A figure for one value: heatmap (2-D), bars (short 1-D) or a line (long 1-D), and for rank ≥ 3 a heatmap
    of the last two axes with a slider over the leading indices. None for scalars and non-numeric values."""
    array = plottable(value)
    if array is None or array.ndim == 0:
        return None
    if array.ndim == 1:
        x = np.arange(array.size)
        trace = go.Bar(x=x, y=array) if array.size <= MAX_BARS else go.Scatter(x=x, y=array, mode="lines")
        return _layout(go.Figure(trace), title, "index", "value")
    if array.ndim == 2:
        fig = _matrix_axes(go.Figure(_heatmap(array)), *np.minimum(array.shape, MAX_SIDE))
        return _layout(fig, title, "axis 1", "axis 0")
    return _sliced(array, title)


def _sliced(array: np.ndarray, title: str) -> go.Figure:
    lead = array.shape[:-2]
    slices = array.reshape((-1,) + array.shape[-2:])
    count = min(len(slices), MAX_SLICES)
    labels = ["(" + ", ".join(str(int(k)) for k in np.unravel_index(i, lead)) + ")" for i in range(count)]
    fig = go.Figure(_heatmap(slices[0]))
    lo, hi = float(np.nanmin(slices[:count])), float(np.nanmax(slices[:count]))
    fig.update_traces(zmin=lo, zmax=hi, zmid=None)  # one colour scale across slices
    steps = [{"method": "restyle", "label": labels[i], "args": [{"z": [slices[i][:MAX_SIDE, :MAX_SIDE]]}]}
             for i in range(count)]
    prefix = "[" + ", ".join(f"i{k}" for k in range(len(lead))) + ", :, :] at "
    fig.update_layout(sliders=[{"active": 0, "currentvalue": {"prefix": prefix}, "steps": steps, "pad": {"t": 30}}])
    shown = f" (first {count} of {len(slices)} slices)" if count < len(slices) else ""
    _matrix_axes(fig, *np.minimum(array.shape[-2:], MAX_SIDE))
    return _layout(fig, f"{title}{shown}", f"axis {array.ndim - 1}", f"axis {array.ndim - 2}")


def series_figure(values: Sequence[Any], title: str = "", x: Sequence[Any] | None = None,
                  xtitle: str = "iteration") -> go.Figure | None:
    """How one value evolves over a sequence of steps (e.g. a loop-carried value across iterations): a line for
    scalars (and for the length of sequences), a heatmap step × element when each value is small, else
    min/mean/max and L2 norm per step. `x` labels the steps (shown as categories, e.g. ["init", "0", "1"])."""
    if values and all(isinstance(v, list) for v in values):  # sequences: how long they are at each step
        values, title = [np.array(len(v)) for v in values], f"{title} (sequence length)"
    found = [plottable(v) for v in values]
    arrays = [a for a in found if a is not None]
    if not arrays or len(arrays) != len(found):
        return None
    x = [str(v) for v in (range(len(arrays)) if x is None else x)]
    sizes = {a.size for a in arrays}
    if sizes == {1}:
        fig = go.Figure(go.Scatter(x=x, y=[float(a.reshape(())) for a in arrays], mode="lines+markers"))
    elif len(sizes) == 1 and sizes.pop() <= MAX_SIDE:
        z = np.stack([a.ravel() for a in arrays], axis=1)  # element × step
        fig = go.Figure(_heatmap(z, x=x))
        fig.update_yaxes(title="element (flattened)", **_index_ticks(z.shape[0]))
    else:
        fig = go.Figure()
        for label, reduce in (("min", np.nanmin), ("mean", np.nanmean), ("max", np.nanmax)):
            fig.add_trace(go.Scatter(x=x, y=[float(reduce(a)) for a in arrays], mode="lines", name=label))
        fig.add_trace(go.Scatter(x=x, y=[float(np.linalg.norm(a.ravel())) for a in arrays], mode="lines",
                                 name="L2 norm", line={"dash": "dot"}))
    fig.update_xaxes(type="category")
    return _layout(fig, title, xtitle, fig.layout.yaxis.title.text or "value")


def time_heatmap(values: np.ndarray, title: str, bounds: tuple[float, float] | None = None) -> go.Figure:
    """A [time, unit] array as a heatmap with time across and units down (NaN steps are left blank). With the
    `bounds` of the activation that produced it, the colour scale spans exactly that range (saturated units
    show at either end): sequential for [0, 1], diverging around 0 for a symmetric range."""
    values = np.asarray(values, dtype=np.float64)
    fig = go.Figure(_heatmap(values.T, x=np.arange(values.shape[0])))
    if bounds is not None:
        low, high = bounds
        symmetric = low == -high
        fig.update_traces(zmin=low, zmax=high, zmid=0 if symmetric else None,
                          colorscale=styles.DIVERGING_SCALE if symmetric else styles.SEQUENTIAL_SCALE)
    fig.update_xaxes(**_index_ticks(values.shape[0]))
    return _layout(fig, title, "time step", "hidden unit")


def lines_figure(series: dict[str, np.ndarray], title: str, xtitle: str = "time step", ytitle: str = "value",
                 yrange: tuple[float, float] | None = None) -> go.Figure:
    """One line per named 1-D series over a shared step axis."""
    fig = go.Figure([go.Scatter(x=np.arange(len(y)), y=np.asarray(y, dtype=np.float64), mode="lines+markers",
                                name=name) for name, y in series.items()])
    if yrange is not None:
        fig.update_yaxes(range=list(yrange))
    fig.update_xaxes(**_index_ticks(max((len(y) for y in series.values()), default=1)))
    return _layout(fig, title, xtitle, ytitle)


def saturation_figure(sides: dict[str, tuple[np.ndarray, np.ndarray]], title: str) -> go.Figure:
    """One point per unit and gate: the fraction of time left saturated (x) against right saturated (y)."""
    fig = go.Figure([go.Scatter(x=left, y=right, mode="markers", name=gate, text=[f"unit {u}" for u in range(len(left))],
                                hovertemplate="%{text}: left %{x:.2f}, right %{y:.2f}")
                     for gate, (left, right) in sides.items()])
    fig.update_xaxes(range=[-0.02, 1.02])
    fig.update_yaxes(range=[-0.02, 1.02])
    return _layout(fig, title, "fraction of time left saturated (< 0.1)", "fraction of time right saturated (> 0.9)")
