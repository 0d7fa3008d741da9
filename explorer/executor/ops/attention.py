"""Attention (23, 24, 25) and RotaryEmbedding (23), as their specs define them; half precision computes in float32.

Attention: Q, K, V of shape (batch, heads, sequence, head size), or 3-D (batch, sequence, heads * head size) with
q_num_heads/kv_num_heads; grouped-query heads share K/V heads (each K/V head repeated for consecutive Q heads);
past_key/past_value are prepended to K/V (present_key/present_value). The scores (Q K^T times `scale`, default
1/sqrt(head size)) are softcapped, then biased by attn_mask (bool: False excludes, shorter masks padded with
exclusions; numbers: added), is_causal (bottom-right aligned: key j for query i iff j <= i + offset), the padding
of nonpad_kv_seqlen (24+) and the sliding window (25+), then softmaxed (in softmax_precision); a query with no key
left gets zeros. qk_matmul_output is the scores at mode 0, softcapped at 1, biased at 2, softmaxed at 3.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from .base import KernelFactory, OpNode, PlainKernel
from .shared import compute_dtype, node_attributes


def _heads(x: np.ndarray, heads: int | None, what: str) -> np.ndarray:
    """A 3-D (batch, sequence, heads * size) input as (batch, heads, sequence, size); 4-D ones as they are."""
    if x.ndim == 4:
        return x
    if x.ndim != 3 or not heads or x.shape[2] % heads:
        raise ValueError(f"{what} {x.shape} must be 4-D, or 3-D with a hidden size that its number of heads "
                         f"({heads}) divides")
    return x.reshape(x.shape[0], x.shape[1], heads, -1).transpose(0, 2, 1, 3)


def _mask_bias(mask: np.ndarray, total: int, work: np.dtype) -> np.ndarray:
    """attn_mask as an additive bias over `total` keys (a shorter mask excludes the keys past its end)."""
    bias = np.where(mask, 0.0, -np.inf).astype(work) if mask.dtype == np.bool_ else mask.astype(work)
    short = total - bias.shape[-1]
    if short > 0:
        bias = np.pad(bias, [(0, 0)] * (bias.ndim - 1) + [(0, short)], constant_values=-np.inf)
    return bias


def _allowed(q_len: int, total: int, offset: np.ndarray, causal: bool, left: int, right: int) -> np.ndarray:
    """(batch or 1, 1, q, keys) bool: which keys each query may see by position (causal and window)."""
    position = np.arange(q_len)[:, None] + offset.reshape(-1, 1, 1, 1)  # absolute position of each query
    key = np.arange(total)
    allowed = np.ones(position.shape[:3] + (total,), dtype=bool)
    if causal:
        allowed &= key <= position
    if left >= 0:
        allowed &= key >= position - left
    if right >= 0:
        allowed &= key <= position + right
    return allowed


def attention_kernel(op: OpNode) -> PlainKernel:
    version, attrs = node_attributes(op)
    causal, softcap = bool(attrs["is_causal"]), float(attrs["softcap"] or 0.0)
    mode = int(attrs["qk_matmul_output_mode"])
    q_heads, kv_heads = attrs["q_num_heads"], attrs["kv_num_heads"]
    precision = attrs["softmax_precision"]
    left, right = (-1 if attrs.get(side) is None else int(attrs[side])
                   for side in ("left_window_size", "right_window_size"))
    if mode not in (0, 1, 2, 3):
        raise ValueError(f"qk_matmul_output_mode {mode} is none of 0, 1, 2, 3")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        q3, k3, v3 = args[:3]
        mask, past_key, past_value, nonpad = (list(args[3:]) + [None] * 4)[:4]
        if (past_key is None) != (past_value is None):
            raise ValueError("past_key and past_value come together")
        if nonpad is not None and past_key is not None:
            raise ValueError("nonpad_kv_seqlen cannot be combined with past_key/past_value")
        if q3.ndim == 4 and version >= 25 and (q_heads is not None or kv_heads is not None):
            raise ValueError("q_num_heads and kv_num_heads are for 3-D inputs only")
        q, k, v = _heads(q3, q_heads, "Q"), _heads(k3, kv_heads, "K"), _heads(v3, kv_heads, "V")
        if past_key is not None:
            k, v = np.concatenate([past_key, k], axis=2), np.concatenate([past_value, v], axis=2)
        present_key, present_value = k, v
        if q.shape[1] % k.shape[1] or k.shape[1] != v.shape[1]:
            raise ValueError(f"{q.shape[1]} query heads do not share {k.shape[1]} key and {v.shape[1]} value heads")
        work = compute_dtype(q.dtype)
        scale = attrs["scale"] if attrs["scale"] is not None else 1 / np.sqrt(q.shape[3])
        root = np.sqrt(np.asarray(scale, dtype=np.float64)).astype(q.dtype)  # sqrt(scale) in Q's type, as the spec
        group = q.shape[1] // k.shape[1]
        keys = np.repeat(k, group, axis=1).astype(work) * root.astype(work)

        def in_q(a: np.ndarray) -> np.ndarray:  # each stage of the spec ends in Q's type
            return a.astype(q.dtype).astype(work)

        scores = in_q(np.matmul(in_q(q.astype(work) * root.astype(work)), in_q(keys).transpose(0, 1, 3, 2)))
        raw = scores
        if softcap > 0:
            scores = in_q(softcap * np.tanh(scores / softcap))
        q_len, total = scores.shape[2], scores.shape[3]
        bias = np.zeros((q_len, total), dtype=work)
        if mask is not None:
            bias = bias + _mask_bias(mask, total, work)
        if causal or left >= 0 or right >= 0:
            offset = (nonpad.astype(np.int64) - q_len if nonpad is not None and past_key is None
                      else np.array([0 if past_key is None else past_key.shape[2]]))
            bias = bias + np.where(_allowed(q_len, total, offset, causal, left, right), 0.0, -np.inf).astype(work)
        if nonpad is not None:
            padding = np.arange(total) < nonpad.reshape(-1, 1, 1, 1)
            bias = bias + np.where(padding, 0.0, -np.inf).astype(work)
        biased = in_q(scores + bias)
        soft_type = q.dtype if precision is None else np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(precision)))
        if soft_type.type.__module__ != "numpy":  # bfloat16: numpy computes in float32
            soft_type = np.dtype(np.float32)
        logits = biased.astype(soft_type)
        empty = np.isneginf(np.max(bias, axis=-1, keepdims=True))  # no key left for the query
        top = np.max(logits, axis=-1, keepdims=True)
        exp = np.exp(logits - np.where(np.isfinite(top), top, 0).astype(soft_type))
        total_exp = np.sum(exp, axis=-1, keepdims=True)
        probabilities = np.where(empty, 0, exp / np.where(total_exp == 0, 1, total_exp))
        probabilities = probabilities.astype(q.dtype).astype(work)  # the softmax ends in Q's type
        y = np.matmul(probabilities, np.repeat(v, group, axis=1).astype(work)).astype(q.dtype)
        if q3.ndim == 3:
            y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
        qk = (raw, scores, biased, probabilities)[mode]
        return y, present_key, present_value, qk.astype(q.dtype)

    return run


def rotary_embedding_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    interleaved, rotary_dim, heads = bool(attrs["interleaved"]), int(attrs["rotary_embedding_dim"]), attrs["num_heads"]

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, cos, sin = args[:3]
        positions = args[3] if len(args) > 3 else None
        if x.ndim == 4:
            seq = x.transpose(0, 2, 1, 3)  # (batch, sequence, heads, size)
        elif x.ndim == 3 and heads and x.shape[2] % int(heads) == 0:
            seq = x.reshape(x.shape[0], x.shape[1], int(heads), -1)
        else:
            raise ValueError(f"X {x.shape} must be 4-D, or 3-D with num_heads dividing its hidden size")
        dim = rotary_dim or seq.shape[3]
        if positions is not None:
            cos, sin = cos[positions], sin[positions]
        half = dim // 2
        if cos.shape[-1] != half or sin.shape[-1] != half or dim % 2 or dim > seq.shape[3]:
            raise ValueError(f"the caches' last axis ({cos.shape[-1]}, {sin.shape[-1]}) must be half the rotated "
                             f"size {dim} (even, at most the head size {seq.shape[3]})")
        out = rotate(seq, cos, sin, interleaved, dim)
        return (out.transpose(0, 2, 1, 3) if x.ndim == 4 else out.reshape(x.shape),)

    return run


def rotate(seq: np.ndarray, cos: np.ndarray, sin: np.ndarray, interleaved: bool, dim: int) -> np.ndarray:
    """The first `dim` features of each head of `seq` (batch, sequence, heads, size) rotated by the angles whose
    cosines and sines (batch or 1, sequence, dim / 2) are given: as pairs of neighbours when `interleaved`, else the
    first half against the second; the other features as they are. Computed in float32 for half precision."""
    work = compute_dtype(seq.dtype)
    half = dim // 2
    cos, sin = cos.astype(work)[:, :, None, :], sin.astype(work)[:, :, None, :]
    rotated = seq[..., :dim].astype(work)
    first, second = (rotated[..., 0::2], rotated[..., 1::2]) if interleaved else \
        (rotated[..., :half], rotated[..., half:])
    real, imaginary = cos * first - sin * second, sin * first + cos * second
    joined = np.stack([real, imaginary], axis=-1).reshape(rotated.shape) if interleaved else \
        np.concatenate([real, imaginary], axis=-1)
    return np.concatenate([joined.astype(seq.dtype), seq[..., dim:]], axis=-1)


KERNELS: dict[str, KernelFactory] = {"Attention": attention_kernel, "RotaryEmbedding": rotary_embedding_kernel}
