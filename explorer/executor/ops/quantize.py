"""Linear quantization: QuantizeLinear / DequantizeLinear (10, 13, 19, 21, 23, 24, 25), DynamicQuantizeLinear
(11), QLinearConv (10). Scales are per tensor, per axis (13+) or per block (21+); integers round half to even and
saturate to the output type; float8 outputs saturate to their largest finite value when `saturate` is set."""
from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np
import onnx

from .axes import ConstantInputs
from .base import KernelFactory, OpNode, PlainKernel
from .conv import convolve, grouped_window, shifted
from .shared import node_attributes


def _expand(param: np.ndarray, shape: tuple[int, ...], axis: int, block_size: int) -> np.ndarray:
    """A scale or zero point broadcast against an input of `shape`: per tensor, per axis or per block."""
    rank = len(shape)
    if param.size == 1 and param.ndim <= 1:
        return param.reshape(())
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for an input of rank {rank}")
    axis %= rank
    if param.ndim == 1 and block_size == 0:
        if param.shape[0] != shape[axis]:
            raise ValueError(f"a per-axis scale of {param.shape[0]} values does not match axis {axis} of {shape}")
        return param.reshape([-1 if i == axis else 1 for i in range(rank)])
    if block_size <= 0 or param.ndim != rank:
        raise ValueError(f"a scale of shape {param.shape} needs block_size > 0 and the input's rank ({shape})")
    blocks = -(-shape[axis] // block_size)
    expected = tuple(blocks if i == axis else d for i, d in enumerate(shape))
    if param.shape != expected:
        raise ValueError(f"a blocked scale for {shape} (axis {axis}, block_size {block_size}) has shape {expected}, "
                         f"got {param.shape}")
    return np.repeat(param, block_size, axis=axis)[tuple(slice(0, d) for d in shape)]


# np.clip's ufunc, without np.clip's Python wrappers (microseconds a call)
_clip: np.ufunc = np._core.umath.clip  # type: ignore[attr-defined]


@cache
def _integer_range(dtype: np.dtype) -> tuple[float, float] | None:
    if dtype.kind == "f" or dtype.name.startswith("float"):
        return None
    info = ml_dtypes.iinfo(dtype)  # type: ignore[no-untyped-call]
    return float(info.min), float(info.max)


def saturate_cast(values: np.ndarray, dtype: np.dtype, saturate: bool = True) -> np.ndarray:
    """`values` (float, already rounded for integer types) clipped to an integer type's range; for float8 types
    clipped to the largest finite value when saturating (infinities stay where the type has them)."""
    bounds = _integer_range(dtype)
    if bounds is not None:
        result: np.ndarray = _clip(values, bounds[0], bounds[1]).astype(dtype)
        return result
    if saturate:
        finite = float(ml_dtypes.finfo(dtype).max)  # type: ignore[no-untyped-call]
        clipped = np.clip(values, -finite, finite)
        values = np.where(np.isinf(values), values, clipped) if np.isinf(np.array(np.inf).astype(dtype)) \
            else clipped
    return values.astype(dtype)


def requantize(acc: np.ndarray, scale: np.ndarray, y_scale: np.ndarray, y_zero: np.ndarray | None) -> np.ndarray:
    """saturate(round(acc * scale / y_scale) + y_zero), the multiplier in float32 as onnxruntime computes it."""
    multiplier = scale.astype(np.float32) / y_scale.astype(np.float32).reshape(())
    values = acc.astype(np.float32) * multiplier
    zero = 0.0 if y_zero is None else float(y_zero.reshape(()).astype(np.float32))
    dtype = np.dtype(np.uint8) if y_zero is None else y_zero.dtype
    return saturate_cast(np.rint(values) + zero, dtype)


@cache
def _dtype_of(code: int) -> np.dtype:
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code))


def quantize_linear_kernel(op: OpNode) -> PlainKernel:
    version, attrs = node_attributes(op)
    axis = int(attrs["axis"]) if attrs.get("axis") is not None else 1
    block_size = int(attrs.get("block_size") or 0)
    saturate = bool(attrs.get("saturate") if attrs.get("saturate") is not None else 1)
    output_code = int(attrs.get("output_dtype") or 0)
    precision = int(attrs.get("precision") or 0)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, scale = args[0], args[1]
        zero = args[2] if len(args) > 2 else None
        if zero is not None and output_code and zero.dtype != _dtype_of(output_code):
            raise ValueError(f"y_zero_point is {zero.dtype} but output_dtype asks for {_dtype_of(output_code)}")
        dtype = zero.dtype if zero is not None else (_dtype_of(output_code) if output_code else np.dtype(np.uint8))
        work = _dtype_of(precision) if precision else scale.dtype
        if work.kind != "f" or work.itemsize < 4:
            work = np.dtype(np.float32)
        divisor = _expand(scale, x.shape, axis, block_size).astype(work, copy=False)
        if x.dtype == work:
            values = np.divide(x, divisor)  # a new array: the steps below write into it
        else:
            values = x.astype(work)
            np.divide(values, divisor, out=values)
        bounds = _integer_range(dtype)
        if bounds is not None:
            np.rint(values, out=values)
        if zero is not None:
            np.add(values, _expand(zero, x.shape, axis, block_size).astype(work, copy=False), out=values)
        if bounds is not None:
            return (_clip(values, bounds[0], bounds[1], out=values).astype(dtype),)
        return (saturate_cast(values, dtype, saturate),)

    if version < 13 and "axis" in {a.name for a in op.node.proto.attribute}:
        raise op.error(f"QuantizeLinear-{version} has no axis attribute (per-axis scales came with 13)")
    return run


def dequantize_linear_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    axis = int(attrs["axis"]) if attrs.get("axis") is not None else 1
    block_size = int(attrs.get("block_size") or 0)
    output_code = int(attrs.get("output_dtype") or 0)
    table = ConstantInputs()

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, scale = args[0], args[1]
        zero = args[2] if len(args) > 2 else None
        if zero is not None and zero.dtype != x.dtype:
            raise ValueError(f"x_zero_point is {zero.dtype}, x is {x.dtype}")
        dtype = _dtype_of(output_code) if output_code else scale.dtype
        if x.dtype.kind in "iu" and x.dtype.itemsize == 1 and scale.size == 1 and scale.ndim <= 1 \
                and (zero is None or (zero.size == 1 and zero.ndim <= 1)):
            # an 8-bit input per tensor, its scale and zero point constants: the dequantized value of each of the
            # 256 bit patterns, made once by the same arithmetic, looked up in one call for the arithmetic's three
            # (a quantized model's many small tensors pay calls, not arithmetic)
            key = (x.dtype, dtype)
            values = table.get((scale, zero), key)
            if values is None and table.constant((scale, zero)):
                values = _dequantized(_PATTERNS.view(x.dtype), scale, zero, 0, 0, dtype)
                values.flags.writeable = False
                table.keep((scale, zero), key, values)
            if values is not None:
                return (values.take(x.view(np.uint8)),)
        return (_dequantized(x, scale, zero, axis, block_size, dtype),)

    return run


_PATTERNS = np.arange(256, dtype=np.uint8)  # every bit pattern of an 8-bit type, by pattern
_PATTERNS.flags.writeable = False


def _dequantized(x: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, axis: int, block_size: int,
                 dtype: np.dtype) -> np.ndarray:
    """(x - zero) * scale in float32, then in `dtype` (the scale's type, or output_dtype)."""
    values = x.astype(np.float32)  # a new array: the steps below write into it
    if zero is not None:
        np.subtract(values, _expand(zero, x.shape, axis, block_size).astype(np.float32, copy=False), out=values)
    np.multiply(values, _expand(scale, x.shape, axis, block_size).astype(np.float32, copy=False), out=values)
    return values.astype(dtype, copy=False)


def dynamic_quantize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, scale, zero point) of DynamicQuantizeLinear: uint8 over the range of x widened to include 0."""
    x = x.astype(np.float32, copy=False)
    low = np.minimum(np.float32(0), x.min(initial=np.float32(0)))
    high = np.maximum(np.float32(0), x.max(initial=np.float32(0)))
    if high == low:  # an all-zero x: scale 1 as the spec's reference and onnxruntime give it, every y 0
        return np.zeros(x.shape, np.uint8), np.array(1, np.float32), np.array(0, np.uint8)
    scale = np.float32(high - low) / np.float32(255)  # in float32, as the spec and onnxruntime compute it
    zero = saturate_cast(np.rint(np.float32(-low) / scale), np.dtype(np.uint8))
    y = saturate_cast(np.rint(x / scale) + float(zero), np.dtype(np.uint8))
    return y, np.array(scale, np.float32), np.array(zero, np.uint8)


def dynamic_quantize_linear_kernel(op: OpNode) -> PlainKernel:
    node_attributes(op)
    return lambda args: dynamic_quantize(args[0])


def qlinear_conv_kernel(op: OpNode) -> PlainKernel:
    _, group, window = grouped_window(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero = args[:8]
        bias = args[8] if len(args) > 8 else None
        acc = convolve(shifted(x, x_zero, 1, "x_zero_point"), shifted(w, w_zero, 0, "w_zero_point"),
                       window(w), group)
        if bias is not None:
            acc += bias.astype(np.float64).reshape((1, -1) + (1,) * (acc.ndim - 2))
        per_channel = w_scale.astype(np.float32).reshape((1, -1) + (1,) * (acc.ndim - 2)) if w_scale.size > 1 \
            else w_scale.astype(np.float32).reshape(())
        return (requantize(acc, x_scale.astype(np.float32).reshape(()) * per_channel, y_scale, y_zero),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "DequantizeLinear": dequantize_linear_kernel,
    "DynamicQuantizeLinear": dynamic_quantize_linear_kernel,
    "QLinearConv": qlinear_conv_kernel,
    "QuantizeLinear": quantize_linear_kernel,
}
