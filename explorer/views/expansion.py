"""Which bodies (graph paths) or scopes (scope keys) a diagram expands: a rule, checked against known keys.

A rule is None (the default rule: expand what is small enough, plus whatever holds a node to reveal), "all",
"none", one key or an iterable of keys (exactly these expanded, with their ancestors), or a mapping
key -> bool overriding the default rule for those keys only.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

Rule = None | str | Iterable[str] | Mapping[str, bool]


class Expansion:
    """A resolved rule: `expanded(key, default)` answers for one key given the default rule's answer."""

    def __init__(self, rule: Rule, known: Iterable[str], ancestors: Callable[[str], Iterable[str]],
                 what: str) -> None:
        self.mode = "default"
        self.chosen: Mapping[str, bool] | set[str] = set()
        if rule is None:
            return
        if isinstance(rule, str) and rule in ("all", "none"):
            self.mode = rule
            return
        known = set(known)
        if isinstance(rule, Mapping):
            self.mode, self.chosen = "map", dict(rule)
            keys: Iterable[str] = rule.keys()
        else:
            self.mode = "set"
            keys = [rule] if isinstance(rule, str) else list(rule)
        unknown = [k for k in keys if k not in known]
        if unknown:
            sample = ", ".join(repr(k) for k in sorted(known)[:8]) or "none"
            more = ", …" if len(known) > 8 else ""
            raise ValueError(f"unknown {what} {unknown[0]!r} (known: {sample}{more})")
        if self.mode == "set":
            chosen = set(keys)
            for key in keys:
                chosen.update(ancestors(key))
            self.chosen = chosen

    def expanded(self, key: str, default: bool) -> bool:
        if self.mode == "default":
            return default
        if self.mode in ("all", "none"):
            return self.mode == "all"
        if self.mode == "map" and isinstance(self.chosen, Mapping):
            return bool(self.chosen.get(key, default))
        return key in self.chosen
