"""onnxruntime's Attention and MultiHeadAttention (explorer/executor/ops/contrib_attention.py)."""
from __future__ import annotations

import numpy as np

from .contrib_support import DOMAIN, float_sweep
from .gen import rng, values
from .harness import Case, run_onnxruntime

F32 = np.dtype(np.float32)
TOL = (1e-4, 1e-5)
HALF = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}
BATCH, SEQ, IN, HEADS = 2, 3, 6, 2


def _case(op: str, inputs: list, attrs: dict, **kw) -> Case:
    return Case(op, 1, inputs, {"num_heads": HEADS, **attrs}, domain=DOMAIN, tol=kw.pop("tol", TOL), **kw)


def _attention_inputs(r: np.random.Generator, dtype: np.dtype, sizes: tuple[int, int, int] = (8, 8, 8),
                      bias: bool = True, seq: int = SEQ) -> list:
    return [values(r, (BATCH, seq, IN), dtype, -1, 1), values(r, (IN, sum(sizes)), dtype, -1, 1),
            values(r, (sum(sizes),), dtype, -1, 1) if bias else None]


def cases() -> list[Case]:
    return _attention() + _multi_head()


def _masks(r: np.random.Generator, seq: int, total: int) -> list[np.ndarray]:
    lengths = np.array([total - 1, total], np.int32)
    starts = np.array([1, 0], np.int32)
    return [lengths, np.concatenate([lengths, starts]), (r.random((BATCH, total)) < 0.7).astype(np.int32),
            (r.random((BATCH, seq, total)) < 0.7).astype(np.int32)]


def _attention() -> list[Case]:
    found = float_sweep("Attention", lambda r, t: _case("Attention", _attention_inputs(r, t), {},
                                                        tol=HALF.get(t.name, TOL)))
    r = rng("Attention", "forms")
    found.append(_case("Attention", _attention_inputs(r, F32, bias=False), {}))
    found.append(_case("Attention", _attention_inputs(r, F32, (8, 8, 12)), {"qkv_hidden_sizes": [8, 8, 12]}))
    for mask in _masks(r, SEQ, SEQ):
        for attrs in ({}, {"unidirectional": 1, "mask_filter_value": -500.0}):
            found.append(_case("Attention", _attention_inputs(r, F32) + [mask], attrs))
    found.append(_case("Attention", _attention_inputs(r, F32), {"unidirectional": 1, "scale": 0.3}, outputs=2))
    past = values(r, (2, BATCH, HEADS, 4, 4), F32, -1, 1)
    for seq in (1, SEQ):
        found.append(_case("Attention", _attention_inputs(r, F32, seq=seq) + [None, past], {"unidirectional": 1},
                           outputs=2))
        found.append(_case("Attention", _attention_inputs(r, F32, seq=seq) + [_masks(r, seq, seq + 4)[2], past],
                           {"unidirectional": 1}, outputs=2))
    found.append(_case("Attention", _attention_inputs(r, F32) + [None, None, values(r, (1, HEADS, SEQ, SEQ), F32)],
                       {}))
    found.append(_case("Attention", _attention_inputs(r, F32) + [None, None, values(r, (BATCH, 1, SEQ, SEQ), F32)],
                       {"unidirectional": 1}))
    found.append(_case("Attention", _attention_inputs(r, F32), {"do_rotary": 0, "rotary_embedding_dim": 0,
                                                                "past_present_share_buffer": 1}))
    found.append(_case("Attention", _attention_inputs(r, F32), {"do_rotary": 1}, error="do_rotary=1 is not supported"))
    found.append(_case("Attention", _attention_inputs(r, F32) + [None, past], {"past_present_share_buffer": 1},
                       outputs=2, error="past_present_share_buffer=1"))
    found.append(_case("Attention", _attention_inputs(r, F32) + [np.ones((BATCH, 1, SEQ, SEQ), np.int32)], {},
                       error="the mask (2, 1, 3, 3) is none of"))
    return found


def _mha(r: np.random.Generator, dtype: np.dtype, seq: int = SEQ, kv: int = 4, hidden: int = 8,
         v_hidden: int = 8) -> list:
    return [values(r, (BATCH, seq, hidden), dtype, -1, 1), values(r, (BATCH, kv, hidden), dtype, -1, 1),
            values(r, (BATCH, kv, v_hidden), dtype, -1, 1)]


def _multi_head() -> list[Case]:
    found = float_sweep("MultiHeadAttention", lambda r, t: _case("MultiHeadAttention", _mha(r, t), {},
                                                                  tol=HALF.get(t.name, TOL)))
    r = rng("MultiHeadAttention", "forms")
    qk = {"outputs": 4, "output_types": [None, None, None, F32]}
    found.append(_case("MultiHeadAttention", _mha(r, F32, v_hidden=12) + [values(r, (28,), F32)], {}))
    found.append(_case("MultiHeadAttention", _mha(r, F32), {"scale": 0.2, "mask_filter_value": -100.0}, **qk))
    for mask in [np.array([2, 4], np.int32), (r.random((BATCH, 4)) < 0.7).astype(np.int32),
                 (r.random((BATCH, SEQ, 4)) < 0.7).astype(np.int32)]:
        found.append(_case("MultiHeadAttention", _mha(r, F32) + [None, mask], {}, **qk))
    self_inputs = _mha(r, F32, kv=SEQ)
    found.append(_case("MultiHeadAttention", self_inputs, {"unidirectional": 1}, **qk))
    found.append(_case("MultiHeadAttention", self_inputs + [None, None, values(r, (BATCH, HEADS, SEQ, SEQ), F32)], {},
                       **qk))
    past = [values(r, (BATCH, HEADS, 5, 4), F32, -1, 1) for _ in range(2)]
    for seq in (1, SEQ):
        inputs = _mha(r, F32, seq=seq, kv=seq)
        found.append(_case("MultiHeadAttention", inputs + [None, None, None] + past, {"unidirectional": 1},
                           outputs=3))
        mask = (r.random((BATCH, seq + 5)) < 0.8).astype(np.int32)
        found.append(_case("MultiHeadAttention", inputs + [values(r, (24,), F32), mask, None] + past, {},
                           outputs=3))
    heads_first = [values(r, (BATCH, HEADS, 4, 4), F32, -1, 1) for _ in range(2)]
    found.append(_case("MultiHeadAttention", [values(r, (BATCH, SEQ, 8), F32)] + heads_first, {}, outputs=3))
    found += _packed(r)
    return found


def _packed(r: np.random.Generator) -> list[Case]:
    """Packed QKV and KV: onnxruntime runs them only on CUDA; judged by onnxruntime on the unpacked inputs."""
    found = []
    q, k, v = _mha(r, F32, kv=SEQ)
    per_head = [x.reshape(BATCH, SEQ, HEADS, 1, 4) for x in (q, k, v)]
    unpacked = _case("MultiHeadAttention", [q, k, v], {})
    want = run_onnxruntime([unpacked])[0]
    reason = "onnxruntime runs packed {} only on CUDA: judged by onnxruntime on the same Q, K, V unpacked"
    found.append(_case("MultiHeadAttention", [np.concatenate(per_head, axis=3)], {}, expected=want,
                       reason=reason.format("QKV")))
    found.append(_case("MultiHeadAttention", [q, np.concatenate(per_head[1:], axis=3)], {}, expected=want,
                       reason=reason.format("KV")))
    return found
