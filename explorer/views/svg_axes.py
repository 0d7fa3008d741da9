"""Charts on axes as inline SVG text (no script, no image): a frame with its title, ticks, axis titles, legend and
colour bar, and what it holds (lines, markers, bars, coloured cells). The app's charts (views/charts.py) are
drawn with it so a page opens without plotly.js. Every text passes through html.escape."""
from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from . import styles

FONT = 'font-family="sans-serif" font-size="11"'
LEVELS = 48  # colours a heatmap is drawn with: cells of one colour are one path
MAX_CELLS = 128  # per heatmap axis: a larger one is drawn by the value of largest magnitude in equal slices
MAX_MARKERS = 80  # points of a series beyond which its line is drawn without markers
INK = styles.CHART_COLOURS


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def number(x: float) -> str:
    """A tick label: short, without a trailing `.0`."""
    if x == 0:
        return "0"
    text = f"{x:.4g}" if 1e-3 <= abs(x) < 1e5 else f"{x:.3g}"
    return text.replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")


@dataclass
class Axis:
    """One axis: numeric between lo and hi (log10 when `log`), or categories at 0..n-1; `reversed` puts lo at the
    top of a vertical axis."""
    title: str = ""
    lo: float = 0.0
    hi: float = 1.0
    log: bool = False
    categories: Sequence[str] | None = None
    reversed: bool = False
    integer: bool = False  # ticks on whole numbers only

    def ticks(self) -> list[tuple[float, str]]:
        if self.categories is not None:
            every = max(1, math.ceil(len(self.categories) / 10))
            return [(float(i), str(c)) for i, c in enumerate(self.categories) if i % every == 0]
        if self.log:
            low, high = math.floor(self.lo), math.ceil(self.hi)
            every = max(1, math.ceil((high - low) / 6))
            return [(float(e), number(10.0 ** e)) for e in range(low, high + 1, every) if self.lo <= e <= self.hi]
        span = self.hi - self.lo
        raw = span / 5 if span > 0 else 1.0
        magnitude = 10 ** math.floor(math.log10(raw))
        step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if span / (m * magnitude) <= 5)
        if self.integer:
            step = max(1.0, round(step))
        first = math.ceil(self.lo / step - 1e-9) * step
        count = int((self.hi - first) / step + 1e-9) + 1
        return [(first + k * step, number(round(first + k * step, 12))) for k in range(max(count, 0))]


def numeric_axis(values: np.ndarray, title: str = "", *, log: bool = False, pad: float = 0.05,
                 fixed: tuple[float, float] | None = None, integer: bool = False) -> Axis:
    """An axis spanning the finite (positive, when `log`) `values`, padded by `pad` of the span."""
    if fixed is not None:
        lo, hi = fixed
        return Axis(title, math.log10(lo) if log else lo, math.log10(hi) if log else hi, log, integer=integer)
    v = np.asarray(values, np.float64).ravel()
    v = v[np.isfinite(v) & (v > 0)] if log else v[np.isfinite(v)]
    if log:
        v = np.log10(v)
    lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
    if hi <= lo:
        lo, hi = lo - (0.5 if log or lo == 0 else abs(lo) * 0.1), hi + (0.5 if log or hi == 0 else abs(hi) * 0.1)
    margin = (hi - lo) * pad
    return Axis(title, lo - margin, hi + margin, log, integer=integer)


def index_axis(count: int, title: str, *, reversed: bool = False) -> Axis:
    """Whole-number positions 0..count-1 (rows, columns, steps), each a half cell wide at the ends."""
    return Axis(title, -0.5, count - 0.5, reversed=reversed, integer=True)


def colour(stops: Sequence[str], share: float) -> str:
    """The colour at `share` (0..1) along a scale's stops, as #rrggbb."""
    share = min(1.0, max(0.0, share)) if math.isfinite(share) else 0.0
    position = share * (len(stops) - 1)
    low = min(int(position), len(stops) - 2)
    t = position - low
    a, b = (tuple(int(stops[i][k:k + 2], 16) for k in (1, 3, 5)) for i in (low, low + 1))
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(a, b))


@dataclass
class Scale:
    """A colour scale: its stops and the values at its ends."""
    stops: Sequence[str]
    lo: float
    hi: float

    def share(self, z: np.ndarray) -> np.ndarray:
        return (z - self.lo) / (self.hi - self.lo if self.hi > self.lo else 1.0)


def value_scale(z: np.ndarray, bounds: tuple[float, float] | None = None) -> Scale:
    """The scale plotly gives these values in the app's figures: within `bounds` (diverging when symmetric, else
    sequential), or diverging around 0 when the values cross it (centred), else across their range."""
    if bounds is not None:
        low, high = bounds
        return Scale(styles.DIVERGING_STOPS if low == -high else styles.SEQUENTIAL_STOPS, low, high)
    finite = z[np.isfinite(z)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if lo < 0 < hi:
        reach = max(-lo, hi)
        return Scale(styles.DIVERGING_STOPS, -reach, reach)
    return Scale(styles.DIVERGING_STOPS, lo, hi)


def pool(z: np.ndarray, limit: int = MAX_CELLS) -> tuple[np.ndarray, bool]:
    """A 2-D array shrunk to at most `limit` per axis, each cell the value of largest magnitude in its slice; and
    whether it was."""
    pooled = False
    for axis in (0, 1):
        n = z.shape[axis]
        if n > limit:
            edges = np.linspace(0, n, limit + 1).astype(int)
            picked = []
            for lo, hi in zip(edges[:-1], edges[1:]):
                part = np.take(z, range(lo, hi), axis=axis)
                magnitude = np.where(np.isfinite(part), np.abs(part), -1.0)
                picked.append(np.take_along_axis(part, np.expand_dims(magnitude.argmax(axis=axis), axis), axis))
            z, pooled = np.concatenate(picked, axis=axis), True
    return z, pooled


def thinned(y: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of a series kept to `limit` points by each slice's finite min and max, so a spike stays visible."""
    n = y.size
    if n <= limit:
        return np.arange(n, dtype=np.float64), y
    edges = np.linspace(0, n, limit // 2 + 1).astype(int)
    xs, ys = [], []
    for lo, hi in zip(edges[:-1], edges[1:]):
        part = y[lo:hi]
        finite = part[np.isfinite(part)]
        xs += [lo, hi - 1]
        ys += [finite.min(), finite.max()] if finite.size else [np.nan, np.nan]
    return np.asarray(xs, np.float64), np.asarray(ys, np.float64)


@dataclass
class Series:
    """One line (and its markers) or set of bars, in data coordinates; NaN breaks a line."""
    name: str
    x: np.ndarray
    y: np.ndarray
    colour: str
    dash: bool = False
    lines: bool = True
    markers: bool = True
    bars: bool = False


@dataclass
class Frame:
    """A chart's geometry: the plot area inside margins for the title, the legend, the ticks and a colour bar."""
    title: str
    x: Axis
    y: Axis
    width: int = 480
    height: int = 280
    legend: list[tuple[str, str, bool]] = field(default_factory=list)  # name, colour, dashed
    scale: Scale | None = None
    left: int = 58
    top: int = 30

    def __post_init__(self) -> None:
        self.top += 16 * self._legend_rows()
        self.right = self.width - (74 if self.scale is not None else 14)
        self.bottom = self.height - 40

    def _legend_rows(self) -> int:
        rows, used = (1 if self.legend else 0), 0.0
        for name, _, _ in self.legend:
            wide = 26 + 6.5 * len(name)
            if used and used + wide > self.width - self.left:
                rows, used = rows + 1, 0
            used += wide
        return rows

    def px(self, v: np.ndarray) -> np.ndarray:
        v = np.log10(np.where(v > 0, v, np.nan)) if self.x.log else np.asarray(v, np.float64)
        return self.left + (v - self.x.lo) / (self.x.hi - self.x.lo) * (self.right - self.left)

    def py(self, v: np.ndarray) -> np.ndarray:
        v = np.log10(np.where(v > 0, v, np.nan)) if self.y.log else np.asarray(v, np.float64)
        share = (v - self.y.lo) / (self.y.hi - self.y.lo)
        return self.top + share * (self.bottom - self.top) if self.y.reversed \
            else self.bottom - share * (self.bottom - self.top)

    def svg(self, body: Sequence[str]) -> str:
        """The whole chart around `body` (drawn in this frame's pixels)."""
        w, h = self.width, self.height
        limit = max(20, int((w - 8) / 7))
        title = self.title if len(self.title) <= limit else self.title[:limit - 1] + "…"
        parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" '
                 f'height="{h}" role="img" {FONT} fill="{INK["text"]}">',
                 f"<title>{esc(self.title)}</title>",
                 f'<rect width="{w}" height="{h}" fill="{INK["background"]}"/>',
                 f'<text x="8" y="18" font-size="13" font-weight="600">{esc(title)}</text>']
        parts += self._grid()
        parts += body
        parts.append(f'<rect x="{self.left}" y="{self.top}" width="{self.right - self.left}" '
                     f'height="{self.bottom - self.top}" fill="none" stroke="{INK["axis"]}"/>')
        parts += self._legend_svg() + self._scale_svg()
        mid = (self.left + self.right) / 2
        parts.append(f'<text x="{mid:.0f}" y="{h - 6}" text-anchor="middle">{esc(self.x.title)}</text>')
        ymid = (self.top + self.bottom) / 2
        parts.append(f'<text transform="translate(12 {ymid:.0f}) rotate(-90)" text-anchor="middle">'
                     f"{esc(self.y.title)}</text>")
        parts.append("</svg>")
        return "".join(parts)

    def _grid(self) -> list[str]:
        parts = []
        for value, label in self.x.ticks():
            x = float(self.px(np.array(10.0 ** value if self.x.log else value)))
            parts.append(f'<line x1="{x:.1f}" y1="{self.top}" x2="{x:.1f}" y2="{self.bottom}" stroke="{INK["grid"]}"/>'
                         f'<text x="{x:.1f}" y="{self.bottom + 14}" text-anchor="middle" fill="{INK["muted"]}">'
                         f"{esc(label)}</text>")
        for value, label in self.y.ticks():
            y = float(self.py(np.array(10.0 ** value if self.y.log else value)))
            parts.append(f'<line x1="{self.left}" y1="{y:.1f}" x2="{self.right}" y2="{y:.1f}" stroke="{INK["grid"]}"/>'
                         f'<text x="{self.left - 4}" y="{y + 4:.1f}" text-anchor="end" fill="{INK["muted"]}">'
                         f"{esc(label)}</text>")
        return parts

    def _legend_svg(self) -> list[str]:
        parts, x, y = [], float(self.left), 34.0
        for name, ink, dashed in self.legend:
            wide = 26 + 6.5 * len(name)
            if x > self.left and x + wide > self.width:
                x, y = float(self.left), y + 16
            dash = ' stroke-dasharray="3 2"' if dashed else ""
            parts.append(f'<line x1="{x:.0f}" y1="{y - 4:.0f}" x2="{x + 16:.0f}" y2="{y - 4:.0f}" stroke="{ink}" '
                         f'stroke-width="2"{dash}/><text x="{x + 20:.0f}" y="{y:.0f}">{esc(name)}</text>')
            x += wide
        return parts

    def _scale_svg(self) -> list[str]:
        if self.scale is None:
            return []
        steps, x, top, bottom = 40, self.right + 14, self.top, self.bottom
        tall = (bottom - top) / steps
        parts = [f'<rect x="{x}" y="{bottom - (k + 1) * tall:.1f}" width="14" height="{tall + 0.5:.1f}" '
                 f'fill="{colour(self.scale.stops, (k + 0.5) / steps)}"/>' for k in range(steps)]
        lo, hi = self.scale.lo, self.scale.hi
        for value in (lo, (lo + hi) / 2, hi):
            y = bottom - (value - lo) / (hi - lo if hi > lo else 1.0) * (bottom - top)
            parts.append(f'<text x="{x + 18}" y="{y + 4:.1f}" fill="{INK["muted"]}">{esc(number(value))}</text>')
        return parts


def lines(frame: Frame, series: Sequence[Series]) -> list[str]:
    """Each series as a line broken at NaN (and markers, or bars from 0), in `frame`."""
    parts = []
    for s in series:
        xs, ys = frame.px(s.x), frame.py(s.y)
        keep = np.isfinite(xs) & np.isfinite(ys)
        if s.bars:
            base = float(frame.py(np.array(0.0)))
            base = min(max(base, frame.top), frame.bottom)
            wide = max(1.0, 0.8 * (frame.right - frame.left) / max(len(xs), 1))
            parts += [f'<rect x="{x - wide / 2:.1f}" y="{min(y, base):.1f}" width="{wide:.1f}" '
                      f'height="{abs(base - y):.1f}" fill="{s.colour}"/>' for x, y in zip(xs[keep], ys[keep])]
            continue
        if s.lines:
            dash = ' stroke-dasharray="5 3"' if s.dash else ""
            runs = np.split(np.arange(len(xs)), np.flatnonzero(~keep))
            for run in runs:
                run = run[keep[run]]
                if len(run) > 1:
                    points = " ".join(f"{xs[i]:.1f},{ys[i]:.1f}" for i in run)
                    parts.append(f'<polyline points="{points}" fill="none" stroke="{s.colour}" '
                                 f'stroke-width="1.6"{dash}/>')
        if s.markers and (not s.lines or keep.sum() <= MAX_MARKERS):
            parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{2.5 if s.lines else 3.5}" fill="{s.colour}"/>'
                      for x, y in zip(xs[keep], ys[keep])]
    return parts


def cells(frame: Frame, z: np.ndarray, scale: Scale, extent: tuple[int, int] | None = None) -> list[str]:
    """A [rows, columns] array as cells centred on whole-number positions of `frame`'s axes (column c at x = c,
    row r at y = r; a pooled array spread over the `extent` (rows, columns) it was pooled from), one path per
    colour level; NaN cells are left blank."""
    rows, columns = z.shape
    tall, wide = extent or z.shape
    x0, x1 = (float(v) for v in frame.px(np.array([-0.5, wide - 0.5])))
    y0, y1 = (float(v) for v in frame.py(np.array([-0.5, tall - 0.5])))
    top = min(y0, y1)
    flip = y0 > y1  # row 0 at the bottom
    level = np.full(z.shape, -1)
    finite = np.isfinite(z)
    level[finite] = np.rint(np.clip(scale.share(z[finite]), 0, 1) * (LEVELS - 1)).astype(int)
    paths: dict[int, list[str]] = {}
    for r in range(rows):
        g = rows - 1 - r if flip else r
        c = 0
        while c < columns:
            k = level[r, c]
            end = c + 1
            while end < columns and level[r, end] == k:
                end += 1
            if k >= 0:
                paths.setdefault(int(k), []).append(f"M{c} {g}h{end - c}v1h{c - end}z")
            c = end
    sx, sy = (x1 - x0) / columns, abs(y1 - y0) / rows
    parts = [f'<g transform="translate({x0:.2f} {top:.2f}) scale({sx:.4f} {sy:.4f})" shape-rendering="crispEdges">']
    parts += [f'<path d="{"".join(d)}" fill="{colour(scale.stops, k / (LEVELS - 1))}"/>' for k, d in sorted(paths.items())]
    parts.append("</g>")
    return parts
