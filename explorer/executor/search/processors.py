"""The logits processors of onnxruntime's generation operators, in the order its CPU kernels apply them to one
step's scores (rows: batch × beams, columns: the vocabulary): repetition penalty, no repeated n-grams, the vocabulary
mask, the prefix vocabulary mask (first step only), the minimum length, the temperature, the presence penalty.
A token a processor forbids gets float32's lowest value, not -inf, as in onnxruntime."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LOWEST = np.finfo(np.float32).min


@dataclass(frozen=True)
class Processors:
    """What the node's attributes and inputs ask of the scores at every step."""

    eos: int
    min_length: int = 0
    repetition_penalty: float = 1.0
    no_repeat_ngram_size: int = 0
    vocab_mask: np.ndarray | None = None  # (vocab,): 0 forbids a token
    prefix_vocab_mask: np.ndarray | None = None  # (batch, vocab): at the first step only
    temperature: float = 1.0
    presence_mask: np.ndarray | None = None
    presence_penalty: float = 0.0

    def apply(self, scores: np.ndarray, sequences: np.ndarray, step: int) -> None:
        """Processes `scores` (float32, rows × vocab) in place; `sequences` holds each row's tokens so far (its
        prompt included), `step` counts from 1."""
        if self.repetition_penalty != 1.0:
            penalize_repetitions(scores, sequences, np.float32(self.repetition_penalty))
        if self.no_repeat_ngram_size > 0:
            block_repeated_ngrams(scores, sequences, self.no_repeat_ngram_size)
        if self.vocab_mask is not None:
            scores[:, self.vocab_mask == 0] = LOWEST
        if self.prefix_vocab_mask is not None and step == 1:
            beams = scores.shape[0] // self.prefix_vocab_mask.shape[0]
            scores[np.repeat(self.prefix_vocab_mask, beams, axis=0) == 0] = LOWEST
        if sequences.shape[1] < self.min_length:
            scores[:, self.eos] = LOWEST
        if self.temperature > 0 and self.temperature != 1.0:
            scores /= np.float32(self.temperature)
        if self.presence_mask is not None and self.presence_penalty != 0.0:
            # onnxruntime's loop never moves its pointer: the whole mask's penalty lands on the first score
            scores.reshape(-1)[0] -= np.float32(self.presence_penalty) * np.float32(self.presence_mask.sum())


def penalize_repetitions(scores: np.ndarray, sequences: np.ndarray, penalty: np.float32) -> None:
    """Every token a row holds already: its score times the penalty when negative, divided by it otherwise."""
    for row, tokens in zip(scores, sequences):
        seen = np.unique(tokens)
        values = row[seen]
        row[seen] = np.where(values < 0, values * penalty, values / penalty)


def block_repeated_ngrams(scores: np.ndarray, sequences: np.ndarray, size: int) -> None:
    """The tokens that would repeat an n-gram of the row (its last size-1 tokens seen before, and what followed)."""
    length = sequences.shape[1]
    if size > length:
        return
    for row, tokens in zip(scores, sequences):
        prefix = tokens[length - size + 1:]
        blocked = {int(tokens[j + size - 1]) for j in range(length - size + 1)
                   if size == 1 or np.array_equal(tokens[j:j + size - 1], prefix)}
        row[sorted(blocked)] = LOWEST
