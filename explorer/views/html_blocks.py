"""Plain text and tables of records as static HTML: what a page shows of a verdict's lines or an optimizer's
statistics without the browser loading a syntax highlighter or an interactive data grid for them (each costs a
page's first render in a new browser a few hundred milliseconds: their scripts are megabytes). A long table scrolls
under its sticky header."""
from __future__ import annotations

import numbers
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import numpy as np

from .styles import CODE_COLOURS, TONE_HEX, scrolled_table_css

STYLE = f"""<style>
.xb pre {{ margin: 0; padding: 0.6rem 0.9rem; border-radius: 0.5rem; background: rgba(128, 128, 128, .08);
          font-size: 0.82rem; line-height: 1.45; white-space: pre-wrap; overflow-wrap: anywhere; }}
{scrolled_table_css("xb", 320)}.xb table {{ font-size: 0.85rem; width: 100%; }}
.xb th, .xb td {{ text-align: left; vertical-align: top; }}
.xb td.n {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
.xb .k {{ color: {CODE_COLOURS["keyword"]}; }} .xb .c {{ color: {TONE_HEX["quiet"]}; }}
.xb .v {{ color: {CODE_COLOURS["literal"]}; }}
</style>"""


def text_block(text: str) -> str:
    """`text` as a preformatted block, its lines kept."""
    return f'{STYLE}<div class="xb"><pre>{escape(text)}</pre></div>'


# C-like code's comments, strings, keywords and numbers: what code_block colours
_TOKENS = re.compile(r'(?P<c>//[^\n]*|/\*.*?\*/)|(?P<v>"(?:[^"\\\n]|\\.)*"|\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b)'
                     r"|(?P<k>\b(?:for|while|do|if|else|return|break|continue|const|auto|true|false|bool|int|int64|"
                     r"float|double|void)\b)", re.S)


def code_block(text: str) -> str:
    """C-like code (the spec's pseudo-code filled in, a cell's equations) as a preformatted block, its comments,
    literals and keywords coloured."""
    parts, at = [], 0
    for token in _TOKENS.finditer(text):
        parts.append(escape(text[at:token.start()]))
        parts.append(f'<span class="{token.lastgroup}">{escape(token.group())}</span>')
        at = token.end()
    parts.append(escape(text[at:]))
    return f'{STYLE}<div class="xb"><pre>{"".join(parts)}</pre></div>'


# rows of a table a page lists at first: each row costs a new browser's first render about 2 ms (the HTML
# sanitized, then laid out): 100 of whisper's rewrites 0.2 s, gtcrn's 691 about 0.3 s more
LISTED_ROWS = 25


def records_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
                  titles: Mapping[str, str] | None = None) -> str:
    """Rows of records (one column per key of the first row, or `columns`) as a table; numbers right-aligned;
    `titles`: a column's tooltip (its full name, where the header shortens it)."""
    names = list(columns if columns is not None else (rows[0] if rows else {}))
    titles = titles or {}
    head = "".join(f"<th{_title(titles.get(name))}>{escape(str(name))}</th>" for name in names)
    body = "".join("<tr>" + "".join(_cell(row.get(name, "")) for name in names) + "</tr>" for row in rows)
    return f'{STYLE}<div class="xb"><div class="grid"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>' \
           "</table></div></div>"


def _title(title: str | None) -> str:
    return "" if title is None else f' title="{escape(title)}"'


def _cell(value: Any) -> str:
    """A cell: a number (Python's or NumPy's; not a bool) right-aligned, a float in 6 significant digits."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return f"<td>{escape(str(value))}</td>"
    return f'<td class="n">{int(value)}</td>' if isinstance(value, numbers.Integral) else \
        f'<td class="n">{float(value):.6g}</td>'
