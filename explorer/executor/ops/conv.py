"""Convolutions on BLAS: Conv (1, 11, 22), ConvTranspose (1, 11, 22), ConvInteger (10).

Conv gathers each kernel offset's strided view into an im2col matrix and runs one batched matmul per group;
ConvTranspose runs the matmul first and scatters its columns back (col2im), one slice assignment per kernel
offset. Half-precision inputs are computed in float32, integer ones in float64 (exact for these sums)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .shared import compute_dtype, node_attributes
from .windows import Window, pad_spatial, window_of


def window_for(attrs: dict[str, Any]) -> Callable[[np.ndarray], Window]:
    """w -> the node's Window for weights of w's shape, built once per weight shape."""
    built: dict[tuple[int, ...], Window] = {}

    def get(w: np.ndarray) -> Window:
        window = built.get(w.shape)
        if window is None:
            window = built[w.shape] = _window(attrs, w)
        return window

    return get


def grouped_window(op: OpNode) -> tuple[dict[str, Any], int, Callable[[np.ndarray], Window]]:
    """(attributes, group, w -> Window) of a convolution node (Conv, ConvInteger, ConvTranspose, QLinearConv,
    DeformConv)."""
    _, attrs = node_attributes(op)
    return attrs, int(attrs["group"] or 1), window_for(attrs)


def _window(attrs: dict[str, Any], w: np.ndarray) -> Window:
    kernel = list(w.shape[2:])
    declared = attrs.get("kernel_shape")
    if declared and list(declared) != kernel:
        raise ValueError(f"kernel_shape {list(declared)} differs from the weights' spatial shape {kernel}")
    window = window_of(attrs, len(kernel), kernel)
    assert window is not None
    return window


def convolve(x: np.ndarray, w: np.ndarray, window: Window, group: int) -> np.ndarray:
    """Cross-correlation of x (N, C, *spatial) with w (M, C/group, *kernel), without bias, in x's dtype."""
    if x.ndim < 3 or w.ndim != x.ndim:
        raise ValueError(f"input {x.shape} and weights {w.shape} must both have rank >= 3 and the same rank")
    n, c = x.shape[:2]
    m = w.shape[0]
    if group < 1 or c % group or m % group or w.shape[1] * group != c:
        raise ValueError(f"input has {c} channels and weights {w.shape}: they do not split into {group} groups")
    begins, ends, outs = window.geometry(x.shape[2:])
    padded = pad_spatial(x, begins, ends)
    positions = math.prod(outs)
    taps = math.prod(window.kernel)
    if group == c == m and positions >= 512:  # big depthwise: a multiply-add per kernel offset, no im2col
        # (small ones are faster as one batched matmul: fewer numpy calls)
        if len(outs) == 2 and all(s == 1 for s in window.strides) and all(d == 1 for d in window.dilations):
            return _depthwise_rows(padded, w, outs)
        kernel = w.reshape(1, c, taps, *([1] * len(outs)))
        views = window.views(padded, outs)
        total: np.ndarray = next(views) * kernel[:, :, 0]
        for k, view in enumerate(views, start=1):
            total += view * kernel[:, :, k]
        return total
    if taps == 1 and all(s == 1 for s in window.strides) and tuple(outs) == padded.shape[2:]:
        cols = padded.reshape(n, group, c // group, positions)
    else:
        cols = window.patches(padded, outs).reshape(n, group, (c // group) * taps, positions)
    y: np.ndarray = np.matmul(w.reshape(group, m // group, -1), cols).reshape(n, m, *outs)
    return y


def _depthwise_rows(padded: np.ndarray, w: np.ndarray, outs: Sequence[int]) -> np.ndarray:
    """A 2-D depthwise convolution at stride 1: each kernel offset's view of the padded rows is one contiguous
    run per channel when the output keeps the padded width (its extra columns, computed and dropped, are the
    price), so each multiply-add runs numpy's contiguous loop instead of a strided one (a quarter faster on
    ShuffleNet's 3x3 depthwise layers). Every output element gets the same products added in the same order as
    with strided views: the same bits."""
    n, c, height, width = padded.shape
    rows, cols = outs
    kh, kw = w.shape[2:]
    flat = padded.reshape(n, c, height * width)
    length = (rows - 1) * width + cols
    kernel = w.reshape(1, c, kh * kw, 1)
    total = np.empty((n, c, rows * width), padded.dtype)
    head = total[:, :, :length]
    tmp = np.empty_like(head)
    for k in range(kh * kw):
        start = (k // kw) * width + k % kw
        if k == 0:
            np.multiply(flat[:, :, start:start + length], kernel[:, :, 0], out=head)
        else:
            np.multiply(flat[:, :, start:start + length], kernel[:, :, k], out=tmp)
            head += tmp
    result: np.ndarray = total.reshape(n, c, rows, width)[:, :, :, :cols]
    return result


def _add_bias(y: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    if bias is not None:
        if bias.shape != (y.shape[1],):
            raise ValueError(f"bias shape {bias.shape} does not match {y.shape[1]} output channels")
        y += bias.astype(y.dtype, copy=False).reshape((1, -1) + (1,) * (y.ndim - 2))
    return y


def conv_kernel(op: OpNode) -> PlainKernel:
    _, group, window = grouped_window(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, w = args[0], args[1]
        bias = args[2] if len(args) > 2 else None
        work = compute_dtype(x.dtype)
        y = convolve(x.astype(work, copy=False), w.astype(work, copy=False), window(w), group)
        return (_add_bias(y, bias).astype(x.dtype, copy=False),)

    return run


def conv_integer_kernel(op: OpNode) -> PlainKernel:
    _, group, window = grouped_window(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, w = args[0], args[1]
        xs = shifted(x, args[2] if len(args) > 2 else None, 1, "x_zero_point")
        ws = shifted(w, args[3] if len(args) > 3 else None, 0, "w_zero_point")
        y = convolve(xs, ws, window(w), group)
        return (np.rint(y).astype(np.int32),)

    return run


def shifted(x: np.ndarray, zero_point: np.ndarray | None, axis: int, name: str) -> np.ndarray:
    """x - zero_point in float64; the zero point is a scalar or one value per index of `axis`."""
    out = x.astype(np.float64)
    if zero_point is None:
        return out
    if zero_point.dtype != x.dtype:
        raise ValueError(f"{name} has type {zero_point.dtype}, its tensor {x.dtype}")
    if zero_point.size == 1:
        return out - float(zero_point.reshape(()))
    if zero_point.ndim != 1 or zero_point.shape[0] != x.shape[axis]:
        raise ValueError(f"{name} of shape {zero_point.shape} is neither a scalar nor one value per index of "
                         f"axis {axis} ({x.shape[axis]})")
    shape = [1] * x.ndim
    shape[axis] = -1
    return out - zero_point.astype(np.float64).reshape(shape)


def conv_transpose(x: np.ndarray, w: np.ndarray, window: Window, group: int, output_padding: Sequence[int],
                   output_shape: Sequence[int] | None) -> np.ndarray:
    """ConvTranspose of x (N, C, *spatial) with w (C, M/group, *kernel), without bias."""
    if x.ndim < 3 or w.ndim != x.ndim:
        raise ValueError(f"input {x.shape} and weights {w.shape} must both have rank >= 3 and the same rank")
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    rank = len(spatial)
    if group < 1 or c % group or w.shape[0] != c:
        raise ValueError(f"input has {c} channels and weights {w.shape}: they do not split into {group} groups "
                         "along the weights' first axis")
    per_group = w.shape[1]
    m = per_group * group
    taps = math.prod(window.kernel)
    positions = math.prod(spatial)
    if c == group:  # one input channel per group (depthwise): an outer product per channel, no batch of tiny GEMMs
        cols = (w.reshape(1, c, per_group * taps, 1) * x.reshape(n, c, 1, positions)).reshape(n, m, taps, *spatial)
    else:
        xm = x.reshape(n, group, c // group, positions)
        wm = w.reshape(group, c // group, per_group * taps).transpose(0, 2, 1)
        cols = np.matmul(wm, xm).reshape(n, m, taps, *spatial)
    begins, outs = _transpose_geometry(window, spatial, output_padding, output_shape)
    if taps == 1 and not any(begins) and list(outs) == list(spatial) and all(s == 1 for s in window.strides):
        return cols.reshape(n, m, *spatial)  # a 1x1 kernel at stride 1 without pads: the product is the output
    full = [(size - 1) * window.strides[i] + window.effective(i) for i, size in enumerate(spatial)]
    low = [min(0, b) for b in begins]
    high = [max(f, b + o) for f, b, o in zip(full, begins, outs)]
    canvas = np.zeros((n, m, *(h - lo for h, lo in zip(high, low))), dtype=x.dtype)
    for i, offset in enumerate(window.offsets()):
        index: list[slice] = [slice(None), slice(None)]
        for axis, k in enumerate(offset):
            start = k * window.dilations[axis] - low[axis]
            index.append(slice(start, start + (spatial[axis] - 1) * window.strides[axis] + 1,
                               window.strides[axis]))
        canvas[tuple(index)] += cols[:, :, i]
    crop = tuple(slice(b - lo, b - lo + o) for b, lo, o in zip(begins, low, outs))
    return canvas[(slice(None), slice(None)) + crop] if rank else canvas


def _transpose_geometry(window: Window, spatial: Sequence[int], output_padding: Sequence[int],
                        output_shape: Sequence[int] | None) -> tuple[list[int], list[int]]:
    """(begin pads, output sizes) of a ConvTranspose, as its spec derives them."""
    rank = len(spatial)
    begins, outs = [], []
    for i, size in enumerate(spatial):
        s = window.strides[i]
        natural = s * (size - 1) + output_padding[i] + window.effective(i)
        if output_shape or window.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out = int(output_shape[i]) if output_shape else size * s
            total = natural - out
            begin = total // 2 if window.auto_pad == "SAME_UPPER" else total - total // 2
        else:
            begin, end = (0, 0) if window.auto_pad == "VALID" else (window.pads[i], window.pads[i + rank])
            out = natural - begin - end
        if out < 1:
            raise ValueError(f"axis {i}: the output size would be {out}")
        begins.append(begin)
        outs.append(out)
    return begins, outs


def conv_transpose_kernel(op: OpNode) -> PlainKernel:
    attrs, group, window_of_weights = grouped_window(op)
    output_shape = attrs.get("output_shape")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, w = args[0], args[1]
        bias = args[2] if len(args) > 2 else None
        window = window_of_weights(w)
        rank = len(window.kernel)
        padding = list(attrs.get("output_padding") or [0] * rank)
        wanted = list(output_shape)[-rank:] if output_shape else None
        if len(padding) != rank or (output_shape and len(output_shape) not in (rank, rank + 2)):
            raise ValueError(f"output_padding {padding} / output_shape {output_shape} do not match the {rank} "
                             "spatial axes")
        work = compute_dtype(x.dtype)
        y = conv_transpose(x.astype(work, copy=False), w.astype(work, copy=False), window, group, padding, wanted)
        return (_add_bias(np.ascontiguousarray(y), bias).astype(x.dtype, copy=False),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "Conv": conv_kernel,
    "ConvInteger": conv_integer_kernel,
    "ConvTranspose": conv_transpose_kernel,
}
