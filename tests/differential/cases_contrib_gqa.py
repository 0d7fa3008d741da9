"""onnxruntime's GroupQueryAttention and RotaryEmbedding (explorer/executor/ops/contrib_gqa.py)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from .contrib_support import DOMAIN, float_sweep, ort_graph
from .gen import rng, values
from .harness import Case, run_onnxruntime

F32 = np.dtype(np.float32)
TOL = (1e-4, 1e-5)
HALF = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}
BATCH, HEADS, KV_HEADS, SIZE, MAX_POSITIONS = 2, 4, 2, 8, 16


def _i32(*v: int) -> np.ndarray:
    return np.array(v, np.int32)


def _gqa(r: np.random.Generator, dtype: np.dtype, seq: int, seqlens: tuple[int, ...], total: int, past: int = 0,
         packed: bool = False, rotary: bool = False, extra: dict | None = None, outputs: int = 3, **attrs) -> Case:
    """A case of `len(seqlens)` batch items; head size 16 with rotary embedding (onnxruntime's CPU kernel wants a
    multiple of 16 there), else 8."""
    batch, size = len(seqlens), 16 if rotary else SIZE
    q = values(r, (batch, seq, HEADS * size), dtype, -1, 1)
    k, v = (values(r, (batch, seq, KV_HEADS * size), dtype, -1, 1) for _ in range(2))
    inputs: list = [np.concatenate([q, k, v], axis=2), None, None] if packed else [q, k, v]
    caches = [values(r, (batch, KV_HEADS, past, size), dtype, -1, 1) for _ in range(2)] if past else [None, None]
    inputs += caches + [_i32(*seqlens), _i32(total)]
    tail: list = [None] * 9
    if rotary:
        angles = np.arange(MAX_POSITIONS)[:, None] * (0.5 ** np.arange(size // 2))[None, :]
        tail[0], tail[1] = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    for index, value in (extra or {}).items():
        tail[index - 7] = value
    inputs += tail
    while inputs[-1] is None:
        inputs.pop()
    types = [None, None, None, F32 if dtype == F32 else dtype][:outputs]
    return Case("GroupQueryAttention", 1, inputs, {"num_heads": HEADS, "kv_num_heads": KV_HEADS, **attrs},
                outputs=outputs, domain=DOMAIN, tol=HALF.get(dtype.name, TOL), output_types=types)


def cases() -> list[Case]:
    return _gqa_cases() + _rotary_cases()


def _gqa_cases() -> list[Case]:
    # bfloat16: onnxruntime's CPU kernel lacks it and its int32 inputs cannot be judged as float32
    found = float_sweep("GroupQueryAttention", lambda r, t: _gqa(r, t, 4, (3, 3), 4), skip=("bfloat16",))
    r = rng("GroupQueryAttention", "forms")
    found += [
        _gqa(r, F32, 4, (3, 3), 4, packed=True),
        _gqa(r, F32, 4, (3, 1), 4, outputs=1),  # a right-padded prompt
        _gqa(r, F32, 1, (5, 5), 6, past=5),  # one new token
        # a cache longer than the sequences (without present, onnxruntime reads it as if as long as the total)
        _gqa(r, F32, 1, (5, 3), 6, past=8),
        _gqa(r, F32, 3, (6,), 7, past=4),  # a later chunk of a prompt (onnxruntime takes one batch item there)
        _gqa(r, F32, 4, (3, 3), 4, rotary=True, do_rotary=1),
        _gqa(r, F32, 1, (5, 5), 6, past=5, rotary=True, do_rotary=1, rotary_interleaved=1),
        _gqa(r, F32, 3, (6,), 7, past=4, packed=True, rotary=True, do_rotary=1),
        _gqa(r, F32, 4, (3, 3), 4, local_window_size=1),
        _gqa(r, F32, 1, (5, 5), 6, past=5, local_window_size=2),
        _gqa(r, F32, 4, (3, 3), 4, causal=0, outputs=4, qk_output=1),
        _gqa(r, F32, 4, (3, 3), 4, softcap=0.5, scale=0.7, outputs=4, qk_output=2),
        _gqa(r, F32, 4, (3, 3), 4, smooth_softmax=1),
        _gqa(r, F32, 4, (3, 3), 4, extra={10: values(r, (1, HEADS, 4, 4), F32)}),
        _gqa(r, F32, 1, (5, 5), 6, past=5, extra={10: values(r, (BATCH, 1, 1, 6), F32)}),
        _gqa(r, F32, 4, (3, 3), 4, extra={11: values(r, (HEADS,), F32)}, smooth_softmax=0),
        _gqa(r, F32, 4, (3, 3), 4, k_quant_type="NONE", v_quant_type="NONE", sliding_window_cache=0),
    ]
    found += _normalized_heads(r)
    found.append(_gqa(r, F32, 4, (3, 3), 4, k_quant_type="PER_TENSOR"))
    found[-1].error, found[-1].tol = "quantized KV caches are not supported", None
    found.append(_gqa(r, F32, 4, (3, 3), 4, kv_cache_bit_width=0))
    found.append(_gqa(r, F32, 4, (3, 3), 4, kv_cache_bit_width=8))
    found[-1].error, found[-1].tol = "quantized KV caches are not supported", None
    found.append(_gqa(r, F32, 1, (5, 5), 6, past=5, sliding_window_cache=1, local_window_size=3))
    found[-1].error, found[-1].tol = "sliding_window_cache=1", None
    return found


def _normalized_heads(r: np.random.Generator) -> list[Case]:
    """Q and K RMS-normalized per head (q_norm_weight, k_norm_weight): onnxruntime does it only on CUDA and WebGPU;
    judged by onnxruntime's GroupQueryAttention on Q and K normalized by its SimplifiedLayerNormalization."""
    found = []
    for attrs, epsilons in (({"qk_norm_epsilon": 1e-3}, (1e-3, 1e-3)),
                            ({"q_norm_epsilon": 1e-5, "k_norm_epsilon": 0.25}, (1e-5, 0.25))):
        case = _gqa(r, F32, 4, (3, 3), 4, **attrs)
        weights = [values(r, (SIZE,), F32) for _ in range(2)]
        plain = _gqa(r, F32, 4, (3, 3), 4)
        plain.inputs = list(case.inputs)
        for index, weight, epsilon in zip((0, 1), weights, epsilons):
            x = case.inputs[index]
            nodes = [helper.make_node("Reshape", ["x", "heads"], ["split"]),
                     helper.make_node("SimplifiedLayerNormalization", ["split", "w"], ["normed"], epsilon=epsilon),
                     helper.make_node("Reshape", ["normed", "back"], ["y"])]
            feeds = {"x": x, "heads": np.array([*x.shape[:2], -1, SIZE], np.int64), "w": weight,
                     "back": np.array(x.shape, np.int64)}
            plain.inputs[index] = ort_graph(nodes, feeds, ["y"])[0]
        case.inputs += [None] * (14 - len(case.inputs)) + weights
        case.expected, case.reason = run_onnxruntime([plain])[0], (
            "onnxruntime normalizes Q and K per head only on CUDA and WebGPU: judged by onnxruntime on Q and K "
            "normalized by its SimplifiedLayerNormalization")
        found.append(case)
    return found


def _rotary(r: np.random.Generator, dtype: np.dtype, dims: tuple[int, ...], positions: np.ndarray,
            half: int = SIZE // 2, **attrs) -> Case:
    angles = np.arange(MAX_POSITIONS)[:, None] * (0.7 ** np.arange(half))[None, :]
    inputs = [values(r, dims, dtype, -2, 2), positions, np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)]
    return Case("RotaryEmbedding", 1, inputs, attrs, domain=DOMAIN, tol=HALF.get(dtype.name, TOL))


def _rotary_cases() -> list[Case]:
    grid = np.array([[0, 3, 5], [2, 2, 9]], np.int64)
    found = float_sweep("RotaryEmbedding", lambda r, t: _rotary(r, t, (2, 3, 16), grid, num_heads=2))
    r = rng("RotaryEmbedding", "forms")
    found += [
        _rotary(r, F32, (2, 3, 16), np.array([4], np.int64)),
        _rotary(r, F32, (2, 3, 16), grid, interleaved=1, num_heads=2),
        _rotary(r, F32, (2, 2, 3, 8), grid),
        _rotary(r, F32, (2, 2, 3, 8), np.array([1], np.int64), interleaved=1),
        _rotary(r, F32, (2, 3, 16), grid, half=2, num_heads=2, rotary_embedding_dim=4),
        _rotary(r, F32, (2, 3, 16), grid, num_heads=2, scale=1.0, is_packed_batching=0),
    ]
    bad = _rotary(r, F32, (2, 3, 16), np.array([[0, 3, 17], [2, 2, 9]], np.int64), num_heads=2)
    bad.error, bad.tol = "outside the caches", None
    return found + [bad]
