"""What a step's node read and wrote as one static HTML block: each value's statistics line and, when asked, its
table (NaN and Inf spelt out, the axes of rank >= 3 tables named, each cell's full precision in its tooltip).
The Step page shows a step's values in one element, which the browser replaces at each step far faster than
an interactive data grid per value."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from html import escape
from typing import Any

import numpy as np

from .names import shortened
from .styles import TONE_HEX, scrolled_table_css
from .tables import grid_items, short_text, value_grid, value_stats

STYLE = f"""<style>
.xv h5 {{ margin: 0.6rem 0 0.2rem; font-size: 1rem; }}
.xv p {{ margin: 0.2rem 0; }}
.xv .none, .xv .caption {{ color: {TONE_HEX["quiet"]}; font-size: 0.85rem; margin: 0.1rem 0 0.4rem; }}
.xv code {{ font-size: 0.85em; }}
{scrolled_table_css("xv", 250)}.xv table {{ font-size: 0.8rem; font-variant-numeric: tabular-nums; }}
.xv th, .xv td {{ text-align: right; white-space: nowrap; }}
.xv tbody th {{ position: sticky; left: 0; }}
.xv .part {{ white-space: nowrap; }}
</style>"""


def _tinted(text: str, tone: str) -> str:
    return f'<span class="part" style="color: {TONE_HEX[tone]}">{text}</span>'


def stats_line(name: str, value: Any, shown: str | None = None) -> str:
    """The value's name (`shown` in its place, the name on hover), type (and a scalar's value), min/max/mean and
    its NaN/Inf counts, as HTML."""
    stats = value_stats(value)
    scalar = isinstance(value, np.ndarray) and value.ndim == 0
    label = f'<b title="{escape(name)}">{escape(shown)}</b>' if shown and shown != name else f"<b>{escape(name)}</b>"
    parts = [label,
             f"<code>{escape(stats['type'])}</code>" + (f" = <code>{escape(short_text(value))}</code>" if scalar else "")]
    if not scalar and stats["min"] is not None:
        parts.append(f'<span class="part">min {stats["min"]:.4g} · max {stats["max"]:.4g} · mean {stats["mean"]:.4g}</span>')
    if stats["NaN"] or stats["Inf"]:
        parts.append(_tinted(f"NaN {stats['NaN']} · Inf {stats['Inf']}", "bad"))
    elif not scalar and (stats["dtype"] or "").startswith(("float", "bfloat", "complex")):
        parts.append(_tinted("NaN 0 · Inf 0", "quiet"))
    return "<p>" + " · ".join(parts) + "</p>"


def full_text(item: np.floating | np.complexfloating) -> str:
    """A float at full precision: the shortest text that reads back as the same number of its type."""
    return str(item)


def _rounded(text: str, item: Any) -> bool:
    """Whether a cell's text shows a finite float (or complex) number rounded."""
    if not isinstance(item, (np.floating, np.complexfloating)) or not np.isfinite(item):
        return False
    return bool(type(item)(text) != item)  # read back in the value's own precision


def value_table(value: Any) -> str:
    """A small tensor or map as an HTML table under a caption naming its axes (rank >= 2) or its keys; "" when
    it is neither or a scalar. A cell whose text is rounded has its full precision as its tooltip."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return ""
    grid = value_grid(value)
    flat = grid_items(value)
    if grid is None or flat is None:
        return ""
    head = "".join(f"<th>{escape(c)}</th>" for c in grid.columns)
    rows = []
    for label, texts, items in zip(grid.rows, grid.cells, flat):
        cells = []
        for text, item in zip(texts, items):
            tip = f' title="{escape(full_text(item))}"' if _rounded(text, item) else ""
            cells.append(f"<td{tip}>{escape(text)}</td>")
        rows.append(f"<tr><th>{escape(label)}</th>{''.join(cells)}</tr>")
    table = (f'<div class="grid"><table><thead><tr><th></th>{head}</tr></thead>'
             f"<tbody>{''.join(rows)}</tbody></table></div>")
    caption = f'<p class="caption">{escape(grid.caption)}</p>' if np.ndim(flat) >= 2 and (
        not isinstance(value, np.ndarray) or value.ndim >= 2) else ""
    return table + caption


def value_block(name: str, value: Any, full: bool, shown: str | None = None) -> str:
    """A value's statistics line (`shown` in place of its name), and when `full` its table."""
    return stats_line(name, value, shown) + (value_table(value) if full else "")


def section(title: str, values: Mapping[str, Any], full: bool) -> Iterable[tuple[str, Any, str]]:
    """A heading then (name, value, HTML) per value: what the Step page shows of a node's inputs or outputs,
    exporter names shortened to the part that differs (the full name on hover)."""
    yield "", None, f"<h5>{escape(title)}</h5>" + ("" if values else '<p class="none">none</p>')
    short = shortened(list(values))
    for name, value in values.items():
        yield name, value, value_block(name, value, full, short.get(name))


def wrapped(parts: Iterable[str]) -> str:
    """HTML parts as one styled block."""
    return STYLE + '<div class="xv">' + "".join(parts) + "</div>"
