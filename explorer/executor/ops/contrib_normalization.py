"""onnxruntime's fused normalizations (com.microsoft), as its CPU kernels compute them:

- SkipLayerNormalization: LayerNorm(input + skip + bias) over the last axis, times gamma, plus beta; outputs the
  mean, the inverse standard deviation (both float32, the last axis kept as 1) and input + skip + bias;
- SkipSimplifiedLayerNormalization: the same with RMS normalization (no mean subtracted, no beta; its mean output
  is zeros, as onnxruntime writes it);
- EmbedLayerNormalization: BERT's embedding layer: word, position (position_ids, else 0..S-1) and segment
  embeddings added, then layer-normalized; mask_index counts each batch item's mask entries equal to 1 (zeros
  without a mask), embedding_sum is the sum before the normalization;
- QEmbedLayerNormalization: the same on int8/uint8 tables, each dequantized first.

Half precision computes in float32; the variance is E[x²] - mean² as onnxruntime's skip kernels compute it."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .shared import compute_dtype

DOMAIN = "com.microsoft"


def _vector(value: np.ndarray | None, hidden: int, name: str) -> None:
    if value is not None and value.shape != (hidden,):
        raise ValueError(f"{name} {value.shape} must be 1-D of the hidden size ({hidden})")


def _skip_shape_ok(skip: np.ndarray, x: np.ndarray) -> bool:
    """skip has input's shape, or (1, S, H) or (S, H) against a 3-D input."""
    return skip.shape == x.shape or (x.ndim == 3 and skip.shape in ((1, *x.shape[1:]), x.shape[1:]))


def _skip_norm(simplified: bool) -> KernelFactory:
    def factory(op: OpNode) -> PlainKernel:
        epsilon = op.get_float("epsilon")

        def run(args: Sequence[Any]) -> tuple[Any, ...]:
            x, skip, gamma = args[:3]
            rest = list(args[3:]) + [None, None]
            beta, bias = (None, rest[0]) if simplified else (rest[0], rest[1])
            if x.ndim not in (2, 3):
                raise ValueError(f"input {x.shape} must be 2-D or 3-D")
            if not _skip_shape_ok(skip, x):
                raise ValueError(f"skip {skip.shape} must have input's shape {x.shape} (or (1, S, H) or (S, H))")
            hidden = x.shape[-1]
            for value, name in ((gamma, "gamma"), (beta, "beta"), (bias, "bias")):
                _vector(value, hidden, name)
            work = compute_dtype(x.dtype)
            total = x.astype(work) + skip.astype(work)
            if bias is not None:
                total = total + bias.astype(work)
            mean = total.mean(axis=-1, keepdims=True)
            square = (total * total).mean(axis=-1, keepdims=True)
            if simplified:
                std = np.sqrt(square + work.type(epsilon))
                y = total / std * gamma.astype(work)
                mean = np.zeros_like(mean)
            else:
                std = np.sqrt(square - mean * mean + work.type(epsilon))
                y = (total - mean) / std * gamma.astype(work)
                if beta is not None:
                    y = y + beta.astype(work)
            return (y.astype(x.dtype), mean.astype(np.float32), (1 / std).astype(np.float32),
                    total.astype(x.dtype))

        return run

    return factory


def _ids(ids: np.ndarray, count: int, what: str, table: str) -> np.ndarray:
    bad = (ids < 0) | (ids >= count)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{what}{list(where)} = {int(ids[where])} is outside {table}'s {count} rows")
    return ids


def _embed(epsilon: float, ids: np.ndarray, segments: np.ndarray | None, words: np.ndarray, positions: np.ndarray,
           segment_table: np.ndarray | None, gamma: np.ndarray, beta: np.ndarray, mask: np.ndarray | None,
           position_ids: np.ndarray | None) -> tuple[Any, ...]:
    """EmbedLayerNormalization's outputs (normalized sum, mask index, sum) from its tables."""
    if ids.ndim != 2:
        raise ValueError(f"input_ids {ids.shape} must be 2-D (batch, sequence)")
    if (segments is None) != (segment_table is None):
        raise ValueError("segment_ids and segment_embedding come together")
    batch, seq = ids.shape
    hidden = words.shape[1]
    for table, name in ((positions, "position_embedding"), (segment_table, "segment_embedding")):
        if table is not None and (table.ndim != 2 or table.shape[1] != hidden):
            raise ValueError(f"{name} {table.shape} must be 2-D with word_embedding's hidden size ({hidden})")
    _vector(gamma, hidden, "gamma")
    _vector(beta, hidden, "beta")
    if position_ids is None:
        position_ids = np.broadcast_to(np.arange(seq), (batch, seq))
    elif position_ids.shape not in ((batch, seq), (1, seq)):
        raise ValueError(f"position_ids {position_ids.shape} must be ({batch}, {seq}) or (1, {seq})")
    work = compute_dtype(words.dtype)
    total = words[_ids(ids, words.shape[0], "input_ids", "word_embedding")].astype(work) \
        + positions[_ids(np.broadcast_to(position_ids, (batch, seq)), positions.shape[0], "position",
                         "position_embedding")].astype(work)
    if segments is not None and segment_table is not None:
        total = total + segment_table[_ids(segments, segment_table.shape[0], "segment_ids",
                                           "segment_embedding")].astype(work)
    mean = total.mean(axis=-1, keepdims=True)
    centered = total - mean
    std = np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + work.type(epsilon))
    y = centered / std * gamma.astype(work) + beta.astype(work)
    if mask is None:
        mask_index = np.zeros(batch, np.int32)
    elif mask.shape != ids.shape:
        raise ValueError(f"mask {mask.shape} must have input_ids' shape {ids.shape}")
    else:
        mask_index = (mask == 1).sum(axis=1).astype(np.int32)
    return y.astype(words.dtype), mask_index, total.astype(words.dtype)


def embed_layer_normalization_kernel(op: OpNode) -> PlainKernel:
    epsilon = op.get_float("epsilon")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        ids, segments, words, positions, segment_table, gamma, beta, mask, position_ids = (list(args) + [None] * 9)[:9]
        return _embed(epsilon, ids, segments, words, positions, segment_table, gamma, beta, mask, position_ids)

    return run


def qembed_layer_normalization_kernel(op: OpNode) -> PlainKernel:
    """EmbedLayerNormalization on int8/uint8 tables, each dequantized ((q - zero point) × scale) first."""
    epsilon = op.get_float("epsilon")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        given = list(args) + [None] * (18 - len(args))
        tables = [given[i] for i in (2, 3, 4, 5, 6)]  # word, position, segment, gamma, beta
        scales, zeros = given[8:13], given[13:18]
        floats = [None if q is None or s is None else
                  ((q.astype(np.float32) - (0.0 if z is None else z.astype(np.float32))) * s.astype(np.float32))
                  for q, s, z in zip(tables, scales, zeros)]
        words, positions, segment_table, gamma, beta = floats
        if words is None or positions is None or gamma is None or beta is None:
            raise ValueError("the word and position embeddings, gamma and beta come with their scales")
        return _embed(epsilon, given[0], given[1], words, positions, segment_table, gamma, beta, given[7], None)[:2]

    return run


KERNELS: dict[str, KernelFactory] = {
    "EmbedLayerNormalization": embed_layer_normalization_kernel,
    "QEmbedLayerNormalization": qembed_layer_normalization_kernel,
    "SkipLayerNormalization": _skip_norm(simplified=False),
    "SkipSimplifiedLayerNormalization": _skip_norm(simplified=True),
}
