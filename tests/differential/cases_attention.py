"""Attention and RotaryEmbedding (explorer/executor/ops/attention.py): heads as 3-D and 4-D inputs, grouped-query
heads, masks (bool, shorter than the keys, numeric, broadcast, a row with no key), causal with and without a
cache, nonpad_kv_seqlen, softcap, every qk_matmul_output_mode, scale, softmax_precision, sliding windows."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from .gen import rng, schema_types, since_versions, values
from .harness import Case, Cast, run_onnxruntime

TOL = {np.dtype(np.float16): (2e-2, 2e-2), np.dtype(np.float32): (1e-4, 1e-5), np.dtype(np.float64): (1e-6, 1e-8)}
SHORT_MASK = ("onnxruntime refuses a mask shorter than the keys; the spec pads it with exclusions: judged by "
              "onnxruntime on the padded mask")
IN_FLOAT32 = ("bfloat16 and float16 values are exact in float32 (float64 is compared at float32's precision); the "
              "result is compared at the case's tolerance")
ATTENTION_CAST = Cast(np.float32, IN_FLOAT32, params=("T1", "T2"))
ROTARY_CAST = Cast(np.float32, IN_FLOAT32)
LOWEST = "onnxruntime writes the lowest float where the spec's bias (qk_matmul_output mode 2) is -inf"


def _judged_as(inputs: list, attrs: dict, version: int, outputs: int = 1) -> list[np.ndarray]:
    """onnxruntime's outputs for the same node on other inputs (which the spec says compute the same), with its
    lowest-float stand-in for -inf turned into -inf."""
    result = run_onnxruntime([Case("Attention", version, inputs, attrs, outputs=outputs)])[0]
    assert not isinstance(result, str), result
    return [np.where(r <= np.finfo(r.dtype).min, -np.inf, r).astype(r.dtype) for r in result]


def _tol(dtype: np.dtype) -> tuple[float, float]:
    return TOL.get(np.dtype(dtype), (3e-2, 3e-2))


def _qkv(r: np.random.Generator, dtype: object, q: tuple[int, ...], k: tuple[int, ...], v: tuple[int, ...]
         ) -> list[np.ndarray]:
    return [values(r, q, dtype, -1, 1), values(r, k, dtype, -1, 1), values(r, v, dtype, -1, 1)]


def _attention(version: int) -> list[Case]:
    found = []
    r = rng("Attention", version)
    f32 = np.float32
    four = _qkv(r, f32, (2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3))
    three_gqa = _qkv(r, f32, (2, 3, 8), (2, 5, 4), (2, 5, 6))  # 4 query heads of 2, 2 key/value heads
    gqa = {"q_num_heads": 4, "kv_num_heads": 2}
    found.append(Case("Attention", version, four))
    found.append(Case("Attention", version, three_gqa, gqa))
    found.append(Case("Attention", version, four, {"scale": 0.3}))
    bool_mask = values(r, (3, 4), np.bool_)  # shorter than the 5 keys: the last key is excluded
    bool_mask[:, 0] = True
    padded = np.concatenate([bool_mask, np.zeros((3, 1), bool)], axis=1)
    found.append(Case("Attention", version, [*four, bool_mask], expected=_judged_as([*four, padded], {}, version),
                      reason=SHORT_MASK))
    no_key = np.ones((2, 1, 3, 5), bool)
    no_key[1, 0, 2] = False  # that query sees no key: a zero row
    found.append(Case("Attention", version, [*four, no_key], outputs=4, attrs={"qk_matmul_output_mode": 3}))
    found.append(Case("Attention", version, [*four, values(r, (2, 1, 3, 5), f32, -2, 2)]))
    square = _qkv(r, f32, (1, 2, 4, 4), (1, 2, 4, 4), (1, 2, 4, 4))
    found.append(Case("Attention", version, square, {"is_causal": 1}))
    past = [values(r, (1, 2, 3, 4), f32, -1, 1), values(r, (1, 2, 3, 4), f32, -1, 1)]
    step = _qkv(r, f32, (1, 2, 2, 4), (1, 2, 2, 4), (1, 2, 2, 4))
    found.append(Case("Attention", version, [*step, None, *past], {"is_causal": 1}, outputs=4))
    with_mask = [*step, values(r, (2, 5), np.bool_) | np.eye(2, 5, 3, dtype=bool), *past]
    causal_biased = {"is_causal": 1, "qk_matmul_output_mode": 2}
    found.append(Case("Attention", version, with_mask, causal_biased, outputs=4,
                      expected=_judged_as(with_mask, causal_biased, version, 4), reason=LOWEST))
    for mode in (0, 1, 2, 3):
        found.append(Case("Attention", version, [*four, values(r, (3, 5), f32, -1, 1)],
                          {"softcap": 2.0, "qk_matmul_output_mode": mode}, outputs=4))
    for dtype in schema_types("Attention", version, "T1", exotic=True):
        typed = _qkv(rng("Attention", version, str(dtype)), dtype, (1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4))
        found.append(Case("Attention", version, typed, {"is_causal": 1}, tol=_tol(dtype), dtype_sweep=True,
                          cast=ATTENTION_CAST))
    halves = _qkv(r, np.float16, (1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4))
    found.append(Case("Attention", version, halves, {"softmax_precision": TensorProto.FLOAT}, tol=_tol(np.float16)))
    if version >= 24:
        cache = _qkv(r, f32, (2, 2, 2, 4), (2, 2, 6, 4), (2, 2, 6, 4))
        lengths = np.array([4, 6], np.int64)
        found.append(Case("Attention", version, [*cache, None, None, None, lengths]))
        found.append(Case("Attention", version, [*cache, None, None, None, lengths], {"is_causal": 1}))
    if version >= 25:
        wide = _qkv(r, f32, (1, 2, 4, 4), (1, 2, 6, 4), (1, 2, 6, 4))
        for left, right, causal in ((2, 1, 0), (2, 0, 1), (-1, 1, 0), (1, -1, 1)):
            found.append(Case("Attention", version, wide, {"left_window_size": left, "right_window_size": right,
                                                            "is_causal": causal}))
    found.append(Case("Attention", version, three_gqa, {"q_num_heads": 3, "kv_num_heads": 2}, error="divides"))
    return found


def _rotary(r: np.random.Generator, dtype: object, batch: int, seq: int, half: int, positions: bool
            ) -> list[np.ndarray]:
    """cos/sin caches of angles position * frequency: (max position, half) with position_ids, else (batch, seq,
    half)."""
    rows = 8 if positions else seq
    angles = np.arange(rows)[:, None] * (1.0 / 10000 ** (np.arange(half) / half))
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    if positions:
        return [cos, sin, values(r, (batch, seq), np.int64, 0, 7)]
    return [np.broadcast_to(cos, (batch, seq, half)).copy(), np.broadcast_to(sin, (batch, seq, half)).copy()]


def _rotary_embedding() -> list[Case]:
    found = []
    for dtype in schema_types("RotaryEmbedding", 23, exotic=True):
        for interleaved in (0, 1):
            for positions in (True, False):
                r = rng("RotaryEmbedding", str(dtype), interleaved, positions)
                x4 = values(r, (2, 3, 4, 8), dtype, -2, 2)  # (batch, heads, sequence, head size)
                found.append(Case("RotaryEmbedding", 23, [x4, *_rotary(r, dtype, 2, 4, 4, positions)],
                                  {"interleaved": interleaved}, tol=_tol(dtype), dtype_sweep=True,
                                  cast=ROTARY_CAST))
                x3 = values(r, (2, 4, 24), dtype, -2, 2)  # 3 heads of 8
                found.append(Case("RotaryEmbedding", 23, [x3, *_rotary(r, dtype, 2, 4, 2, positions)],
                                  {"interleaved": interleaved, "num_heads": 3, "rotary_embedding_dim": 4},
                                  tol=_tol(dtype), dtype_sweep=True, cast=ROTARY_CAST))
    x = values(rng("RotaryEmbedding", "refused"), (1, 2, 4, 8), np.float32)
    found.append(Case("RotaryEmbedding", 23, [x, *_rotary(rng("r"), np.float32, 1, 4, 3, False)],
                      error="half the rotated size"))
    return found


def cases() -> list[Case]:
    return [case for version in since_versions("Attention") for case in _attention(version)] + _rotary_embedding()
