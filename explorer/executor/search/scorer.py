"""onnxruntime's beam scorer (after transformers' BeamSearchScorer): finished hypotheses kept per batch entry, the
next beams chosen among each step's 2 × beams best candidates, and the final sequences.

A hypothesis ends when a candidate's token is the end-of-sequence id and it ranks among the first `beams`
candidates; it is kept without that token, scored sum of log-probabilities / length ** length_penalty, its length
counting the prompt. A batch entry is done once it holds `beams` hypotheses and, unless early_stopping, no open
beam can beat the worst of them. Two quirks of onnxruntime's are kept, since its outputs are the judge: the best
open score an entry compares is read at `batch × beams` among the candidates (`batch × 2 × beams` is its own),
and ties between hypotheses keep the earlier one first."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def length_score(sum_logprobs: float, length: int, length_penalty: float) -> np.float32:
    """A hypothesis's score, in float32 as onnxruntime computes it."""
    denominator = np.float32(float(length) ** float(np.float32(length_penalty)))
    score: np.float32 = np.float32(sum_logprobs) / denominator
    return score


@dataclass
class Hypotheses:
    """One batch entry's finished hypotheses, best first (at most `beams`)."""

    beams: int
    length_penalty: float
    kept: list[tuple[np.float32, np.ndarray]] = field(default_factory=list)
    done: bool = False

    def add(self, tokens: np.ndarray, sum_logprobs: float) -> None:
        score = length_score(sum_logprobs, len(tokens), self.length_penalty)
        if len(self.kept) == self.beams:
            if score <= self.kept[-1][0]:
                return
            self.kept.pop()
        at = len(self.kept)
        while at > 0 and score > self.kept[at - 1][0]:
            at -= 1
        self.kept.insert(at, (score, tokens.copy()))

    def can_improve(self, best_sum_logprobs: float, length: int) -> bool:
        return bool(self.kept[-1][0] < length_score(best_sum_logprobs, length, self.length_penalty))


class BeamScorer:
    """The scorer of one BeamSearch execution over `batch` entries of `beams` beams each."""

    def __init__(self, batch: int, beams: int, length_penalty: float, early_stopping: bool, eos: int,
                 pad: int) -> None:
        self.batch, self.beams, self.eos, self.pad = batch, beams, eos, pad
        self.early_stopping = early_stopping
        self.entries = [Hypotheses(beams, length_penalty) for _ in range(batch)]
        self.next_scores = np.zeros(batch * beams, dtype=np.float32)
        self.next_tokens = np.zeros(batch * beams, dtype=np.int32)
        self.next_indices = np.zeros(batch * beams, dtype=np.int32)

    @property
    def is_done(self) -> bool:
        return all(entry.done for entry in self.entries)

    def process(self, sequences: np.ndarray, scores: np.ndarray, tokens: np.ndarray, indices: np.ndarray) -> None:
        """One step: `scores`, `tokens` and `indices` (the beam within its entry) of each entry's 2 × beams best
        candidates, flat and best first per entry; `sequences` (batch × beams, length) before the step."""
        beams, top = self.beams, 2 * self.beams
        length = sequences.shape[1]
        for b, entry in enumerate(self.entries):
            out = slice(b * beams, (b + 1) * beams)
            if entry.done:
                self.next_scores[out], self.next_tokens[out], self.next_indices[out] = 0.0, self.pad, 0
                continue
            chosen = 0
            for j in range(top):
                token, score = int(tokens[b * top + j]), float(scores[b * top + j])
                row = b * beams + int(indices[b * top + j])
                if self.eos >= 0 and token == self.eos:
                    if j < beams:
                        entry.add(sequences[row], score)
                else:
                    at = b * beams + chosen
                    self.next_scores[at], self.next_tokens[at], self.next_indices[at] = score, token, row
                    chosen += 1
                if chosen == beams:
                    break
            if len(entry.kept) < beams:
                continue
            if not self.early_stopping:
                best = float(np.max(scores[b * beams:b * beams + top]))  # onnxruntime's offset, see above
                if entry.can_improve(best, length):
                    continue
            entry.done = True

    def finalize(self, sequences: np.ndarray, beam_scores: np.ndarray, returned: int,
                 max_length: int) -> tuple[np.ndarray, np.ndarray]:
        """(sequences (batch, returned, max_length) padded with the pad id, their scores (batch, returned)): the
        open beams of entries not done join their hypotheses first."""
        for b, entry in enumerate(self.entries):
            if not entry.done:
                for k in range(self.beams):
                    entry.add(sequences[b * self.beams + k], float(beam_scores[b * self.beams + k]))
        out = np.full((self.batch, returned, max_length), self.pad, dtype=np.int32)
        out_scores = np.zeros((self.batch, returned), dtype=np.float32)
        for b, entry in enumerate(self.entries):
            for k, (score, tokens) in enumerate(entry.kept[:returned]):
                out[b, k, :len(tokens)] = tokens
                out_scores[b, k] = score
        return out, out_scores
