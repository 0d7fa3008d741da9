"""Making any text safe for DOT and for the SVG graphviz writes from it.

Graphviz copies node names into SVG `<title>` elements and comments without escaping `&` when it looks like
an entity, and copies control characters as they are: both make the SVG invalid XML; it also reads a name
starting with `%` as an internal id. So names never reach DOT raw:
- ids (node names, cluster names, `id=` attributes) are `kind:` + percent-encoded keys (`encode`, `svg_id`),
  readable for ordinary paths;
- label text is shown with invisible characters made visible (`visible`), then HTML-escaped (`html`),
  backslashes doubled (graphviz substitutes `\\N`, `\\G`… in HTML-like labels too);
- tooltips are escString attributes (`tooltip`): backslashes, quotes and markup characters are escaped.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from urllib.parse import unquote

_ID_UNSAFE = re.compile(r"""[%&"'<>\\:\s]""")  # plus anything non-printable
_VISIBLE = {"\n": "⏎", "\r": "␍", "\t": "⇥"}
ELLIPSIS = "…"
_TOOLTIP_SUBS = {"\\": "\\\\", "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_TOOLTIP_UNSAFE = re.compile(r'[\\&<>"]')


def _id_safe(char: str) -> bool:
    return char.isprintable() and not _ID_UNSAFE.match(char)


def encode(text: str) -> str:
    """Percent-encodes (as UTF-8 bytes) every character that could break DOT, XML or an HTML id:
    `%&"'<>\\:`, whitespace and anything non-printable. Ordinary names and paths come out unchanged; `decode`
    reverses it."""
    if text.isprintable() and not _ID_UNSAFE.search(text):
        return text
    return "".join(
        c if _id_safe(c) else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")) for c in text
    )


def decode(text: str) -> str:
    """The inverse of `encode`."""
    return unquote(text, errors="surrogatepass")


def visible(text: str) -> str:
    """The text with newlines, tabs and every invisible or non-printable character shown as a visible mark."""
    if text.isprintable():
        return text
    out = []
    for c in text:
        if c in _VISIBLE:
            out.append(_VISIBLE[c])
        elif c.isprintable():
            out.append(c)
        elif c.isspace() and unicodedata.category(c) == "Zs":  # a space of another width (U+2000…): a space
            out.append(" ")
        else:
            code = ord(c)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out)


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters: long texts keep their head and tail around an ellipsis."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    tail = limit - 1 - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def html(text: str, limit: int | None = None) -> str:
    """Text for an HTML-like label: made visible, optionally shortened, markup characters escaped."""
    text = visible(text)
    if limit is not None:
        text = shorten(text, limit)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return text.replace("\\", "\\\\")  # graphviz expands \N, \G… even inside HTML-like labels


def tooltip(text: str, limit: int = 400) -> str:
    """Text for an escString attribute (tooltip): escapes graphviz's `\\N`-style sequences, quotes and markup;
    newlines become escString line breaks."""
    lines = shorten(text, limit).split("\n")
    escaped = (_TOOLTIP_UNSAFE.sub(lambda m: _TOOLTIP_SUBS[m.group()], visible(line)) for line in lines)
    return "\\n".join(escaped)


def quote(text: str) -> str:
    """A DOT double-quoted string. Only `\\"` is an escape inside DOT quotes, so the caller makes sure `text`
    never ends in a lone backslash (encoded ids and `tooltip` output never do)."""
    return '"' + text.replace('"', '\\"') + '"'


MAX_KEY = 256  # graphviz refuses quoted strings over 16 kB; longer keys are replaced by a stable digest
_LONG_KEYS: ContextVar[dict[str, str] | None] = ContextVar("explorer_long_keys", default=None)


@contextmanager
def long_keys() -> Iterator[dict[str, str]]:
    """Collects, while open, digest -> key of every long key `svg_id` replaces by a digest: a drawing keeps those
    of its own ids to parse them back (`parse_svg_id`), and nothing outlives the drawings that hold them."""
    found: dict[str, str] = {}
    token = _LONG_KEYS.set(found)
    try:
        yield found
    finally:
        _LONG_KEYS.reset(token)


def _key_part(key: str) -> str:
    part = encode(key)
    if len(part) <= MAX_KEY:
        return part
    digest = "~" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    found = _LONG_KEYS.get()
    if found is not None:
        found[digest] = key
    return digest


def svg_id(kind: str, *keys: str) -> str:
    """`kind:key1:key2…` with every key encoded, so `:` only ever separates parts; a key longer than MAX_KEY
    (encoded) becomes `~` and a digest of it."""
    return ":".join((kind, *(_key_part(k) for k in keys)))


def parse_svg_id(element_id: str, long: Mapping[str, str] | None = None) -> tuple[str, tuple[str, ...]]:
    """(kind, decoded keys) of an id made by `svg_id`, e.g. ("node", ("Loop_0/body/Add_1",)); a digest of a long
    key is given back as the key `long` (the drawing's `long_keys`) maps it to, else as it is."""
    kind, *keys = element_id.split(":")
    long = long or {}
    return kind, tuple(long[k] if k in long else decode(k) for k in keys)
