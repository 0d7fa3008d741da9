"""onnxruntime's Sampling step on the CPU: top-p filtering of the processed scores, then one draw per row from
their softmax with the C++ standard library's `std::default_random_engine` (libstdc++'s minstd_rand0) seeded with
the `seed` input, through `std::uniform_real_distribution<double>`, as onnxruntime's Multinomial draws.

onnxruntime sorts each row with std::sort, which does not order equal scores the same way on every standard
library; explorer orders them by token id. Draws match onnxruntime's built with libstdc++ (Linux); another
standard library's engine or distribution (MSVC's) draws other numbers."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_MODULUS = 2147483647  # minstd_rand0: x <- 16807 x mod (2^31 - 1)


class MinstdRand0:
    """libstdc++'s std::default_random_engine and its generate_canonical<double, 53> (two draws per number)."""

    def __init__(self, seed: int) -> None:
        state = seed % _MODULUS
        self.state = 1 if state == 0 else state

    def draw(self) -> int:
        self.state = (self.state * 16807) % _MODULUS
        return self.state

    def uniform(self) -> float:
        """A double in [0, 1): (x1 - 1 + (x2 - 1) × R) / R², R = 2^31 - 2 the engine's range."""
        span = float(_MODULUS - 1)
        total = float(self.draw() - 1) + float(self.draw() - 1) * span
        value = total / (span * span)
        return value if value < 1.0 else float(np.nextafter(1.0, 0.0))


@dataclass(frozen=True)
class TopP:
    """The Sampling node's filtering attributes."""

    top_p: float
    filter_value: float
    min_tokens_to_keep: int
    custom: bool

    def filter(self, scores: np.ndarray) -> None:
        """Sets the tokens outside the top-p mass to filter_value, in place (rows × vocab, float32)."""
        vocab = scores.shape[1]
        top_p = np.float32(self.top_p)
        for row in scores:
            order = np.argsort(-row if self.custom else row, kind="stable")  # ascending, or descending (custom)
            ranked = row[order]
            shifted = np.exp(ranked - ranked.max(), dtype=np.float32)
            probs = shifted * (np.float32(1) / shifted.sum(dtype=np.float32))  # MLAS scales by the reciprocal
            cumulative = np.cumsum(probs, dtype=np.float32)
            if self.custom:  # onnxruntime's custom rule: from the second token on, what lies past top_p
                cut = [j + 1 for j in range(vocab - 1) if cumulative[j] > top_p]
            else:
                limit = vocab - self.min_tokens_to_keep
                cut = [j for j in range(max(limit, 1)) if cumulative[j] <= np.float32(1) - top_p]
            row[order[cut]] = np.float32(self.filter_value)


def multinomial(scores: np.ndarray, generator: MinstdRand0) -> np.ndarray:
    """One token per row drawn from softmax(row), as onnxruntime's Multinomial computes it: a cumulative sum in
    double of exp(score - max) over the finite scores, searched for uniform × total."""
    tokens = np.zeros(scores.shape[0], dtype=np.int32)
    for b, row in enumerate(scores):
        finite = np.isfinite(row)
        top = float(row[finite].max()) if finite.any() else float(np.finfo(np.float32).min)
        weights = np.where(finite, np.exp(row.astype(np.float64) - top), 0.0)
        cdf = np.cumsum(weights)
        tokens[b] = int(np.searchsorted(cdf, generator.uniform() * cdf[-1], side="right"))
    return tokens
