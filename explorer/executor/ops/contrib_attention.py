"""onnxruntime's Attention (BERT's and GPT-2's fused self-attention, Q/K/V projected by one weight), QAttention (the
same on a quantized input and weights) and MultiHeadAttention (Q, K, V given, self or cross attention), as its CPU
kernels compute them (com.microsoft).

Scores are Q·Kᵀ × scale (1/sqrt(head size) by default) plus the attention bias and the mask, softmaxed over the
keys in float32, times V. The mask is additive: a key a mask excludes gets `mask_filter_value` (-10000); a key
after a query's position under `unidirectional` gets float32's lowest value. Mask forms: (B) key counts (right
padding), (2B) ends then starts (left padding too), (B, T) and (B, S, T) of 0/1. Past keys and values (Attention's
stacked `past`, MultiHeadAttention's past_key/past_value) are prepended; present holds them with the new ones."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .contrib_quantize import integer_product_to_float
from .shared import compute_dtype

DOMAIN = "com.microsoft"
LOWEST = float(np.finfo(np.float32).min)


def split_heads(x: np.ndarray, heads: int, what: str) -> np.ndarray:
    """(B, S, heads * size) -> (B, heads, S, size)."""
    if x.ndim != 3 or x.shape[2] % heads:
        raise ValueError(f"{what} {x.shape} must be 3-D (batch, sequence, hidden) with a hidden size that "
                         f"num_heads={heads} divides")
    return x.reshape(x.shape[0], x.shape[1], heads, -1).transpose(0, 2, 1, 3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(B, heads, S, size) -> (B, S, heads * size)."""
    return x.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1)


def padding_mask(mask: np.ndarray | None, batch: int, seq: int, total: int, past: int, causal: bool,
                 filter_value: float) -> np.ndarray | None:
    """The additive mask (B, 1, S, T) of onnxruntime's CPU attention, or None when nothing is masked."""
    if mask is None and not causal:
        return None
    additive = np.zeros((batch, seq, total), np.float32)
    if mask is not None:
        keys = np.arange(total)
        if mask.ndim == 1 and mask.shape[0] in (batch, 2 * batch):
            excluded = keys >= mask[:batch, None]
            if mask.shape[0] == 2 * batch:
                excluded |= keys < np.minimum(mask[batch:, None], total)
            additive[:] = np.where(excluded, filter_value, 0)[:, None, :]
        elif mask.ndim == 2 and mask.shape == (batch, total):
            additive[:] = np.where(mask > 0, 0, filter_value)[:, None, :]
        elif mask.ndim == 3 and mask.shape == (batch, seq, total):
            additive[:] = np.where(mask > 0, 0, filter_value)
        else:
            raise ValueError(f"the mask {mask.shape} is none of (batch,), (2 * batch,), (batch, total) or (batch, "
                             f"sequence, total) with batch {batch}, sequence {seq}, total {total}")
    if causal and seq > 1:
        later = np.arange(total)[None, :] > past + np.arange(seq)[:, None]
        additive[:, later] = LOWEST
    return additive[:, None]


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, bias: np.ndarray | None,
           mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(softmax(Q·Kᵀ × scale + bias + mask)·V, the scores before the softmax), all (B, N, ...) in float32."""
    scores = np.matmul(q, k.swapaxes(-1, -2)) * np.float32(scale)
    if bias is not None:
        if bias.ndim != 4 or bias.shape[2:] != scores.shape[2:] or bias.shape[0] not in (1, scores.shape[0]) \
                or bias.shape[1] not in (1, scores.shape[1]):
            raise ValueError(f"attention_bias {bias.shape} must be (batch or 1, num_heads or 1, {scores.shape[2]}, "
                             f"{scores.shape[3]})")
        scores = scores + bias.astype(np.float32)
    if mask is not None:
        scores = scores + mask
    top = scores.max(axis=-1, keepdims=True, initial=LOWEST)
    exp = np.exp(scores - top)
    probabilities = exp / exp.sum(axis=-1, keepdims=True)
    return np.matmul(probabilities, v), scores


def _unsupported(op: OpNode, names: tuple[str, ...]) -> None:
    for name in names:
        if op.attr(name):
            raise op.error(f"{name}={op.attr(name)} is not supported by explorer (nor by onnxruntime's CPU kernel)")


def _scale(op: OpNode, head_size: int) -> float:
    scale = float(op.attr("scale") or 0.0)
    return scale if scale else 1.0 / float(np.sqrt(np.float32(head_size)))


def _projected_attention(op: OpNode, sizes: list[int] | None) -> Callable[..., tuple[Any, ...]]:
    """Attention's computation from the projected Q|K|V (B, S, q + k + v hidden): heads split, the past prepended,
    masked attention; returns (output, present) in `dtype`, present only when the node asks for it."""
    heads, causal = op.get_int("num_heads"), bool(op.get_int("unidirectional"))
    filter_value = float(op.attr("mask_filter_value", -10000.0))
    wants_present = len(op.node.proto.output) > 1 and bool(op.node.proto.output[1])

    def compute(projected: np.ndarray, mask: np.ndarray | None, past: np.ndarray | None,
                attention_bias: np.ndarray | None, dtype: np.dtype) -> tuple[Any, ...]:
        hidden = sizes or [projected.shape[2] // 3] * 3
        if sum(hidden) != projected.shape[2] or any(size % heads for size in hidden):
            raise ValueError(f"weights of {projected.shape[2]} columns do not split into Q, K, V hidden sizes "
                             f"{hidden} that num_heads={heads} divides")
        q, k, v = (split_heads(part, heads, name) for part, name in
                   zip(np.split(projected, np.cumsum(hidden)[:2], axis=-1), "QKV"))
        past_length = 0
        if past is not None:
            if past.ndim != 5 or past.shape[:3] != (2, projected.shape[0], heads) or past.shape[4] != k.shape[3]:
                raise ValueError(f"past {past.shape} must be (2, batch, num_heads, past_sequence, head_size)")
            past_length = past.shape[3]
            k = np.concatenate([past[0].astype(k.dtype), k], axis=2)
            v = np.concatenate([past[1].astype(v.dtype), v], axis=2)
        batch, seq = projected.shape[:2]
        additive = padding_mask(mask, batch, seq, k.shape[2], past_length, causal, filter_value)
        y, _ = attend(q, k, v, _scale(op, q.shape[3]), attention_bias, additive)
        if not wants_present:
            return (merge_heads(y).astype(dtype),)
        if k.shape != v.shape:
            raise ValueError(f"present stacks K and V, which differ in hidden size ({hidden[1]} and {hidden[2]})")
        return merge_heads(y).astype(dtype), np.stack([k, v]).astype(dtype)

    return compute


def _shared_buffer(op: OpNode, args: Sequence[Any], past: np.ndarray | None, position: int) -> None:
    if (len(args) > position and args[position] is not None) or (op.attr("past_present_share_buffer")
                                                                  and past is not None):
        raise ValueError("a past shared with present (past_present_share_buffer=1, past_sequence_length) is not "
                         "supported by explorer")


def _input_and_weights(x: np.ndarray, weights: np.ndarray) -> None:
    if x.ndim != 3 or weights.ndim != 2 or weights.shape[0] != x.shape[2]:
        raise ValueError(f"input {x.shape} must be (batch, sequence, input_hidden) and weights {weights.shape} "
                         "(input_hidden, q + k + v hidden)")


def attention_kernel(op: OpNode) -> PlainKernel:
    _unsupported(op, ("do_rotary",))
    compute = _projected_attention(op, op.get_ints("qkv_hidden_sizes"))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, weights, bias, mask, past, attention_bias = (list(args) + [None] * 6)[:6]
        _shared_buffer(op, args, past, 6)
        _input_and_weights(x, weights)
        work = compute_dtype(x.dtype)
        projected = np.matmul(x.astype(work), weights.astype(work))
        if bias is not None:
            projected = projected + bias.astype(work)
        return compute(projected, mask, past, attention_bias, x.dtype)

    return run


def qattention_kernel(op: OpNode) -> PlainKernel:
    """Attention on a quantized input and weights: the projection is the exact integer product times
    input_scale · weight_scale (per column of the weights or per tensor), plus the bias, in float32."""
    _unsupported(op, ("do_rotary",))
    compute = _projected_attention(op, None)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, weights, bias, x_scale, w_scale, mask, x_zero, w_zero, past = (list(args) + [None] * 9)[:9]
        _shared_buffer(op, args, past, 9)
        _input_and_weights(x, weights)
        projected = integer_product_to_float(x, x_scale, x_zero, weights, w_scale, w_zero, bias)
        return compute(projected.astype(np.float32), mask, past, None, bias.dtype)

    return run


def _mha_inputs(query: np.ndarray, key: np.ndarray | None, value: np.ndarray | None, bias: np.ndarray | None,
                heads: int, work: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q, K, V as (B, N, S or L, H) from MultiHeadAttention's input forms: separate 3-D ones (the bias added to
    each), packed QKV (B, S, N, 3, H), packed KV (B, L, N, 2, H), or 4-D K and V already in heads."""
    if query.ndim == 5:
        if key is not None or value is not None or query.shape[3] != 3:
            raise ValueError(f"a 5-D query {query.shape} is packed QKV (batch, sequence, num_heads, 3, head_size) "
                             "and comes without key and value")
        query, key, value = (merge_heads(query[:, :, :, j].transpose(0, 2, 1, 3)) for j in range(3))
    elif key is not None and key.ndim == 5:
        if value is not None or key.shape[3] != 2:
            raise ValueError(f"a 5-D key {key.shape} is packed KV (batch, sequence, num_heads, 2, head_size) and "
                             "comes without value")
        key, value = (merge_heads(key[:, :, :, j].transpose(0, 2, 1, 3)) for j in range(2))
    if key is None or value is None:
        raise ValueError("MultiHeadAttention needs key and value (or a packed query)")
    q = query.astype(work)
    hidden = q.shape[-1]
    if bias is not None:
        if bias.ndim != 1 or bias.shape[0] < 2 * hidden:
            raise ValueError(f"bias {bias.shape} must be 1-D (q + k + v hidden)")
        q = q + bias[:hidden].astype(work)
    parts = []
    for x, start, what in ((key, hidden, "key"), (value, 2 * hidden, "value")):
        if x.ndim == 4:
            parts.append(x.astype(work))
            continue
        x = x.astype(work)
        if bias is not None:
            x = x + bias[start:start + x.shape[-1]].astype(work)
        parts.append(split_heads(x, heads, what))
    return split_heads(q, heads, "query"), parts[0], parts[1]


def multi_head_attention_kernel(op: OpNode) -> PlainKernel:
    heads, causal = op.get_int("num_heads"), bool(op.get_int("unidirectional"))
    filter_value = float(op.attr("mask_filter_value", -10000.0))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        query, key, value, bias, mask, attention_bias, past_key, past_value = (list(args) + [None] * 8)[:8]
        if len(args) > 8 and any(a is not None for a in args[8:]):
            raise ValueError("past_sequence_length and cache_indirection (buffer sharing, beam search) are not "
                             "supported by explorer")
        if (past_key is None) != (past_value is None):
            raise ValueError("past_key and past_value come together")
        work = compute_dtype(query.dtype)
        q, k, v = _mha_inputs(query, key, value, bias, heads, work)
        past_length = 0
        if past_key is not None and past_value is not None:
            past_length = past_key.shape[2]
            k = np.concatenate([past_key.astype(work), k], axis=2)
            v = np.concatenate([past_value.astype(work), v], axis=2)
        batch, seq = q.shape[0], q.shape[2]
        additive = padding_mask(mask, batch, seq, k.shape[2], past_length, causal, filter_value)
        y, scores = attend(q, k, v, _scale(op, q.shape[3]), attention_bias, additive)
        dtype = query.dtype
        return merge_heads(y).astype(dtype), k.astype(dtype), v.astype(dtype), scores.astype(dtype)

    return run


KERNELS: dict[str, KernelFactory] = {
    "Attention": attention_kernel,
    "MultiHeadAttention": multi_head_attention_kernel,
    "QAttention": qattention_kernel,
}
