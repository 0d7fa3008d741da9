"""MatMul, Gemm, MatMulInteger, QLinearMatMul, Det, Einsum at every version."""
from __future__ import annotations

import numpy as np

from .gen import narrowed, rng, schema_types, since_versions, values
from .harness import Case, Cast, run_onnxruntime
from .nn_support import half_judge

SMALL_PRODUCTS = Cast(np.float64, "sums of products of integers of at most 4 in size are exact in float64")
SHIFTED_OUTPUT = ("onnxruntime lacks int8 output for uint8 inputs: its uint8 output with the zero point moved up by "
                  "128, moved back (saturating to 0..255 then subtracting 128 saturates to -128..127)")
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
                              tol=(1e-2, 1e-2) if dtype == np.float16 else None,
                              **({"cast": SMALL_PRODUCTS} if dtype.kind in "iu" else narrowed(dtype))))
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
    r = rng("MatMulInteger", "cannot saturate")  # uint8 × int8 within 2 · 255 · 64: onnxruntime exact on any CPU
    found.append(Case("MatMulInteger", 10, [values(r, (5, 36), np.uint8, 0, 255), values(r, (36, 7), np.int8, -64, 63),
                                            np.array(131, np.uint8), values(r, (7,), np.int8, -9, 9)]))
    for version in since_versions("QLinearMatMul"):
        for a_type, y_type in ((np.uint8, np.uint8), (np.int8, np.int8), (np.uint8, np.int8)):
            r = rng("QLinearMatMul", version, str(a_type), str(y_type))
            a, b = values(r, (2, 3, 4), a_type, -128, 255), values(r, (4, 5), a_type, -128, 255)
            scales = [np.array(s, np.float32) for s in (0.05, 0.02, 0.3)]
            inputs = [a, scales[0], values(r, (), a_type, 0, 9), b, scales[1], values(r, (), a_type, 0, 9),
                      scales[2], values(r, (), y_type, 0, 9)]
            if a_type == np.uint8 and y_type == np.int8:
                shifted = [*inputs[:7], (inputs[7].astype(np.int16) + 128).astype(np.uint8)]
                result = run_onnxruntime([Case("QLinearMatMul", version, shifted)])[0]
                assert not isinstance(result, str), result
                [unsigned] = result
                found.append(Case("QLinearMatMul", version, inputs, reason=SHIFTED_OUTPUT,
                                  expected=[(unsigned.astype(np.int16) - 128).astype(np.int8)]))
                continue
            found.append(Case("QLinearMatMul", version, inputs, dtype_sweep=True))
    for version in since_versions("Det"):
        for dtype in schema_types("Det", version):
            for k, x_shape in enumerate([(3, 3), (2, 4, 4), (1, 1)]):
                r = rng("Det", version, str(dtype), k)
                found.append(Case("Det", version, [values(r, x_shape, dtype, -2, 2)], dtype_sweep=True,
                                  tol=(1e-2, 1e-2) if dtype == np.float16 else (1e-4, 1e-5), **narrowed(dtype)))
    return found


EINSUMS = [  # (equation, operand shapes)
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(2, 3), (3, 2)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ii->i", [(3, 3)]), ("ii", [(4, 4)]), ("i,i", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("ij->ji", [(2, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (1, 5, 4, 2)]), ("...i,...i->...", [(2, 1, 3), (1, 4, 3)]), ("...ij", [(2, 3, 4)]),
    ("Ab,bc", [(2, 3), (3, 4)]), ("aB,Bc->ca", [(2, 3), (3, 4)]), (" i j , j k -> i k ", [(2, 3), (3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ij,jk->ik", [(0, 3), (3, 2)]), (",ij->ij", [(), (2, 3)]),
    ("ij,jk->ik", [(64, 80), (80, 70)]), ("bhqd,bhkd->bhqk", [(2, 2, 8, 16), (2, 2, 8, 16)]),
]
EINSUM_UPPER = "onnxruntime refuses upper-case labels without '->'; the spec allows them (output Ac: A sorts first)"
EINSUM_NO_INT = "onnxruntime implements Einsum for int32/int64 and floats only: the spec's sum of products, wrapping"


def _einsum() -> list[Case]:
    found = []
    for version in since_versions("Einsum"):
        for dtype in schema_types("Einsum", version, exotic=True):
            for k, (equation, shapes) in enumerate(EINSUMS):
                if dtype.kind in "iu" and max(int(np.prod(s)) for s in shapes) > 1000:
                    continue
                r = rng("Einsum", version, str(dtype), k)
                operands = [values(r, s, dtype, 0 if dtype.kind == "u" else -3, 3) for s in shapes]
                half = dtype.itemsize == 2 and dtype.kind != "i" and dtype.kind != "u"
                tol = (2e-2, 2e-2) if half else (1e-4, 1e-4) if dtype == np.float32 else None
                judge = {}
                if equation == "Ab,bc":
                    product = operands[0].astype(np.float64) @ operands[1].astype(np.float64)
                    judge = {"expected": [product.astype(dtype)], "reason": EINSUM_UPPER}
                elif dtype.kind in "iu" and dtype not in (np.int32, np.int64):
                    wide = np.einsum(equation.replace(" ", ""), *(o.astype(np.int64) for o in operands))
                    judge = {"expected": [np.asarray(wide).astype(dtype)], "reason": EINSUM_NO_INT}
                found.append(Case("Einsum", version, operands, {"equation": equation}, tol=tol, **judge))
    found.append(Case("Einsum", 12, [np.ones((2, 3), np.float32)], {"equation": "ij,jk->ik"}, error="2 terms"))
    found.append(Case("Einsum", 12, [np.ones((2, 3, 4), np.float32), np.ones((4, 2), np.float32)],
                      {"equation": "...ij,...jk->...ik"}, error="the same number of axes"))
    return found


def cases() -> list[Case]:
    return [*_matmul(), *_gemm(), *_integer(), *_einsum()]
