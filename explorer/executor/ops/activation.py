"""Activations: Relu, LeakyRelu, PRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Elu, Selu, Celu, Gelu, Softplus,
Softsign, ThresholdedRelu, Mish, Swish, Shrink and Clip (attributes min/max before version 11, inputs after).
Attributes are read once, with the defaults of the node's version; version 1's `consumed_inputs` has no effect.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel, as_array
from .unary import erf

Activation = Callable[[np.ndarray], np.ndarray]


def constant(value: float) -> np.ndarray:
    """A read-only 0-d float32 operand for in-place ufuncs: a Python float is converted on every call, and a NumPy
    scalar costs a ufunc call more than a 0-d array does (exact in float32; a float64 array keeps its type)."""
    array = np.array(value, np.float32)
    array.flags.writeable = False
    return array


_MINUS_ONE, ONE = constant(-1.0), constant(1.0)


def sigmoid_into(x: np.ndarray, out: np.ndarray) -> None:
    """Writes 1 / (1 + exp(-x)) into `out` (which may be `x`) in four in-place passes: in float32 and float64
    exp(-x) overflows to inf only where the sigmoid underflows, giving its 0 (explorer.run ignores the warning)."""
    np.multiply(x, _MINUS_ONE, out=out)  # not np.negative: numpy 2.4 miscomputes it in place at some strides
    np.exp(out, out=out)
    np.add(out, ONE, out=out)
    np.reciprocal(out, out=out)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The Sigmoid operator: `sigmoid_into` in float32 and float64; in the narrower types, whose exp overflows long
    before their sigmoid underflows, from exp(-|x|) without overflow."""
    if x.dtype == np.float32 or x.dtype == np.float64:
        out = np.empty(x.shape, x.dtype)
        sigmoid_into(x, out)
        return out
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)) without overflow."""
    return (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))).astype(x.dtype, copy=False)


def _typed(x: np.ndarray, value: float) -> np.generic:
    return x.dtype.type(value)


def _relu(op: OpNode) -> Activation:
    return lambda x: np.maximum(x, x.dtype.type(0))


def _leaky_relu(op: OpNode) -> Activation:
    alpha = op.get_float("alpha")
    return lambda x: np.where(x < 0, x * _typed(x, alpha), x)


def _thresholded_relu(op: OpNode) -> Activation:
    alpha = op.get_float("alpha")
    return lambda x: np.where(x > _typed(x, alpha), x, x.dtype.type(0))


def _hard_sigmoid(op: OpNode) -> Activation:
    alpha, beta = op.get_float("alpha"), op.get_float("beta")
    return lambda x: np.clip(x * _typed(x, alpha) + _typed(x, beta), 0, 1).astype(x.dtype, copy=False)


def _hard_swish(op: OpNode) -> Activation:
    return lambda x: x * np.clip(x * _typed(x, 1 / 6) + _typed(x, 0.5), 0, 1).astype(x.dtype, copy=False)


def _elu(op: OpNode) -> Activation:
    alpha = op.get_float("alpha")
    return lambda x: np.where(x >= 0, x, _typed(x, alpha) * np.expm1(x))


def _selu(op: OpNode) -> Activation:
    alpha, gamma = op.get_float("alpha"), op.get_float("gamma")
    return lambda x: _typed(x, gamma) * np.where(x > 0, x, _typed(x, alpha) * np.expm1(x))


def _celu(op: OpNode) -> Activation:
    alpha = op.get_float("alpha")
    return lambda x: np.maximum(x, 0) + np.minimum(0, _typed(x, alpha) * np.expm1(x / _typed(x, alpha)))


def _gelu(op: OpNode) -> Activation:
    approximate = op.get_str("approximate")
    if approximate == "tanh":
        def tanh_gelu(x: np.ndarray) -> np.ndarray:
            v = x.astype(np.float64)
            inner = np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)
            return (0.5 * v * (1 + np.tanh(inner))).astype(x.dtype)
        return tanh_gelu
    if approximate != "none":
        raise op.error(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return lambda x: (0.5 * x.astype(np.float64) * (1 + erf(x.astype(np.float64) / np.sqrt(2)))).astype(x.dtype)


def _softsign(op: OpNode) -> Activation:
    return lambda x: x / (1 + np.abs(x))


def _mish(op: OpNode) -> Activation:
    return lambda x: x * np.tanh(softplus(x))


def _swish(op: OpNode) -> Activation:
    alpha = op.get_float("alpha")
    return lambda x: x * sigmoid(x * _typed(x, alpha))


def _shrink(op: OpNode) -> Activation:
    bias, lambd = op.get_float("bias"), op.get_float("lambd")

    def shrink(x: np.ndarray) -> np.ndarray:
        v = x.astype(np.float64) if x.dtype.kind in "iu" else x
        y = np.where(v < -lambd, v + bias, np.where(v > lambd, v - bias, 0))
        return y.astype(x.dtype, copy=False)

    return shrink


def _plain(fn: Activation) -> Callable[[OpNode], Activation]:
    return lambda op: fn


ACTIVATIONS: dict[str, Callable[[OpNode], Activation]] = {
    "Relu": _relu, "LeakyRelu": _leaky_relu, "ThresholdedRelu": _thresholded_relu, "HardSigmoid": _hard_sigmoid,
    "HardSwish": _hard_swish, "Elu": _elu, "Selu": _selu, "Celu": _celu, "Gelu": _gelu, "Softsign": _softsign,
    "Mish": _mish, "Swish": _swish, "Shrink": _shrink, "Sigmoid": _plain(sigmoid), "Softplus": _plain(softplus),
    "Tanh": _plain(np.tanh),
}


def activation_kernel(op: OpNode) -> PlainKernel:
    fn = ACTIVATIONS[op.op_type](op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (as_array(fn(args[0])),)

    return run


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    return len(shape) <= len(target) and all(d in (1, t) for d, t in zip(shape[::-1], target[::-1]))


def prelu_kernel(op: OpNode) -> PlainKernel:
    """From version 7 the slope broadcasts to X (one way). Before, a one-element slope is shared and a slope of
    shape (C,) is per channel over X (N, C, ...), as the opset-6 exporters meant it; other slopes broadcast as
    numpy's rule would."""
    one_way = op.version >= 7

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, slope = args
        if slope.dtype != x.dtype:
            raise op.error(f"input types differ ({x.dtype} and {slope.dtype})")
        if one_way and not _broadcasts_to(slope.shape, x.shape):
            raise op.error(f"slope of shape {slope.shape} does not broadcast to X {x.shape}")
        if not one_way:
            slope = _legacy_slope(slope, x.shape)
            if not _broadcasts_to(slope.shape, x.shape):
                raise op.error(f"slope of shape {slope.shape} is neither one value, per channel of X {x.shape} "
                               "nor broadcastable to it")
        return (as_array(np.where(x < 0, x * slope, x)),)

    return run


def _legacy_slope(slope: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if slope.size == 1:
        return slope.reshape(())
    if slope.ndim == 1 and len(shape) >= 2 and slope.shape[0] == shape[1]:
        return slope.reshape(slope.shape + (1,) * (len(shape) - 2))
    return slope


@cache
def _type_range(dtype: np.dtype) -> tuple[np.generic, np.generic]:
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return dtype.type(info.min), dtype.type(info.max)


def clip_kernel(op: OpNode) -> PlainKernel:
    """Before version 11 the bounds are attributes (default: float's lowest and highest), from 11 optional scalar
    inputs (default: the type's lowest and highest); infinities are clipped to them, as the spec says."""
    if op.version < 11:
        low = op.get_float("min", float(np.finfo(np.float32).min))
        high = op.get_float("max", float(np.finfo(np.float32).max))

        def clip_attributes(args: Sequence[Any]) -> tuple[Any, ...]:
            x = args[0]
            return (as_array(np.minimum(np.maximum(x, _typed(x, low)), _typed(x, high))),)

        return clip_attributes

    def clip_inputs(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        bounds = [args[k] if len(args) > k else None for k in (1, 2)]
        for name, bound in zip(("min", "max"), bounds):
            if bound is not None and (bound.size != 1 or bound.dtype != x.dtype):
                raise op.error(f"{name} must be a scalar of X's type {x.dtype}, got {bound.dtype}{list(bound.shape)}")
        low, high = (bound if bound is None else bound.reshape(()) for bound in bounds)
        if x.dtype.kind in "fiu" and (low is None or high is None):
            lowest, highest = _type_range(x.dtype)
            low, high = lowest if low is None else low, highest if high is None else high
        y = x if low is None else np.maximum(x, low)
        return (as_array(y if high is None else np.minimum(y, high)),)

    return clip_inputs


KERNELS: dict[str, KernelFactory] = {
    **{name: activation_kernel for name in ACTIVATIONS},
    "Clip": clip_kernel,
    "PRelu": prelu_kernel,
}
