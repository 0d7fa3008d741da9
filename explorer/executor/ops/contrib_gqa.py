"""onnxruntime's GroupQueryAttention and RotaryEmbedding (com.microsoft), as its CPU kernels compute them.

GroupQueryAttention: Q has num_heads heads, K and V kv_num_heads (each shared by num_heads / kv_num_heads
consecutive query heads), given apart or packed in the query. Per batch item b the keys are its past ones then
the new ones: T_b = seqlens_k[b] + 1 in all, P_b = T_b - S of them past (none on a first prompt: S > 1 and S =
total_sequence_length). Query s sits at position P_b + s; it sees the keys up to it (`causal`), the last
local_window_size of them (`local_window_size`), and none at T_b or after. Rotary embedding (`do_rotary`)
turns Q and K at those positions (or position_ids). Scores Q·Kᵀ × scale are biased (attention_bias), softcapped
(softcap × tanh(x / softcap)) and softmaxed, with 1 (smooth_softmax) or exp(head_sink) added to the denominator.
present_key/present_value are (B, kv_num_heads, max(total_sequence_length, past length), H): the past rows then
the new ones, zeros after T_b. Quantized caches, windowed caches and query_seqlens are refused.

RotaryEmbedding: x (B, S, hidden) or (B, N, S, H) turned at position_ids (B, S), or at position_ids[0] + s for a
one-element position_ids, by the caches' cosines and sines."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .attention import rotate
from .base import KernelFactory, OpNode, PlainKernel
from .contrib_attention import merge_heads, split_heads

DOMAIN = "com.microsoft"
_REFUSED_INPUTS = {12: "k_scale", 13: "v_scale", 16: "query_seqlens"}


def _refuse_settings(op: OpNode) -> None:
    for name, allowed in (("k_quant_type", "NONE"), ("v_quant_type", "NONE")):
        if op.get_str(name) != allowed:
            raise op.error(f"{name}={op.get_str(name)!r}: quantized KV caches are not supported by explorer")
    if op.attr("kv_cache_bit_width"):
        raise op.error(f"kv_cache_bit_width={op.attr('kv_cache_bit_width')}: quantized KV caches are not supported "
                       "by explorer")
    if op.get_int("sliding_window_cache"):
        raise op.error("sliding_window_cache=1 (window-sized KV buffers) is not supported by explorer")
    inputs = list(op.node.proto.input)
    for index, name in _REFUSED_INPUTS.items():
        if index < len(inputs) and inputs[index]:
            raise op.error(f"the {name} input is not supported by explorer")


def _positions(seqlens: np.ndarray, seq: int, first_prompt: bool) -> tuple[np.ndarray, np.ndarray]:
    """(past length per item (B,), each query's position (B, S))."""
    totals = seqlens.astype(np.int64) + 1
    past = np.zeros_like(totals) if first_prompt else totals - seq
    return past, past[:, None] + np.arange(seq)[None, :]


def _rms(x: np.ndarray, weight: np.ndarray, epsilon: float) -> np.ndarray:
    """Per-head RMS normalization of (B, heads, S, H) by a (H,) weight."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(epsilon)) * weight.astype(np.float32)


def _softmax(scores: np.ndarray, allowed: np.ndarray, sink: np.ndarray | None) -> np.ndarray:
    """Softmax over the allowed keys, `sink` (per head, or 0 for smooth softmax) added to the denominator."""
    masked = np.where(allowed, scores, -np.inf)
    top = masked.max(axis=-1, keepdims=True, initial=-np.inf)
    if sink is not None:
        top = np.maximum(top, sink)
    top = np.where(np.isfinite(top), top, 0)
    exp = np.where(allowed, np.exp(masked - top), 0)
    total = exp.sum(axis=-1, keepdims=True)
    if sink is not None:
        total = total + np.exp(sink - top)
    return exp / np.where(total == 0, 1, total)


def group_query_attention_kernel(op: OpNode) -> PlainKernel:
    _refuse_settings(op)
    heads, kv_heads = op.get_int("num_heads"), op.get_int("kv_num_heads")
    causal, window = bool(op.get_int("causal")), op.get_int("local_window_size")
    rotary, interleaved = bool(op.attr("do_rotary")), bool(op.attr("rotary_interleaved"))
    softcap, smooth, qk_output = float(op.attr("softcap") or 0.0), op.get_int("smooth_softmax"), op.get_int("qk_output")
    shared_epsilon = op.get_float("qk_norm_epsilon")
    epsilons = [float(op.attr(name) or shared_epsilon) for name in ("q_norm_epsilon", "k_norm_epsilon")]
    if heads % kv_heads:
        raise op.error(f"num_heads={heads} is not a multiple of kv_num_heads={kv_heads}")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        query, key, value, past_key, past_value, seqlens, total = args[:7]
        cos, sin, position_ids, bias, sink = (list(args[7:]) + [None] * 5)[:5]
        q_norm, k_norm = (list(args[14:]) + [None, None])[:2]
        batch, seq = query.shape[:2]
        if key is None:  # packed: (B, S, (heads + 2 kv_heads) * H)
            size = query.shape[2] // (heads + 2 * kv_heads)
            query, key, value = np.split(query, [heads * size, (heads + kv_heads) * size], axis=2)
        if key.shape[1] != seq or value is None:
            raise ValueError(f"key {key.shape} and value must have the query's sequence length {seq}")
        q, k, v = (split_heads(x.astype(np.float32), n, name)
                   for x, n, name in ((query, heads, "query"), (key, kv_heads, "key"), (value, kv_heads, "value")))
        if (q_norm is None) != (k_norm is None):
            raise ValueError("q_norm_weight and k_norm_weight come together")
        if q_norm is not None and k_norm is not None:
            q, k = _rms(q, q_norm, epsilons[0]), _rms(k, k_norm, epsilons[1])
        total_length = int(np.asarray(total).reshape(-1)[0])
        past, positions = _positions(seqlens.reshape(-1), seq, seq > 1 and seq == total_length)
        if rotary:
            if cos is None or sin is None:
                raise ValueError("do_rotary=1 needs cos_cache and sin_cache")
            at = position_ids if position_ids is not None else positions
            dim = 2 * cos.shape[1]
            q, k = (rotate(x.transpose(0, 2, 1, 3), cos[at], sin[at], interleaved, dim).transpose(0, 2, 1, 3)
                    for x in (q, k))
        past_length = 0 if past_key is None else past_key.shape[2]
        length = max(total_length, past_length)
        slot = np.arange(length)
        new_row = np.clip(slot[None, :] - past[:, None], 0, seq - 1)  # (B, length): which new row lands there
        is_past = slot[None, :] < past[:, None]
        is_new = ~is_past & (slot[None, :] < (past + seq)[:, None])

        def present(old: np.ndarray | None, new: np.ndarray) -> np.ndarray:
            picked = np.take_along_axis(new, new_row[:, None, :, None], axis=2)
            padded = np.zeros_like(picked) if old is None else \
                np.pad(old.astype(np.float32), [(0, 0), (0, 0), (0, length - past_length), (0, 0)])
            return np.where(is_new[:, None, :, None], picked, np.where(is_past[:, None, :, None], padded, 0))

        keys, values = present(past_key, k), present(past_value, v)
        group = heads // kv_heads
        scale = float(op.attr("scale") or 0.0) or 1.0 / float(np.sqrt(np.float32(q.shape[3])))
        scores = np.matmul(q, np.repeat(keys, group, axis=1).swapaxes(-1, -2)) * np.float32(scale)
        if bias is not None:
            scores = scores + np.broadcast_to(bias, bias.shape[:2] + (seq, bias.shape[3]))[..., :length]
        if softcap > 0:
            scores = np.float32(softcap) * np.tanh(scores / np.float32(softcap))
        allowed = slot[None, None, :] < (seqlens.reshape(-1, 1, 1).astype(np.int64) + 1)
        if causal:
            allowed = allowed & (slot[None, None, :] <= positions[:, :, None])
        if window >= 0:
            allowed = allowed & (slot[None, None, :] > positions[:, :, None] - window)
        sink_values = None if sink is None else sink.astype(np.float32).reshape(1, -1, 1, 1)
        if sink_values is None and smooth == 1:
            sink_values = np.zeros((1, 1, 1, 1), np.float32)
        probabilities = _softmax(scores, allowed[:, None], sink_values)
        y = np.matmul(probabilities, np.repeat(values, group, axis=1))
        dtype = query.dtype
        qk = scores if qk_output == 1 else probabilities
        return merge_heads(y).astype(dtype), keys.astype(dtype), values.astype(dtype), qk.astype(dtype)

    return run


def rotary_embedding_kernel(op: OpNode) -> PlainKernel:
    if op.attr("is_packed_batching"):
        raise op.error("is_packed_batching=1 (ragged batches) is not supported by explorer")
    interleaved, heads, rotary_dim = bool(op.attr("interleaved")), int(op.attr("num_heads") or 0), \
        int(op.attr("rotary_embedding_dim") or 0)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, position_ids, cos, sin = args[:4]
        dim = rotary_dim or 2 * cos.shape[1]
        if x.ndim == 4:
            seq = x.transpose(0, 2, 1, 3)
        elif x.ndim == 3:
            size = x.shape[2] // heads if heads else dim
            if not size or x.shape[2] % size:
                raise ValueError(f"input {x.shape}: its hidden size is no multiple of the head size {size}")
            seq = x.reshape(x.shape[0], x.shape[1], -1, size)
        else:
            raise ValueError(f"input {x.shape} must be 3-D (batch, sequence, hidden) or 4-D (batch, heads, "
                             "sequence, head size)")
        if position_ids.size == 1:
            at = int(position_ids.reshape(-1)[0]) + np.arange(seq.shape[1])[None, :]
        elif position_ids.shape == seq.shape[:2]:
            at = position_ids
        else:
            raise ValueError(f"position_ids {position_ids.shape} must be (batch, sequence) = {seq.shape[:2]} or "
                             "hold one offset")
        if np.any((at < 0) | (at >= cos.shape[0])):
            raise ValueError(f"a position is outside the caches' {cos.shape[0]} rows")
        if dim > seq.shape[3] or cos.shape[1] * 2 < dim:
            raise ValueError(f"the rotated size {dim} exceeds the head size {seq.shape[3]} or the caches")
        out = rotate(seq, cos[at][..., :dim // 2], sin[at][..., :dim // 2], interleaved, dim)
        return (out.transpose(0, 2, 1, 3) if x.ndim == 4 else out.reshape(x.shape),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "GroupQueryAttention": group_query_attention_kernel,
    "RotaryEmbedding": rotary_embedding_kernel,
}
