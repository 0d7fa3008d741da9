"""onnxruntime's quantized operators on uint8/int8 tensors (com.microsoft), as its CPU kernels compute them:
QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearConcat, QLinearAveragePool,
QLinearGlobalAveragePool, QLinearSoftmax and QGemm.

Scales and zero points are per tensor. The elementwise ones work in float32 and round half to even before the
output's zero point is added, then saturate; Sigmoid, LeakyRelu and Concat's requantization are lookup tables over
the 256 input values (dequantize, apply, quantize). QLinearSoftmax follows onnxruntime's integer-friendly
scheme: exp((x - max) × x_scale) shifted into float's range, divided by the row's sum, times floor(1 / y_scale);
QLinearAveragePool adds the output's zero point before rounding, as onnxruntime does."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .activation import sigmoid
from .base import KernelFactory, OpNode, PlainKernel
from .linalg import _exact_matmul
from .pool import average_pool_kernel
from .quantize import requantize, saturate_cast

DOMAIN = "com.microsoft"


def _scalar(value: np.ndarray | None, what: str, default: float = 0.0) -> np.float32:
    if value is None:
        return np.float32(default)
    if value.size != 1:
        raise ValueError(f"{what} {value.shape} must be a scalar (per tensor)")
    return np.float32(value.reshape(-1)[0])


def _quantized(values: np.ndarray, y_scale: np.ndarray, y_zero: np.ndarray | None, dtype: np.dtype) -> np.ndarray:
    """saturate(round(values / y_scale) + y_zero), in float32."""
    rounded = np.rint(values.astype(np.float32) / _scalar(y_scale, "y_scale"))
    return saturate_cast(rounded + _scalar(y_zero, "y_zero_point"), dtype)


def _centered(x: np.ndarray, zero: np.ndarray | None) -> np.ndarray:
    return (x.astype(np.int32) - np.int32(_scalar(zero, "zero_point"))).astype(np.float32)


def _binary(multiply: bool) -> KernelFactory:
    def factory(op: OpNode) -> PlainKernel:
        def run(args: Sequence[Any]) -> tuple[Any, ...]:
            a, a_scale, a_zero, b, b_scale, b_zero, c_scale, c_zero = (list(args) + [None] * 8)[:8]
            if a.dtype != b.dtype:
                raise ValueError(f"A is {a.dtype} and B {b.dtype}; they share one type")
            sa, sb, sc = (_scalar(s, name) for s, name in ((a_scale, "A_scale"), (b_scale, "B_scale"),
                                                          (c_scale, "C_scale")))
            if multiply:
                value = _centered(a, a_zero) * _centered(b, b_zero) * np.float32(sa * sb / sc)
            else:
                value = _centered(a, a_zero) * np.float32(sa / sc) + _centered(b, b_zero) * np.float32(sb / sc)
            return (saturate_cast(np.rint(value) + _scalar(c_zero, "C_zero_point"), a.dtype),)

        return run

    return factory


def _table(x: np.ndarray, x_scale: np.ndarray, x_zero: np.ndarray | None, y_scale: np.ndarray,
           y_zero: np.ndarray | None, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """fn applied through a lookup table over the 256 values of x's type (dequantize, apply, quantize)."""
    info = np.iinfo(x.dtype)
    domain = np.arange(info.min, info.max + 1, dtype=np.int32)
    dequantized = (domain - np.int32(_scalar(x_zero, "x_zero_point"))).astype(np.float32) * _scalar(x_scale, "x_scale")
    table = _quantized(fn(dequantized), y_scale, y_zero, x.dtype)
    return table[x.astype(np.int32) - info.min]


def qlinear_sigmoid_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, x_scale, x_zero, y_scale, y_zero = (list(args) + [None] * 5)[:5]
        return (_table(x, x_scale, x_zero, y_scale, y_zero, sigmoid),)

    return run


def qlinear_leaky_relu_kernel(op: OpNode) -> PlainKernel:
    alpha = np.float32(op.get_float("alpha"))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, x_scale, x_zero, y_scale, y_zero = (list(args) + [None] * 5)[:5]
        return (_table(x, x_scale, x_zero, y_scale, y_zero, lambda v: np.where(v >= 0, v, v * alpha)),)

    return run


def qlinear_concat_kernel(op: OpNode) -> PlainKernel:
    axis = op.get_int("axis")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        y_scale, y_zero, rest = args[0], args[1], args[2:]
        if not rest or len(rest) % 3:
            raise ValueError(f"after Y_scale and Y_zero_point come (tensor, scale, zero point) triples; got "
                             f"{len(rest)} inputs")
        parts = []
        for x, x_scale, x_zero in zip(rest[0::3], rest[1::3], rest[2::3]):
            if x.dtype != y_zero.dtype:
                raise ValueError(f"an input is {x.dtype} but Y_zero_point {y_zero.dtype}")
            same = _scalar(x_scale, "scale") == _scalar(y_scale, "Y_scale") and \
                _scalar(x_zero, "zero point") == _scalar(y_zero, "Y_zero_point")
            parts.append(x if same else _table(x, x_scale, x_zero, y_scale, y_zero, lambda v: v))
        return (np.concatenate(parts, axis=axis),)

    return run


def _channels_first(x: np.ndarray, channels_last: bool) -> np.ndarray:
    return np.moveaxis(x, -1, 1) if channels_last else x


def qlinear_average_pool_kernel(op: OpNode) -> PlainKernel:
    channels_last = bool(op.get_int("channels_last"))
    pool = average_pool_kernel(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, x_scale, x_zero, y_scale, y_zero = (list(args) + [None] * 5)[:5]
        dequantized = _centered(_channels_first(x, channels_last), x_zero) * _scalar(x_scale, "x_scale")
        average = pool([dequantized])[0] / _scalar(y_scale, "y_scale")
        y = saturate_cast(np.rint(average + _scalar(y_zero, "y_zero_point")), x.dtype)  # the zero point before rounding
        return (np.ascontiguousarray(np.moveaxis(y, 1, -1)) if channels_last else y,)

    return run


def qlinear_global_average_pool_kernel(op: OpNode) -> PlainKernel:
    channels_last = bool(op.get_int("channels_last"))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, x_scale, x_zero, y_scale, y_zero = args[:5]
        if x.ndim < 3:
            raise ValueError(f"X {x.shape} has no spatial axes")
        spatial = tuple(range(1, x.ndim - 1)) if channels_last else tuple(range(2, x.ndim))
        count = int(np.prod([x.shape[a] for a in spatial]))
        total = x.astype(np.int64).sum(axis=spatial, keepdims=True) - count * int(_scalar(x_zero, "x_zero_point"))
        scale = _scalar(x_scale, "x_scale") / (_scalar(y_scale, "y_scale") * np.float32(count))
        rounded = np.rint(total.astype(np.float32) * scale)
        return (saturate_cast(rounded + _scalar(y_zero, "y_zero_point"), x.dtype),)

    return run


def qlinear_softmax_kernel(op: OpNode) -> PlainKernel:
    opset, axis_setting = op.get_int("opset"), op.get_int("axis")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, x_scale, _, y_scale, y_zero = (list(args) + [None] * 5)[:5]
        if x.size == 0:
            return (x.copy(),)
        axis = int(axis_setting) % x.ndim
        rows = x.reshape(*x.shape[:axis], -1) if opset < 13 else np.moveaxis(x, axis, -1)
        length = rows.shape[-1]
        scale = float(_scalar(x_scale, "x_scale"))
        shift = max(0.0, float(np.log(np.finfo(np.float32).max / length)) - 5.0)  # sum(exp) stays finite
        gap = rows.astype(np.int32) - rows.max(axis=-1, keepdims=True).astype(np.int32)
        exp = np.exp((gap.astype(np.float64) + shift / scale) * scale).astype(np.float32)
        total = np.cumsum(exp, axis=-1, dtype=np.float32)[..., -1:]  # summed in order, as onnxruntime does
        quantized = np.rint(exp * np.floor(np.float32(1) / _scalar(y_scale, "y_scale")) / total).astype(np.int64)
        y = saturate_cast((quantized + int(_scalar(y_zero, "y_zero_point"))).astype(np.float64), x.dtype)
        return (y.reshape(x.shape) if opset < 13 else np.ascontiguousarray(np.moveaxis(y, -1, axis)),)

    return run


def qgemm_kernel(op: OpNode) -> PlainKernel:
    alpha = np.float32(op.get_float("alpha"))
    trans_a, trans_b = bool(op.get_int("transA")), bool(op.get_int("transB"))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, a_scale, a_zero, b, b_scale, b_zero, c, y_scale, y_zero = (list(args) + [None] * 9)[:9]
        a, b = (a.T if trans_a else a), (b.T if trans_b else b)
        if a.ndim != 2 or b.ndim != 2:
            raise ValueError(f"QGemm takes 2-D A and B, got {a.shape} and {b.shape}")
        columns = b.shape[1]
        b_zeros = b_zero.astype(np.float64).reshape(-1) if b_zero is not None and b_zero.size > 1 else \
            float(_scalar(b_zero, "b_zero_point"))
        acc = _exact_matmul(a.astype(np.float64) - float(_scalar(a_zero, "a_zero_point")),
                            b.astype(np.float64) - b_zeros)
        if c is not None:
            acc = acc + c.astype(np.float64)
        scales = b_scale.astype(np.float32).reshape(-1) if b_scale.size > 1 else _scalar(b_scale, "b_scale")
        if np.ndim(scales) and np.shape(scales) != (columns,):
            raise ValueError(f"b_scale {b_scale.shape} must be a scalar or one value per column ({columns})")
        scale = alpha * _scalar(a_scale, "a_scale") * np.asarray(scales, np.float32)
        if y_scale is None:
            return ((acc.astype(np.float32) * scale).astype(np.float32),)
        if y_zero is None:
            raise ValueError("y_scale comes with y_zero_point")
        return (requantize(acc, scale, y_scale, y_zero),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "QGemm": qgemm_kernel,
    "QLinearAdd": _binary(multiply=False),
    "QLinearAveragePool": qlinear_average_pool_kernel,
    "QLinearConcat": qlinear_concat_kernel,
    "QLinearGlobalAveragePool": qlinear_global_average_pool_kernel,
    "QLinearLeakyRelu": qlinear_leaky_relu_kernel,
    "QLinearMul": _binary(multiply=True),
    "QLinearSigmoid": qlinear_sigmoid_kernel,
    "QLinearSoftmax": qlinear_softmax_kernel,
}
