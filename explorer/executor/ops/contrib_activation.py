"""onnxruntime's activations and bias fusions (com.microsoft): Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd,
BiasSplitGelu, as onnxruntime's schemas and kernels define them. Half precision and bfloat16 compute in float32,
the others in float64 (exact Gelu) or their own type; a bias is added along the last axis."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .activation import sigmoid
from .base import KernelFactory, OpNode, PlainKernel, as_array
from .shared import compute_dtype
from .unary import erf

DOMAIN = "com.microsoft"
FAST_GELU_A, FAST_GELU_B = 0.7978845608028654, 0.035677408136300125  # sqrt(2/pi), 0.044715 * sqrt(2/pi)


def exact_gelu(x: np.ndarray) -> np.ndarray:
    """0.5 x (1 + erf(x / sqrt(2))), computed in float64, in x's type."""
    v = x.astype(np.float64)
    return as_array(0.5 * v * (1 + erf(v / np.sqrt(2)))).astype(x.dtype)


def tanh_gelu(x: np.ndarray) -> np.ndarray:
    """0.5 x (1 + tanh(0.797885 x + 0.035677 x^3)), in x's type (half precision computed in float32)."""
    v = x.astype(compute_dtype(x.dtype))
    return as_array(0.5 * v * (1 + np.tanh(v * (FAST_GELU_A + FAST_GELU_B * v * v)))).astype(x.dtype)


def with_bias(x: np.ndarray, bias: np.ndarray | None, what: str = "bias") -> np.ndarray:
    """x + bias, the bias a 1-D tensor the size of x's last axis (as onnxruntime requires)."""
    if bias is None:
        return x
    if bias.ndim != 1 or x.ndim < 1 or bias.shape[0] != x.shape[-1]:
        raise ValueError(f"{what} {bias.shape} must be 1-D with the size of the input's last axis ({x.shape})")
    work = compute_dtype(x.dtype)
    return (x.astype(work) + bias.astype(work)).astype(x.dtype)


def gelu_kernel(op: OpNode) -> PlainKernel:
    return lambda args: (exact_gelu(args[0]),)


def fast_gelu_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        bias = args[1] if len(args) > 1 else None
        if bias is None:
            return (tanh_gelu(x),)
        work = compute_dtype(x.dtype)  # the bias is added in the computation type, before rounding
        return (tanh_gelu(with_bias(x.astype(work), bias)).astype(x.dtype),)

    return run


def bias_gelu_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b = args[:2]
        summed = with_bias(a.astype(np.float64), b, "B")
        return (exact_gelu(summed).astype(a.dtype),)

    return run


def quick_gelu_kernel(op: OpNode) -> PlainKernel:
    alpha = op.get_float("alpha")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        v = x.astype(compute_dtype(x.dtype))
        return (as_array(v * sigmoid(as_array(v * v.dtype.type(alpha)))).astype(x.dtype),)

    return run


def _channels_last(x: np.ndarray, name: str) -> None:
    if x.ndim != 3:
        raise ValueError(f"{name} {x.shape} must be 3-D (N, S, C)")


def bias_add_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, bias, skip = args[:3]
        _channels_last(x, "X")
        if skip.shape != x.shape:
            raise ValueError(f"skip {skip.shape} must have X's shape {x.shape}")
        work = compute_dtype(x.dtype)
        return ((with_bias(x.astype(work), bias) + skip.astype(work)).astype(x.dtype),)

    return run


def bias_split_gelu_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, bias = args[:2]
        _channels_last(x, "X")
        if x.shape[2] % 2:
            raise ValueError(f"X's last axis ({x.shape[2]}) must be even: it splits into two halves")
        summed = with_bias(x.astype(np.float64), bias)
        half = x.shape[2] // 2
        return ((summed[..., :half] * exact_gelu(summed[..., half:])).astype(x.dtype),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "BiasAdd": bias_add_kernel,
    "BiasGelu": bias_gelu_kernel,
    "BiasSplitGelu": bias_split_gelu_kernel,
    "FastGelu": fast_gelu_kernel,
    "Gelu": gelu_kernel,
    "QuickGelu": quick_gelu_kernel,
}
