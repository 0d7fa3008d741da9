"""Kernels that make new tensors: ConstantOfShape, Range, EyeLike, Trilu."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from .axes import int_scalar, shape_of
from .base import KernelFactory, OpNode, PlainKernel
from .pad import zero_of


def constant_of_shape(op: OpNode) -> PlainKernel:
    """ConstantOfShape: `value` (a one-element tensor, default float32 0) repeated over the shape input."""
    value = op.attr("value")
    fill = np.zeros((), dtype=np.float32) if value is None else np.asarray(value)
    if fill.size != 1:
        raise op.error(f"attribute 'value' must hold one element, it has shape {list(fill.shape)}")
    fill = fill.reshape(())

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (np.full(shape_of(args[0], "input"), fill, dtype=fill.dtype),)

    return run


_STASH: dict[int, np.dtype[Any]] = {int(onnx.TensorProto.FLOAT): np.dtype(np.float32),
                                    int(onnx.TensorProto.DOUBLE): np.dtype(np.float64)}


def range_(op: OpNode) -> PlainKernel:
    """Range-11, 27: start + i * delta for i < max(ceil((limit - start) / delta), 0); integers exactly;
    float16/bfloat16 computed in float32 (27's stash_type: 1 float, the default, or 11 double)."""
    stash = _STASH.get(op.get_int("stash_type", 1) if op.version >= 27 else 1)
    if stash is None:
        raise op.error(f"stash_type {op.attr('stash_type')} is not 1 (float) or 11 (double)")
    stash_dtype = stash

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        start, limit, delta = (np.asarray(a) for a in args[:3])
        for name, value in zip(("start", "limit", "delta"), (start, limit, delta)):
            if value.size != 1:
                raise ValueError(f"{name} must be a scalar, got shape {list(value.shape)}")
            if value.dtype != start.dtype:
                raise ValueError(f"start is {start.dtype} but {name} is {value.dtype}")
        dtype = start.dtype
        if delta.item() == 0:
            raise ValueError("delta is 0")
        if dtype.kind in "iu":
            a, b, d = int(start.item()), int(limit.item()), int(delta.item())
            count = max(-((a - b) // d), 0)
            return ((a + np.arange(count, dtype=np.int64) * d).astype(dtype),)
        work = stash_dtype if dtype.itemsize < 4 else dtype
        first, last, step = (np.asarray(v, dtype=work).reshape(()) for v in (start, limit, delta))
        count = max(int(np.ceil((last - first) / step)), 0)
        return ((first + np.arange(count, dtype=work) * step).astype(dtype),)

    return run


def eye_like(op: OpNode) -> PlainKernel:
    """EyeLike: ones on the k-th diagonal of a 2-D tensor shaped like the input, in `dtype` (default: the
    input's type)."""
    k = op.get_int("k", 0)
    dtype_code = op.attr("dtype")
    dtype = None if dtype_code is None else onnx.helper.tensor_dtype_to_np_dtype(int(dtype_code))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if x.ndim != 2:
            raise ValueError(f"input must be 2-D, got shape {list(x.shape)}")
        return (np.eye(x.shape[0], x.shape[1], k, dtype=dtype or x.dtype),)

    return run


def trilu(op: OpNode) -> PlainKernel:
    """Trilu-14: keeps the upper (upper=1) or lower triangle of the last two axes from diagonal k, zeroes the
    rest."""
    upper = op.get_int("upper") == 1

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if x.ndim < 2:
            raise ValueError(f"input must have at least 2 dimensions, got shape {list(x.shape)}")
        k = int_scalar(args[1], "k") if len(args) > 1 and args[1] is not None else 0
        rows, cols = x.shape[-2:]
        r = np.arange(rows)[:, None]
        c = np.arange(cols)[None, :]
        keep = (c - r >= k) if upper else (c - r <= k)
        return (np.where(keep, x, zero_of(x.dtype)),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "ConstantOfShape": constant_of_shape,
    "Range": range_,
    "EyeLike": eye_like,
    "Trilu": trilu,
}
