"""Pools: MaxPool (1, 8, 10, 11, 12, 22), AveragePool (1, 7, 10, 11, 19, 22), LpPool (1, 2, 11, 18, 22), the
global pools (GlobalMaxPool, GlobalAveragePool 1, 22; GlobalLpPool 1, 2, 22) and MaxUnpool (9, 11, 22).

A pool folds the strided views of the padded input, one per kernel offset, with a ufunc (MaxPool one spatial
axis at a time); MaxPool's indices follow the first maximum of each window, like onnxruntime."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .shared import compute_dtype, node_attributes
from .windows import Window, extend_ends, pad_spatial, window_of


def _window(op: OpNode, attrs: dict[str, Any]) -> Window:
    if not attrs.get("kernel_shape"):
        raise op.error("kernel_shape is required")
    try:
        window = window_of(attrs, None)
    except ValueError as exc:
        raise op.error(str(exc)) from None
    assert window is not None
    return window


def _lowest(dtype: np.dtype[Any]) -> float:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _prepare(x: np.ndarray, window: Window, fill: float) -> tuple[np.ndarray, list[int], list[int]]:
    """(padded input, begin pads, output sizes); the end grows for ceil_mode windows past the padding."""
    if x.ndim != len(window.kernel) + 2:
        raise ValueError(f"input of rank {x.ndim} does not fit a kernel of {len(window.kernel)} spatial axes")
    spatial = x.shape[2:]
    begins, ends, outs = window.geometry(spatial)
    ends = extend_ends(window, spatial, begins, ends, outs)
    return pad_spatial(x, begins, ends, fill), begins, outs


def max_pool(x: np.ndarray, window: Window) -> np.ndarray:
    """The max of each window, one spatial axis at a time: a window's max is the max along each of its axes in
    turn (exact in any order), so a 3x3 window takes 2 + 2 np.maximum calls, the first on rows of full width,
    instead of 8 on the output's size."""
    padded, _, outs = _prepare(x, window, _lowest(x.dtype))
    folded = padded
    for axis, (size, dilation, stride, out) in enumerate(zip(window.kernel, window.dilations, window.strides, outs),
                                                          start=2):
        def tap(k: int, source: np.ndarray = folded, axis: int = axis, dilation: int = dilation, stride: int = stride,
                out: int = out) -> np.ndarray:
            index = [slice(None)] * source.ndim
            index[axis] = slice(k * dilation, k * dilation + (out - 1) * stride + 1, stride)
            return source[tuple(index)]

        if size == 1:
            folded = tap(0)
            continue
        folded = np.maximum(tap(0), tap(1))
        for k in range(2, size):
            np.maximum(folded, tap(k), out=folded)
    return folded.copy() if np.may_share_memory(folded, padded) else np.ascontiguousarray(folded)


def max_pool_indices(x: np.ndarray, window: Window, storage_order: int) -> tuple[np.ndarray, np.ndarray]:
    """Max values and the flat index of each window's first maximum in x (row- or column-major spatial)."""
    padded, begins, outs = _prepare(x, window, _lowest(x.dtype))
    best = np.full((*x.shape[:2], *outs), _lowest(x.dtype), dtype=x.dtype)
    which = np.zeros(best.shape, dtype=np.int64)
    for k, view in enumerate(window.views(padded, outs)):
        better = view > best
        np.copyto(best, view, where=better)
        which[better] = k
    spatial = x.shape[2:]
    rank = len(spatial)
    offsets = np.array(list(window.offsets()), dtype=np.int64).reshape(-1, rank)
    coords = []
    for axis in range(rank):
        shape = [1] * (rank + 2)
        shape[axis + 2] = outs[axis]
        start = (np.arange(outs[axis]) * window.strides[axis] - begins[axis]).reshape(shape)
        coords.append(start + offsets[which, axis] * window.dilations[axis])
    order = range(rank) if storage_order == 0 else reversed(range(rank))
    flat = np.zeros(best.shape, dtype=np.int64)
    for axis in order:
        flat = flat * spatial[axis] + coords[axis]
    plane = math.prod(spatial)
    channel = np.arange(x.shape[0] * x.shape[1], dtype=np.int64).reshape(x.shape[0], x.shape[1], *([1] * rank))
    return best, flat + channel * plane


def _counts(window: Window, spatial: Sequence[int], begins: Sequence[int], outs: Sequence[int],
            include_pad: bool) -> np.ndarray:
    """How many elements each window averages: real ones, plus explicit pads when include_pad (the part of a
    ceil_mode window beyond the pads never counts)."""
    per_axis = []
    for axis, size in enumerate(spatial):
        start = np.arange(outs[axis]) * window.strides[axis] - begins[axis]
        taps = start[:, None] + np.arange(window.kernel[axis]) * window.dilations[axis]
        low, high = (-begins[axis], size + window_pad_end(window, axis, spatial, begins)) if include_pad \
            else (0, size)
        per_axis.append(((taps >= low) & (taps < high)).sum(axis=1))
    counts: np.ndarray = per_axis[0]
    for extra in per_axis[1:]:
        counts = np.multiply.outer(counts, extra)
    return counts


def window_pad_end(window: Window, axis: int, spatial: Sequence[int], begins: Sequence[int]) -> int:
    if window.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return window.geometry(spatial)[1][axis]
    return 0 if window.auto_pad == "VALID" else window.pads[axis + len(window.kernel)]


def sum_pool(x: np.ndarray, window: Window) -> tuple[np.ndarray, list[int], list[int]]:
    padded, begins, outs = _prepare(x, window, 0)
    views = window.views(padded, outs)
    y = np.array(next(views))
    for view in views:
        np.add(y, view, out=y)
    return y, begins, outs


def max_pool_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    window = _window(op, attrs)
    storage_order = int(attrs.get("storage_order") or 0)
    wants_indices = len(op.node.proto.output) > 1 and bool(op.node.proto.output[1])

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if wants_indices:
            return max_pool_indices(x, window, storage_order)
        return (max_pool(x, window),)

    return run


def average_pool_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    window = _window(op, attrs)
    include_pad = bool(attrs.get("count_include_pad") or 0)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        work = compute_dtype(x.dtype)
        total, begins, outs = sum_pool(x.astype(work, copy=False), window)
        counts = _counts(window, x.shape[2:], begins, outs, include_pad)
        return ((total / counts.astype(total.dtype)).astype(x.dtype, copy=False),)

    return run


def lp_pool_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    window = _window(op, attrs)
    p = float(attrs["p"] if attrs.get("p") is not None else 2)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        total, _, _ = sum_pool(np.abs(x) ** p, window)
        return ((total ** (1.0 / p)).astype(x.dtype, copy=False),)

    return run


def _spatial_axes(x: np.ndarray) -> tuple[int, ...]:
    if x.ndim < 3:
        raise ValueError(f"input of rank {x.ndim} has no spatial axes (expected N, C, D1, ...)")
    return tuple(range(2, x.ndim))


def global_average_pool_kernel(op: OpNode) -> PlainKernel:
    node_attributes(op)
    return lambda args: (np.mean(args[0], axis=_spatial_axes(args[0]), keepdims=True, dtype=None),)


def global_max_pool_kernel(op: OpNode) -> PlainKernel:
    node_attributes(op)
    return lambda args: (np.max(args[0], axis=_spatial_axes(args[0]), keepdims=True),)


def global_lp_pool_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    p = float(attrs["p"] if attrs.get("p") is not None else 2)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        total = np.sum(np.abs(x) ** p, axis=_spatial_axes(x), keepdims=True)
        return ((total ** (1.0 / p)).astype(x.dtype, copy=False),)

    return run


def max_unpool_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    window = _window(op, attrs)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, indices = args[0], args[1]
        shape_input = args[2] if len(args) > 2 and args[2] is not None else None
        if indices.shape != x.shape:
            raise ValueError(f"indices {indices.shape} and input {x.shape} differ in shape")
        rank = len(window.kernel)
        if shape_input is not None:
            shape = tuple(int(d) for d in np.asarray(shape_input).ravel())
        else:
            shape = x.shape[:2] + tuple(
                (size - 1) * window.strides[i] + window.kernel[i] - window.pads[i] - window.pads[i + rank]
                for i, size in enumerate(x.shape[2:]))
        y = np.zeros(math.prod(shape), dtype=x.dtype)
        flat = indices.ravel()
        if flat.size and (flat.min() < 0 or flat.max() >= y.size):
            raise ValueError(f"indices must lie in [0, {y.size}) for the output shape {list(shape)}")
        y[flat] = x.ravel()
        return (y.reshape(shape),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "AveragePool": average_pool_kernel,
    "GlobalAveragePool": global_average_pool_kernel,
    "GlobalLpPool": global_lp_pool_kernel,
    "GlobalMaxPool": global_max_pool_kernel,
    "LpPool": lp_pool_kernel,
    "MaxPool": max_pool_kernel,
    "MaxUnpool": max_unpool_kernel,
}
