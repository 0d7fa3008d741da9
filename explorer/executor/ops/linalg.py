"""Matrix products on BLAS: MatMul (1, 9, 13), Gemm (1, 6, 7, 9, 11, 13), MatMulInteger (10),
QLinearMatMul (10, 21), Det (11, 22), Einsum (12, 28). Half precision is multiplied in float32, integers exactly in
float64 (or int64 past its exact range; Einsum keeps the input's integer type, as onnxruntime does)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .axes import broadcasts_to
from .base import KernelFactory, OpNode, PlainKernel
from .conv import shifted
from .quantize import requantize
from .shared import compute_dtype, node_attributes

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy.matmul with ONNX's 1-D promotion; float16 and bfloat16 through float32."""
    dtype = a.dtype
    if (dtype is _F32 or dtype is _F64) and b.dtype is dtype and a.ndim > 1 and b.ndim > 1:
        return np.matmul(a, b)  # the common case, first
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"MatMul inputs must have rank >= 1, got {a.shape} and {b.shape}")
    if a.dtype != b.dtype:
        raise ValueError(f"MatMul inputs differ in type: {a.dtype} and {b.dtype}")
    work = compute_dtype(a.dtype) if a.dtype.kind not in "iu" else a.dtype
    if work != a.dtype:
        return np.asarray(np.matmul(a.astype(work), b.astype(work))).astype(a.dtype)
    return np.asarray(np.matmul(a, b))


def matmul_kernel(op: OpNode) -> PlainKernel:
    node_attributes(op)
    return lambda args: (matmul(args[0], args[1]),)


def gemm_kernel(op: OpNode) -> PlainKernel:
    version, attrs = node_attributes(op)
    alpha, beta = float(attrs["alpha"]), float(attrs["beta"])
    trans_a, trans_b = bool(attrs["transA"]), bool(attrs["transB"])
    broadcast = bool(attrs.get("broadcast") or 0) if version < 7 else True
    if version < 11 and (len(op.node.proto.input) < 3 or not op.node.proto.input[2]):
        raise op.error(f"Gemm-{version} requires its input C (optional from Gemm-11)")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b = args[0], args[1]
        c = args[2] if len(args) > 2 else None
        if a.ndim != 2 or b.ndim != 2:
            raise ValueError(f"Gemm takes 2-D A and B, got {a.shape} and {b.shape}")
        a = a.T if trans_a else a
        b = b.T if trans_b else b
        y = matmul(a, b)
        if alpha != 1.0:
            y = y * np.asarray(alpha, dtype=y.dtype)
        if c is not None and beta != 0.0:
            if not broadcast and c.shape != y.shape:
                raise ValueError(f"C {c.shape} must have the output's shape {y.shape} when broadcast=0")
            if c.ndim > 2 or not broadcasts_to(c.shape, y.shape):
                raise ValueError(f"C {c.shape} does not broadcast to the output {y.shape}")
            scaled = c if beta == 1.0 else c * np.asarray(beta, dtype=c.dtype)
            y = y + scaled.astype(y.dtype, copy=False)
        return (y.astype(a.dtype, copy=False),)

    return run


def _exact_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer-valued float64 operands multiplied exactly: BLAS while the sums stay below 2**53."""
    bound = float(np.abs(a).max(initial=0)) * float(np.abs(b).max(initial=0)) * max(a.shape[-1], 1)
    product: np.ndarray = np.matmul(a, b) if bound < 2.0 ** 53 else \
        np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(np.float64)
    return product


def matmul_integer_kernel(op: OpNode) -> PlainKernel:
    node_attributes(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b = args[0], args[1]
        a_zero = args[2] if len(args) > 2 else None
        b_zero = args[3] if len(args) > 3 else None
        y = _exact_matmul(shifted(a, a_zero, max(a.ndim - 2, 0), "a_zero_point"),
                          shifted(b, b_zero, b.ndim - 1, "b_zero_point"))
        return (y.astype(np.int32),)

    return run


def qlinear_matmul_kernel(op: OpNode) -> PlainKernel:
    node_attributes(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = args[:8]
        product = _exact_matmul(shifted(a, a_zero, max(a.ndim - 2, 0), "a_zero_point"),
                                shifted(b, b_zero, b.ndim - 1, "b_zero_point"))
        scale = _row_scale(a_scale, a.ndim) * _column_scale(b_scale)
        return (requantize(product, scale, y_scale, y_zero),)

    return run


def _row_scale(scale: np.ndarray, rank: int) -> np.ndarray:
    s = scale.astype(np.float64)
    return s.reshape(()) if s.size == 1 else s.reshape(-1, 1)


def _column_scale(scale: np.ndarray) -> np.ndarray:
    s = scale.astype(np.float64)
    return s.reshape(()) if s.size == 1 else s.reshape(-1)


def det_kernel(op: OpNode) -> PlainKernel:
    node_attributes(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise ValueError(f"Det takes square matrices [..., M, M], got {x.shape}")
        work = compute_dtype(x.dtype)
        return (np.asarray(np.linalg.det(x.astype(work, copy=False))).astype(x.dtype),)

    return run


def explicit_equation(equation: str, ranks: list[int]) -> str:
    """An Einsum equation in explicit form: without `->`, the output is `...` (if any operand has one) followed by
    the labels used exactly once, in ASCII order (upper case first), as the spec says."""
    equation = equation.replace(" ", "")
    terms = equation.split("->")[0].split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"the equation {equation!r} has {len(terms)} terms for {len(ranks)} inputs")
    covered = {rank - len(term.replace("...", "")) for term, rank in zip(terms, ranks) if "..." in term}
    if len(covered) > 1:
        raise ValueError(f"every '...' of {equation!r} must stand for the same number of axes; for inputs of "
                         f"ranks {ranks} they stand for {sorted(covered)}")
    if "->" in equation:
        return equation
    labels = "".join(term.replace("...", "") for term in terms)
    once = sorted(c for c in set(labels) if labels.count(c) == 1)
    return f"{equation}->{'...' if '...' in equation else ''}{''.join(once)}"


def einsum_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    equation = str(attrs["equation"])
    paths: dict[tuple[tuple[int, ...], ...], Any] = {}

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        dtype = args[0].dtype
        if any(a.dtype != dtype for a in args):
            raise ValueError(f"Einsum inputs differ in type: {[str(a.dtype) for a in args]}")
        work = compute_dtype(dtype) if dtype.kind not in "iu" else dtype
        operands = [a.astype(work, copy=False) for a in args]
        explicit = explicit_equation(equation, [a.ndim for a in args])
        shapes = tuple(a.shape for a in operands)
        if shapes not in paths:  # contraction order (BLAS where it pays) chosen once per shapes
            large = len(args) > 2 or max((a.size for a in operands), default=0) >= 4096
            paths[shapes] = np.einsum_path(explicit, *operands, optimize="greedy")[0] if large else False
        return (np.asarray(np.einsum(explicit, *operands, optimize=paths[shapes])).astype(dtype, copy=False),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "Det": det_kernel,
    "Einsum": einsum_kernel,
    "Gemm": gemm_kernel,
    "MatMul": matmul_kernel,
    "MatMulInteger": matmul_integer_kernel,
    "QLinearMatMul": qlinear_matmul_kernel,
}
