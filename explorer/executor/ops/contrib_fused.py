"""onnxruntime's fusions of a product with what follows it (com.microsoft): FusedMatMul (MatMul with transposes and
a scale), FusedConv (Conv, plus Z, then an activation), FusedGemm (Gemm, then an activation). The activations and
their parameters are those onnxruntime's CPU kernels accept; any other is refused naming it."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .activation import sigmoid, softplus
from .axes import broadcasts_to
from .base import KernelFactory, OpNode, PlainKernel
from .conv import conv_kernel
from .linalg import matmul
from .shared import compute_dtype

DOMAIN = "com.microsoft"
Activation = Callable[[np.ndarray, Sequence[float]], np.ndarray]


def _elu(x: np.ndarray, p: Sequence[float]) -> np.ndarray:
    return np.where(x >= 0, x, p[0] * np.expm1(np.minimum(x, 0)))


def _celu(x: np.ndarray, p: Sequence[float]) -> np.ndarray:
    return np.maximum(x, 0) + np.minimum(0, p[0] * np.expm1(np.minimum(x, 0) / p[0]))


def _selu(x: np.ndarray, p: Sequence[float]) -> np.ndarray:
    return p[1] * np.where(x > 0, x, p[0] * np.expm1(np.minimum(x, 0)))


# name -> (function of x and the parameters, names of the parameters in order)
ACTIVATIONS: dict[str, tuple[Activation, tuple[str, ...]]] = {
    "Relu": (lambda x, p: np.maximum(x, 0), ()),
    "Tanh": (lambda x, p: np.tanh(x), ()),
    "Sigmoid": (lambda x, p: sigmoid(x), ()),
    "Silu": (lambda x, p: x * sigmoid(x), ()),
    "Softsign": (lambda x, p: x / (1 + np.abs(x)), ()),
    "Softplus": (lambda x, p: softplus(x), ()),
    "LeakyRelu": (lambda x, p: np.where(x >= 0, x, x * p[0]), ("alpha",)),
    "ThresholdedRelu": (lambda x, p: np.where(x > p[0], x, 0), ("alpha",)),
    "Elu": (_elu, ("alpha",)),
    "Celu": (_celu, ("alpha",)),
    "Selu": (_selu, ("alpha", "gamma")),
    "Clip": (lambda x, p: np.clip(x, p[0], p[1]), ("min", "max")),
    "HardSigmoid": (lambda x, p: np.clip(x * p[0] + p[1], 0, 1), ("alpha", "beta")),
    "ParametricSoftplus": (lambda x, p: p[0] * softplus(x * p[1]), ("alpha", "beta")),
    "ScaledTanh": (lambda x, p: p[0] * np.tanh(x * p[1]), ("alpha", "beta")),
}
CONV_ACTIVATIONS = ("Relu", "Silu", "Tanh", "Sigmoid", "LeakyRelu", "Clip", "HardSigmoid")
GEMM_ACTIVATIONS = ("Celu", "Elu", "HardSigmoid", "LeakyRelu", "Softplus", "Relu", "Sigmoid", "Softsign", "Tanh",
                    "ThresholdedRelu", "Selu", "ParametricSoftplus", "ScaledTanh")


def _activation(op: OpNode, name: str, allowed: tuple[str, ...], params: Sequence[float]) -> Callable[
        [np.ndarray], np.ndarray]:
    if not name:
        raise op.error(f"{op.op_type} needs its activation attribute (one of {', '.join(allowed)})")
    if name not in allowed:
        raise op.error(f"activation {name!r} is not one {op.op_type} implements ({', '.join(allowed)})")
    fn, wanted = ACTIVATIONS[name]
    if len(params) != len(wanted):
        raise op.error(f"activation {name} takes {len(wanted)} parameter(s) ({', '.join(wanted) or 'none'}), "
                       f"got {len(params)}")

    def apply(x: np.ndarray) -> np.ndarray:
        return np.asarray(fn(x, [x.dtype.type(v) for v in params])).astype(x.dtype, copy=False)

    return apply


def fused_conv_kernel(op: OpNode) -> PlainKernel:
    name = op.attr("activation")
    activate = None if name is None else _activation(op, str(name), CONV_ACTIVATIONS,
                                                       op.attr("activation_params") or [])
    conv = conv_kernel(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        y = conv(args[:3])[0]
        z = args[3] if len(args) > 3 else None
        if z is not None:
            if z.shape != y.shape:
                raise ValueError(f"Z {z.shape} must have the convolution's output shape {y.shape}")
            y = (y.astype(compute_dtype(y.dtype)) + z.astype(compute_dtype(y.dtype))).astype(y.dtype)
        return (y if activate is None else activate(y),)

    return run


def fused_gemm_kernel(op: OpNode) -> PlainKernel:
    alpha, beta = op.get_float("alpha"), op.get_float("beta")
    trans_a, trans_b = bool(op.get_int("transA")), bool(op.get_int("transB"))
    name = str(op.attr("activation", ""))
    wanted = ACTIVATIONS[name][1] if name in ACTIVATIONS else ()
    missing = [p for p in wanted if not op.has(f"activation_{p}")]
    if missing and name in GEMM_ACTIVATIONS:
        raise op.error(f"activation {name} needs {', '.join('activation_' + p for p in missing)}")
    activate = _activation(op, name, GEMM_ACTIVATIONS, [op.get_float(f"activation_{p}") for p in wanted])

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b = args[:2]
        c = args[2] if len(args) > 2 else None
        if a.ndim != 2 or b.ndim != 2:
            raise ValueError(f"FusedGemm takes 2-D A and B, got {a.shape} and {b.shape}")
        work = compute_dtype(a.dtype) if a.dtype.kind == "f" else np.dtype(np.float64)
        y = matmul((a.T if trans_a else a).astype(work), (b.T if trans_b else b).astype(work)) * work.type(alpha)
        if c is not None:
            if c.ndim > 2 or not broadcasts_to(c.shape, y.shape):
                raise ValueError(f"C {c.shape} does not broadcast to the output {y.shape}")
            y = y + c.astype(work) * work.type(beta)
        return (activate(y).astype(a.dtype),)

    return run


def _batch_first_to_rows(x: np.ndarray) -> np.ndarray:
    """transBatch: the first axis moves to the rows' place, (d0, d1, ..., dn-2, dn-1) -> (d1, ..., dn-2, d0, dn-1)."""
    if x.ndim < 3:
        return x
    return x.transpose(*range(1, x.ndim - 1), 0, x.ndim - 1)


def _last_two_swapped(x: np.ndarray) -> np.ndarray:
    return x if x.ndim < 2 else np.swapaxes(x, -1, -2)


def fused_matmul_kernel(op: OpNode) -> PlainKernel:
    alpha = op.get_float("alpha")
    trans = [bool(op.get_int(name)) for name in ("transA", "transB", "transBatchA", "transBatchB")]

    def operand(x: np.ndarray, transposed: bool, batch: bool) -> np.ndarray:
        x = _batch_first_to_rows(x) if batch else x
        return _last_two_swapped(x) if transposed else x

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b = operand(args[0], trans[0], trans[2]), operand(args[1], trans[1], trans[3])
        work = compute_dtype(a.dtype)
        y = matmul(a.astype(work), b.astype(work))
        return ((y * work.type(alpha)).astype(a.dtype),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "FusedConv": fused_conv_kernel,
    "FusedGemm": fused_gemm_kernel,
    "FusedMatMul": fused_matmul_kernel,
}
