"""How a generation chooses its tokens, with transformers' `generate` defaults: greedy; sampling (`Sampling`,
seeded, top-k 50 as transformers' default generation config, top-p and temperature off); beam search
(`BeamSearch`, length_penalty 1.0, early_stopping False, one returned sequence)."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import FeedError


@dataclass(frozen=True)
class Greedy:
    """The best-scoring token of every row."""


@dataclass(frozen=True)
class Sampling:
    """A token drawn from each row's softmax after temperature, top-k and top-p, as transformers' warpers filter
    it; the draws are NumPy's `default_rng(seed)` (see sampling.py), not torch's, so tokens differ from
    transformers' sampling by design."""

    seed: int
    top_k: int = 50  # 0: no top-k filter
    top_p: float = 1.0  # 1.0: no top-p filter
    temperature: float = 1.0

    def __post_init__(self) -> None:
        if self.top_k < 0:
            raise FeedError(f"top_k must be at least 0 (0: off), got {self.top_k}")
        if not 0.0 < self.top_p <= 1.0:
            raise FeedError(f"top_p must be in (0, 1], got {self.top_p}")
        if not self.temperature > 0.0:
            raise FeedError(f"temperature must be greater than 0, got {self.temperature}")


@dataclass(frozen=True)
class BeamSearch:
    """transformers' beam search: `beams` rows per batch entry, finished hypotheses scored sum of log-probabilities
    / generated length ** length_penalty, `num_return_sequences` best returned."""

    beams: int
    length_penalty: float = 1.0
    early_stopping: bool = False
    num_return_sequences: int = 1

    def __post_init__(self) -> None:
        if self.beams < 2:
            raise FeedError(f"beam search needs at least 2 beams, got {self.beams} (1 beam is greedy)")
        if not 1 <= self.num_return_sequences <= self.beams:
            raise FeedError(f"num_return_sequences must be in 1..{self.beams} (the beams), got "
                            f"{self.num_return_sequences}")


Strategy = Greedy | Sampling | BeamSearch
GREEDY = Greedy()


def strategy_of(sample: int | None = None, top_k: int = 50, top_p: float = 1.0, temperature: float = 1.0,
                beams: int = 1, length_penalty: float = 1.0, early_stopping: bool = False,
                num_return_sequences: int = 1) -> Strategy:
    """The strategy transformers' generate arguments name: sampling when a seed is given, beam search for more
    than one beam, else greedy."""
    if sample is not None and beams > 1:
        raise FeedError("sampling with beams (transformers' beam sampling) is not run by explorer: choose one")
    if sample is not None:
        return Sampling(sample, top_k, top_p, temperature)
    if beams > 1:
        return BeamSearch(beams, length_penalty, early_stopping, num_return_sequences)
    if beams < 1:
        raise FeedError(f"beams must be at least 1, got {beams}")
    if num_return_sequences != 1:
        raise FeedError("num_return_sequences > 1 needs beams (as many or more)")
    return GREEDY
