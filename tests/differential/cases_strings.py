"""StringNormalizer, StringConcat, StringSplit and RegexFullMatch (explorer/executor/ops/strings.py): case
actions with and without case-sensitive stopwords, [C] and [1, C] inputs, everything dropped, broadcasting,
delimiters, runs of spaces, maxsplit, empty strings, and patterns."""
from __future__ import annotations

import numpy as np

from .harness import Case

WORDS = np.array(["Monday", "tuesday", "WEDNESDAY", "monday", "Straße", "Éclair", ""], dtype=object)


def strings(*items: str) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return out


def _normalizer() -> list[Case]:
    found = []
    words = WORDS[:-1]  # onnxruntime converts each element; an empty one is kept as it is
    for action in ("NONE", "LOWER", "UPPER"):
        for sensitive in (0, 1):
            for stops in ([], ["monday"], ["MONDAY", "straße"]):
                attrs = {"case_change_action": action, "is_case_sensitive": sensitive, "locale": "C.UTF-8"}
                if stops:
                    attrs["stopwords"] = stops
                found.append(Case("StringNormalizer", 10, [words], attrs))
                found.append(Case("StringNormalizer", 10, [words.reshape(1, -1)], attrs))
    for x in (strings("monday", "Monday"), strings("monday", "MONDAY").reshape(1, 2)):
        found.append(Case("StringNormalizer", 10, [x], {"stopwords": ["monday"], "case_change_action": "UPPER", "locale": "C.UTF-8"}))
    found.append(Case("StringNormalizer", 10, [WORDS.reshape(7, 1)], {}, error="X must be [C] or [1, C]"))
    found.append(Case("StringNormalizer", 10, [strings("a")], {"stopwords": ["a", "A"]}, error="same word twice"))
    return found


def _concat() -> list[Case]:
    x = WORDS.reshape(7, 1)
    return [Case("StringConcat", 20, [x, strings("_a", "_b")]),
            Case("StringConcat", 20, [WORDS, WORDS[::-1].copy()]),
            Case("StringConcat", 20, [np.array("pre ", dtype=object), WORDS]),
            Case("StringConcat", 20, [strings(), strings("x")])]


def _split() -> list[Case]:
    found = []
    x = strings("a,b,,c", ",x,", "", "no delimiter", "  lots   of  spaces  ", "a,b").reshape(2, 3)
    for attrs in ({}, {"delimiter": ","}, {"delimiter": ",,"}, {"delimiter": " "}, {"maxsplit": 1},
                  {"delimiter": ",", "maxsplit": 0}, {"delimiter": ",", "maxsplit": 2}, {"maxsplit": 2}):
        found.append(Case("StringSplit", 20, [x], attrs, outputs=2))
    found.append(Case("StringSplit", 20, [strings("one two")], {}, outputs=2))
    found.append(Case("StringSplit", 20, [strings("", "")], {"delimiter": "-"}, outputs=2))
    found.append(Case("StringSplit", 20, [strings()], {"delimiter": "-"}, outputs=2))
    return found


def _regex() -> list[Case]:
    x = strings("www.google.com", "www.facebook.com", "www.bbc.co.uk", "", "WWW.X.ORG").reshape(5, 1)
    return [Case("RegexFullMatch", 20, [x], {"pattern": pattern})
            for pattern in (r"www\.[\w.-]+\.\bcom\b", r"(?i)www\..*", r"", r".*\.co\.uk|.*\.org", r"[a-z]+")]


def cases() -> list[Case]:
    return [*_normalizer(), *_concat(), *_split(), *_regex()]
