"""TfIdfVectorizer (explorer/executor/ops/tfidf.py): string and integer pools, 1- to 3-grams, skips, every mode
with and without weights, permuted output columns, [C] and [B, C] inputs, empty rows."""
from __future__ import annotations

from typing import Any

import numpy as np

from .gen import rng
from .harness import Case


def strings(items: list[str]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


POOL_INTS = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7]  # 1-grams 2 3 5 4; 2-grams (5,6) (7,8) (6,7)
POOL_WORDS = ["a", "b", "c", "d", "c", "d", "d", "a", "a", "b", "c"]  # 1-grams a b c d; 2-grams (c,d) (d,a); (a,b,c)


def _attrs(r: np.random.Generator, low: int, high: int, skips: int, mode: str, words: bool,
           weighted: bool) -> dict[str, Any]:
    counts, size = ([0, 4, 8], 7) if words else ([0, 4], 7)
    order = [int(v) for v in r.permutation(size)]
    attrs: dict[str, Any] = {"min_gram_length": low, "max_gram_length": high, "max_skip_count": skips,
                             "mode": mode, "ngram_counts": counts, "ngram_indexes": order}
    attrs["pool_strings" if words else "pool_int64s"] = POOL_WORDS if words else POOL_INTS
    if weighted:
        attrs["weights"] = [round(float(w), 2) for w in r.uniform(0.1, 2, size=size)]
    return attrs


def cases() -> list[Case]:
    found = []
    for words in (False, True):
        for low, high in ((1, 1), (1, 2), (2, 2)) + (((1, 3), (2, 3), (3, 3)) if words else ()):
            for skips in (0, 1, 2):
                for mode in ("TF", "IDF", "TFIDF"):
                    r = rng("TfIdfVectorizer", words, low, high, skips, mode)
                    attrs = _attrs(r, low, high, skips, mode, words, weighted=r.random() < 0.6)
                    if words:
                        x = strings([str(v) for v in r.choice(list("abcdz"), size=12)]).reshape(2, 6)
                    else:
                        x = r.choice([2, 3, 4, 5, 6, 7, 8, 9], size=12).astype(np.int32 if skips else np.int64)
                    found.append(Case("TfIdfVectorizer", 9, [x], attrs))
    r = rng("TfIdfVectorizer", "shapes")
    attrs = _attrs(r, 1, 2, 1, "TF", True, False)
    found.append(Case("TfIdfVectorizer", 9, [strings(list("abcdcd"))], attrs))
    found.append(Case("TfIdfVectorizer", 9, [strings([]).reshape(3, 0)], attrs))
    found.append(Case("TfIdfVectorizer", 9, [np.array([2, 3], np.int64)], attrs, error="the pool holds strings"))
    return found
