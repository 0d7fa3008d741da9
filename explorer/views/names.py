"""Exporter names shortened to the part that differs: tf2onnx's `sequential_6_1_gru_2_1_while_placeholder_2:0`
among its siblings reads `placeholder_2`; a long node path keeps its last parts. The full name stays available
for hover text."""
from __future__ import annotations

import re
from collections.abc import Callable

SEPARATORS = "/_.:"
_CUT = re.compile(r"[/_.:]")
SHORT_ENOUGH = 24


def shortened(names: list[str]) -> dict[str, str]:
    """name -> its short form: a long name loses the longest prefix (cut at a separator) that a fifth of the long
    names share with it, and the suffix most of them share (tf2onnx's body inputs their `..._while_`, its body
    outputs their `.../while/`, all of them `:0`); names that would then read alike keep their full form."""
    distinct = list(dict.fromkeys(names))
    long = [n for n in distinct if len(n) > SHORT_ENOUGH]
    quorum = max(2, -(-len(long) // 5))
    most = max(2, -(-len(long) * 3 // 5))  # a suffix is cut only when most share it (":0"), not a "_2:0"
    out = {n: n for n in distinct}
    reversed_long = [n[::-1] for n in long]
    for name in long:
        suffix = _shared(name[::-1], reversed_long, most, lambda rest: any(c.isalpha() for c in rest))[::-1]
        kept = name[:len(name) - len(suffix)]
        prefix = _shared(kept, long, quorum, lambda rest: rest[:1].isalpha())
        out[name] = kept[len(prefix):].strip(SEPARATORS) or name
    owners: dict[str, list[str]] = {}
    for name, short in out.items():
        owners.setdefault(short, []).append(name)
    for same in owners.values():
        if len(same) > 1:
            out.update((name, name) for name in same)
    return out


def _shared(name: str, names: list[str], quorum: int, leaves: Callable[[str], bool]) -> str:
    """The longest prefix of `name`, ending at a separator, that at least `quorum` of `names` start with and
    whose rest `leaves` accepts (a word, not a bare number)."""
    for cut in sorted((m.end() for m in _CUT.finditer(name)), reverse=True):
        if cut < len(name) and leaves(name[cut:]) and sum(n.startswith(name[:cut]) for n in names) >= quorum:
            return name[:cut]
    return ""


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


def shorten_text(text: str, names: list[str]) -> str:
    """`text` with every long name among `names` replaced by its short form (longest names first, so no name is
    replaced inside a longer one)."""
    short = shortened(names)
    for name in sorted(short, key=len, reverse=True):
        if short[name] != name:
            text = text.replace(name, short[name])
    return text
