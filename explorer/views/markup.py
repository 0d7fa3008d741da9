"""Model-controlled strings (file names, node/value/graph names, doc strings, metadata, error messages) made safe
for the app's markdown and for plot titles: they are always shown as the text they are, never as links, images,
HTML, colours, icons or emoji."""
from __future__ import annotations

import html
import string

# every ASCII punctuation mark that markdown, GFM (autolinks: www. http: a@b) or Streamlit (colour directives
# `:<colour>[...]`, $math$) give a meaning; quotes, commas, slashes and the like stay as they are
_PUNCTUATION = frozenset(string.punctuation) - frozenset("'\",;/=?%")
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_BREAK = "\u200b"  # zero-width space: splits ":name:" so no emoji or icon shortcode can form


def _visible(text: str) -> str:
    """Control characters as their escapes (a newline must not end a paragraph or a code span)."""
    return "".join(_CONTROL.get(c, f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c) for c in text)


def md(text: object) -> str:
    """`text` as literal markdown text: every ASCII punctuation mark backslash-escaped (CommonMark), control
    characters shown as escapes, and colons split from what follows (no `:emoji:` or `:<colour>[...]`)."""
    out = []
    for c in _visible(str(text)):
        if c in _PUNCTUATION:
            out.append("\\" + c + (_BREAK if c == ":" else ""))
        else:
            out.append(c)
    return "".join(out)


def md_code(text: object) -> str:
    """`text` as an inline code span whatever it holds: the fence is one backtick longer than the longest run
    of backticks inside, padded with spaces when the text starts or ends with one."""
    body = _visible(str(text))
    longest = run = 0
    for c in body:
        run = run + 1 if c == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def plot_text(text: object) -> str:
    """`text` for a plot title or legend: plotly reads a few HTML tags (<a href>, <b>, <br>) in them."""
    return html.escape(_visible(str(text)), quote=False)
