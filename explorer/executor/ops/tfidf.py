"""TfIdfVectorizer (9): counts of the pool's n-grams in each row of X ([C] or [B, C], strings or integers), as
onnxruntime counts them.

The pool holds 1-grams, then 2-grams, ... (`ngram_counts` gives where each size starts); the i-th n-gram of the
pool is counted in output column ngram_indexes[i]. Only sizes in [min_gram_length, max_gram_length] count.
1-grams are counted once per position; longer n-grams once per start position and per skip of 0 to
max_skip_count tokens between their items. TF gives the counts, IDF 1 (or the n-gram's weight) where the count is
positive, TFIDF the counts times the n-gram's weight (weights[i] for the pool's i-th n-gram)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .strings import text


class Pool:
    """The n-grams of a node's pool that its gram lengths count: tuple of items -> pool position."""

    def __init__(self, op: OpNode) -> None:
        words, numbers = op.attr("pool_strings") or [], op.attr("pool_int64s") or []
        if bool(words) == bool(numbers):
            raise op.error("exactly one of pool_strings and pool_int64s must be set")
        items: list[Any] = [text(w) for w in words] if words else [int(n) for n in numbers]
        self.strings = bool(words)
        self.low, self.high = op.get_int("min_gram_length"), op.get_int("max_gram_length")
        starts = op.get_ints("ngram_counts") or []
        if not 1 <= self.low <= self.high <= len(starts):
            raise op.error(f"min_gram_length ({self.low}) and max_gram_length ({self.high}) must satisfy "
                           f"1 <= min <= max <= len(ngram_counts) ({len(starts)})")
        self.grams: dict[tuple[Any, ...], int] = {}
        index = 0
        for size, start in enumerate(starts, start=1):
            end = starts[size] if size < len(starts) else len(items)
            if not start <= end <= len(items) or (end - start) % size:
                raise op.error(f"ngram_counts: the {size}-grams [{start}, {end}) are not whole {size}-grams of the "
                               f"pool's {len(items)} items")
            for at in range(start, end, size):
                gram = tuple(items[at:at + size])
                if self.low <= size <= self.high:
                    if gram in self.grams:
                        raise op.error(f"the pool holds the {size}-gram {gram!r} twice")
                    self.grams[gram] = index
                index += 1

    def count(self, row: list[Any], skips: int, tally: Any) -> None:
        """Calls tally(pool position) for every n-gram of the row that the pool holds."""
        low = self.low
        if low == 1:
            for item in row:
                if (item,) in self.grams:
                    tally(self.grams[(item,)])
            low = 2
            if low > self.high:
                return
        for distance in range(1, skips + 2):
            for start in range(len(row)):
                if start + distance * (low - 1) >= len(row):
                    break
                gram = tuple(row[start:start + distance * self.high:distance])
                for size in range(low, len(gram) + 1):
                    found = self.grams.get(gram[:size])
                    if found is not None:
                        tally(found)


def tfidf_kernel(op: OpNode) -> PlainKernel:
    mode = op.get_str("mode")
    if mode not in ("TF", "IDF", "TFIDF"):
        raise op.error(f"mode {mode!r} is not one of TF, IDF, TFIDF")
    pool = Pool(op)
    skips = op.get_int("max_skip_count")
    columns = np.asarray(op.get_ints("ngram_indexes") or [], dtype=np.int64)
    if columns.size == 0 or (columns < 0).any():
        raise op.error("ngram_indexes must be set, without negative values")
    width = int(columns.max()) + 1
    weights = np.asarray(op.attr("weights") or [], dtype=np.float32)
    if weights.size and weights.size != columns.size:
        raise op.error(f"weights has {weights.size} values for {columns.size} ngram_indexes")
    scale = np.ones(width, dtype=np.float32)
    if weights.size:
        scale[columns] = weights  # the weight of the n-gram each column counts
    if skips < 0:
        raise op.error(f"max_skip_count must not be negative, got {skips}")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if x.ndim > 2 or (x.ndim == 2 and x.shape[0] < 1):
            raise op.error(f"X must be [C] or [B, C] with B > 0, got shape {x.shape}")
        if (x.dtype.kind == "O") != pool.strings:
            raise op.error(f"X is {x.dtype} but the pool holds {'strings' if pool.strings else 'integers'}")
        rows = x if x.ndim == 2 else x.reshape(1, -1)
        counts = np.zeros((len(rows), width), dtype=np.float32)
        for r, row in enumerate(rows):
            items = [text(v) for v in row] if pool.strings else [int(v) for v in row]

            def tally(position: int, r: int = r) -> None:
                counts[r, columns[position]] += 1

            pool.count(items, skips, tally)
        if mode == "IDF":
            counts = np.where(counts > 0, scale, np.float32(0))
        elif mode == "TFIDF":
            counts = counts * scale
        out = counts.astype(np.float32)
        return (out if x.ndim == 2 else out.reshape(width),)

    return run


KERNELS: dict[str, KernelFactory] = {"TfIdfVectorizer": tfidf_kernel}
