"""MatMul, Gemm, MatMulInteger, QLinearMatMul, Det at every version."""
from __future__ import annotations

import numpy as np

from .gen import rng, schema_types, since_versions, values
from .harness import Case
from .nn_support import half_judge

MATMUL_SHAPES = [((3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2)), ((4,), (3, 4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                 ((0, 4), (4, 2))]


def _matmul() -> list[Case]:
    found = []
    for version in since_versions("MatMul"):
        for dtype in schema_types("MatMul", version):
            for k, (a, b) in enumerate(MATMUL_SHAPES):
                r = rng("MatMul", version, str(dtype), k)
                tol = (1e-2, 1e-2) if dtype == np.float16 else None
                found.append(Case("MatMul", version, [values(r, a, dtype), values(r, b, dtype)], tol=tol,
                                  dtype_sweep=True, **half_judge("MatMul", version, dtype)))
    return found


def gemm_by_hand(a, b, c, alpha=1.0, beta=1.0, trans_a=0, trans_b=0):
    a = a.T if trans_a else a
    b = b.T if trans_b else b
    y = alpha * (a.astype(np.float64) @ b.astype(np.float64))
    return (y + beta * c if c is not None else y).astype(a.dtype)


def _gemm() -> list[Case]:
    found = []
    for version in since_versions("Gemm"):
        r = rng("Gemm", version)
        legacy = version < 7
        specs = [((3, 4), (5, 4), (5,), {"transB": 1, "alpha": 0.5, "beta": 2.0}),
                 ((4, 3), (4, 5), (3, 5), {"transA": 1}),
                 ((3, 4), (4, 5), (1, 5), {"beta": 0.0})]
        for a_shape, b_shape, c_shape, attrs in specs:
            a, b, c = values(r, a_shape, np.float32), values(r, b_shape, np.float32), values(r, c_shape, np.float32)
            if legacy:
                attrs = {**attrs, "broadcast": 1}
                want = gemm_by_hand(a, b, c, attrs.get("alpha", 1.0), attrs.get("beta", 1.0), attrs.get("transA", 0),
                                    attrs.get("transB", 0))
                found.append(Case("Gemm", version, [a, b, c], attrs=attrs, expected=[want], tol=(1e-5, 1e-5),
                                  reason="onnxruntime implements Gemm from 7; broadcast=1 is the later "
                                         "unidirectional broadcasting of C"))
            else:
                found.append(Case("Gemm", version, [a, b, c], attrs=attrs, tol=(1e-5, 1e-5)))
        if version >= 11:
            found.append(Case("Gemm", version, [values(r, (3, 4), np.float32), values(r, (4, 2), np.float32)]))
        for dtype in schema_types("Gemm", version):
            dr = rng("Gemm", version, str(dtype))
            inputs = [values(dr, (2, 3), dtype), values(dr, (3, 4), dtype), values(dr, (2, 4), dtype)]
            if legacy:
                continue
            found.append(Case("Gemm", version, inputs, dtype_sweep=True,
                              tol=(1e-2, 1e-2) if dtype == np.float16 else None))
    r = rng("Gemm", "refusals")
    found.append(Case("Gemm", 6, [values(r, (2, 3), np.float32), values(r, (3, 4), np.float32),
                                  values(r, (4,), np.float32)], error="broadcast=0"))
    found.append(Case("Gemm", 9, [values(r, (2, 3), np.float32), values(r, (3, 4), np.float32)], error="C input"))
    return found


def _integer() -> list[Case]:
    found = []
    for a_type, b_type in ((np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8), (np.int8, np.uint8)):
        r = rng("MatMulInteger", str(a_type), str(b_type))
        for a_shape, b_shape in ((3, 4), (4, 5)), ((2, 3, 4), (4, 2)):
            a, b = values(r, a_shape, a_type, -128, 255), values(r, b_shape, b_type, -128, 255)
            zeros = [values(r, (), a_type, 0, 9), values(r, (b_shape[-1],), b_type, 0, 9)]
            found.append(Case("MatMulInteger", 10, [a, b, *zeros]))
            found.append(Case("MatMulInteger", 10, [a, b]))
    for version in since_versions("QLinearMatMul"):
        for a_type, y_type in ((np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8)):
            r = rng("QLinearMatMul", version, str(a_type), str(y_type))
            a, b = values(r, (2, 3, 4), a_type, -128, 255), values(r, (4, 5), a_type, -128, 255)
            scales = [np.array(s, np.float32) for s in (0.05, 0.02, 0.3)]
            found.append(Case("QLinearMatMul", version, [a, scales[0], values(r, (), a_type, 0, 9), b, scales[1],
                                                         values(r, (), a_type, 0, 9), scales[2],
                                                         values(r, (), y_type, 0, 9)], dtype_sweep=True))
    for version in since_versions("Det"):
        for dtype in schema_types("Det", version):
            for k, x_shape in enumerate([(3, 3), (2, 4, 4), (1, 1)]):
                r = rng("Det", version, str(dtype), k)
                found.append(Case("Det", version, [values(r, x_shape, dtype, -2, 2)], dtype_sweep=True,
                                  tol=(1e-2, 1e-2) if dtype == np.float16 else (1e-4, 1e-5)))
    return found


def cases() -> list[Case]:
    return [*_matmul(), *_gemm(), *_integer()]
