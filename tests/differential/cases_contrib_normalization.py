"""onnxruntime's normalizations: SkipLayerNormalization, SkipSimplifiedLayerNormalization, EmbedLayerNormalization
(explorer/executor/ops/contrib_normalization.py), and its own LayerNormalization-1 and SimplifiedLayerNormalization-1
of the default domain (explorer/executor/ops/normalization.py)."""
from __future__ import annotations

import numpy as np

from .contrib_support import DOMAIN, float_sweep
from .gen import rng, values
from .harness import Case

TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-4, 1e-5), "float64": (1e-9, 1e-10)}


def cases() -> list[Case]:
    return _default_domain() + _skip() + _embed() + _quantized_embed()


def _quantized_embed() -> list[Case]:
    """QEmbedLayerNormalization: every table int8 or uint8 with its scale and zero point."""
    found = []
    for dtype in (np.uint8, np.int8):
        for segment, mask in ((True, True), (False, False)):
            r = rng("QEmbedLayerNormalization", np.dtype(dtype).name, segment)
            ids = r.integers(0, 9, (2, 4)).astype(np.int32)
            tables = [values(r, (9, 6), dtype, -128, 255), values(r, (7, 6), dtype, -128, 255),
                      values(r, (3, 6), dtype, -128, 255) if segment else None, values(r, (6,), dtype, -128, 255),
                      values(r, (6,), dtype, -128, 255)]
            scales = [np.float32(s) if t is not None else None for s, t in zip((0.02, 0.03, 0.01, 0.05, 0.02), tables)]
            zeros = [np.array(3 if dtype == np.int8 else 130).astype(dtype) if t is not None else None for t in tables]
            inputs = [ids, r.integers(0, 3, (2, 4)).astype(np.int32) if segment else None, *tables[:2], tables[2],
                      *tables[3:], r.integers(0, 2, (2, 4)).astype(np.int32) if mask else None, *scales, *zeros]
            found.append(Case("QEmbedLayerNormalization", 1, inputs, {"epsilon": 1e-5}, outputs=2, domain=DOMAIN,
                              tol=(1e-4, 1e-5)))
    return found


def _default_domain() -> list[Case]:
    found = []
    for dtype in (np.float32, np.float64, np.float16):
        r = rng("LayerNormalization-1", str(np.dtype(dtype)))
        tol = TOL[np.dtype(dtype).name]
        for axis, epsilon in ((-1, 1e-5), (1, 1e-3), (-2, 0.5)):
            x = values(r, (2, 3, 4), dtype)
            normalized = x.shape[axis % 3:]
            found.append(Case("LayerNormalization", 1, [x, values(r, normalized, dtype), values(r, normalized, dtype)],
                              attrs={"axis": axis, "epsilon": epsilon, "stash_type": 1}, outputs=3, tol=tol))
            found.append(Case("SimplifiedLayerNormalization", 1, [x, values(r, normalized, dtype)], tol=tol,
                              attrs={"axis": axis, "epsilon": epsilon, "stash_type": 1}, outputs=2))
        found.append(Case("LayerNormalization", 1, [values(r, (3, 5), dtype), values(r, (5,), dtype)], tol=tol))
    return found


def _skip_case(op: str, r: np.random.Generator, dtype: np.dtype, dims: tuple[int, ...], skip_dims: tuple[int, ...],
               beta: bool, bias: bool, outputs: int, epsilon: float | None = None) -> Case:
    hidden = dims[-1]
    inputs = [values(r, dims, dtype), values(r, skip_dims, dtype), values(r, (hidden,), dtype)]
    optional = [values(r, (hidden,), dtype) if beta else None] if op == "SkipLayerNormalization" else []
    optional.append(values(r, (hidden,), dtype) if bias else None)
    while optional and optional[-1] is None:
        optional.pop()
    attrs = {} if epsilon is None else {"epsilon": epsilon}
    return Case(op, 1, inputs + optional, attrs, outputs=outputs, domain=DOMAIN, tol=TOL[np.dtype(dtype).name])


def _skip() -> list[Case]:
    found: list[Case] = []
    for op in ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization"):
        found += float_sweep(op, lambda r, t, op=op: _skip_case(op, r, t, (2, 3, 8), (2, 3, 8), True, True, 4))
        r = rng(op, "forms")
        for dims, skip_dims in (((2, 3, 8), (3, 8)), ((2, 3, 8), (1, 3, 8)), ((5, 6), (5, 6)), ((0, 3, 4), (0, 3, 4))):
            for beta, bias, outputs in ((False, False, 1), (True, False, 2), (False, True, 4), (True, True, 3)):
                found.append(_skip_case(op, r, np.dtype(np.float32), dims, skip_dims, beta, bias, outputs))
        found.append(_skip_case(op, r, np.dtype(np.float32), (1, 4, 16), (1, 4, 16), True, True, 4, epsilon=0.25))
        found.append(Case(op, 1, [values(r, (2, 3, 4), np.float32), values(r, (2, 1, 4), np.float32),
                                  values(r, (4,), np.float32)], domain=DOMAIN, error="must have input's shape"))
        found.append(Case(op, 1, [values(r, (2, 3, 4), np.float32), values(r, (2, 3, 4), np.float32),
                                  values(r, (3,), np.float32)], domain=DOMAIN, error="gamma (3,) must be 1-D"))
    return found


def _embed_case(r: np.random.Generator, dtype: np.dtype, segment: bool = True, mask: bool = True,
                positions: tuple[int, ...] | None = None, outputs: int = 3, **attrs: float) -> Case:
    batch, seq, hidden, vocabulary, table, kinds = 2, 4, 6, 9, 7, 3
    ids = r.integers(0, vocabulary, (batch, seq)).astype(np.int32)
    inputs = [ids, r.integers(0, kinds, (batch, seq)).astype(np.int32) if segment else None,
              values(r, (vocabulary, hidden), dtype), values(r, (table, hidden), dtype),
              values(r, (kinds, hidden), dtype) if segment else None, values(r, (hidden,), dtype),
              values(r, (hidden,), dtype), r.integers(0, 3, (batch, seq)).astype(np.int32) if mask else None,
              r.integers(0, table, positions).astype(np.int32) if positions else None]
    while inputs[-1] is None:
        inputs.pop()
    return Case("EmbedLayerNormalization", 1, inputs, dict(attrs), outputs=outputs, domain=DOMAIN,
                tol=TOL[np.dtype(dtype).name])


def _embed() -> list[Case]:
    found = float_sweep("EmbedLayerNormalization", lambda r, t: _embed_case(r, t))
    r = rng("EmbedLayerNormalization", "forms")
    f32 = np.dtype(np.float32)
    found += [_embed_case(r, f32, segment=False), _embed_case(r, f32, mask=False, outputs=2),
              _embed_case(r, f32, positions=(1, 4)), _embed_case(r, f32, positions=(2, 4), outputs=2),
              _embed_case(r, f32, epsilon=1e-3, mask_index_type=1), _embed_case(r, f32, mask_index_type=0)]
    bad = _embed_case(r, f32)
    bad.inputs[0] = bad.inputs[0].copy()
    bad.inputs[0][1, 2] = 9
    bad.error, bad.tol = "input_ids[1, 2] = 9 is outside word_embedding's 9 rows", None
    found.append(bad)
    return found
