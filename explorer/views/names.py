"""Exporter names shortened to the part that differs: tf2onnx's `sequential_6_1_gru_2_1_while_placeholder_2:0`
among its siblings reads `placeholder_2`; a long node path keeps its last parts. The full name stays available
for hover text."""
from __future__ import annotations

import os
import re

SEPARATORS = "/_.:"
_CUT = re.compile(r"[/_.:]")
SHORT_ENOUGH = 24


def shortened(names: list[str]) -> dict[str, str]:
    """name -> its shortest distinct form: the prefix and suffix all of them share cut off at a separator, when the
    names are long enough for it to matter (each form keeps at least one character of its own)."""
    distinct = list(dict.fromkeys(names))
    if len(distinct) < 2 or max(len(n) for n in distinct) <= SHORT_ENOUGH:
        return {n: n for n in distinct}
    prefix = _at_separator(os.path.commonprefix(distinct), from_end=False)
    reversed_names = [n[::-1] for n in distinct]
    suffix = _at_separator(os.path.commonprefix(reversed_names), from_end=True)[::-1]
    out = {}
    for name in distinct:
        core = name[len(prefix):len(name) - len(suffix)] if len(prefix) + len(suffix) < len(name) else name
        out[name] = core.strip(SEPARATORS) or name
    if len(set(out.values())) < len(out):
        return {n: n for n in distinct}
    return out


def _at_separator(shared: str, from_end: bool) -> str:
    """The shared part cut back to its last separator (so no name is cut inside a word)."""
    cuts = [m.end() for m in _CUT.finditer(shared)]
    return shared[:cuts[-1]] if cuts else ""


def short_name(path: str, limit: int = 40) -> str:
    """A node path or value name cut to its last parts, `…/` before them, when longer than `limit`."""
    if len(path) <= limit:
        return path
    parts = path.split("/")
    kept = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + len(kept) + 1 > limit - 2:
            break
        kept = f"{part}/{kept}"
    return f"…/{kept}" if len(kept) < len(path) else f"…{path[-(limit - 1):]}"
