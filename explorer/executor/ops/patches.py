"""Convolutions by patches: Col2Im (18) sums column blocks back into an image, DeformConv (19, 22) convolves with
kernels whose taps move by learned offsets (N-linear sampling, zero outside the input) and are weighted by a mask.
Both work for any number of spatial axes; loops run over kernel taps (and interpolation corners), never pixels."""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .conv import grouped_window
from .shared import compute_dtype, node_attributes
from .windows import window_of


def col2im_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        cols, image_shape, block_shape = args
        image = [int(v) for v in image_shape.reshape(-1)]
        block = [int(v) for v in block_shape.reshape(-1)]
        if len(block) != len(image) or cols.ndim != 3:
            raise ValueError(f"input {cols.shape}, image_shape {image} and block_shape {block} do not agree")
        window = window_of(attrs, len(image), block)
        assert window is not None
        begins, ends, counts = window.geometry(image)
        taps = int(np.prod(block))
        if cols.shape[1] % max(taps, 1) or cols.shape[2] != int(np.prod(counts)) or min(counts) < 1:
            raise ValueError(f"input {cols.shape} holds no {block} blocks of an image {image} ({counts} blocks)")
        if cols.dtype.kind in "OUS":
            raise ValueError("Col2Im sums overlapping blocks; strings cannot be summed")
        n, channels = cols.shape[0], cols.shape[1] // taps
        blocks = cols.reshape(n, channels, taps, *counts)
        padded = np.zeros((n, channels, *(i + b + e for i, b, e in zip(image, begins, ends))), cols.dtype)
        for tap, view in enumerate(window.views(padded, counts)):
            view += blocks[:, :, tap]  # a view into `padded`: the tap's blocks add where they lie
        crop = tuple(slice(b, b + i) for b, i in zip(begins, image))
        return (padded[(slice(None), slice(None)) + crop].copy(),)

    return run


def _sample(x: np.ndarray, points: list[np.ndarray]) -> np.ndarray:
    """x (N, G, C, *D) read N-linearly at points (one array per axis, each (N, G, *P)), zero outside: (N, G, C, *P)."""
    spatial = x.shape[3:]
    starts = [np.floor(p) for p in points]
    total: Any = 0
    batch = np.arange(x.shape[0]).reshape((-1,) + (1,) * (points[0].ndim - 1))
    group = np.arange(x.shape[1]).reshape((1, -1) + (1,) * (points[0].ndim - 2))
    moved = np.moveaxis(x, 2, -1)  # (N, G, *D, C)
    for corner in itertools.product((0, 1), repeat=len(spatial)):
        weight: Any = 1
        index = []
        for p, start, up, size in zip(points, starts, corner, spatial):
            at = start.astype(np.int64) + up
            weight = weight * np.where((at >= 0) & (at < size), 1 - np.abs(p - at), 0)
            index.append(np.clip(at, 0, size - 1))
        total = total + moved[(batch, group) + tuple(index)] * weight[..., None]
    return np.moveaxis(np.asarray(total), -1, 2)


def deform_conv_kernel(op: OpNode) -> PlainKernel:
    attrs, group, window_for_weights = grouped_window(op)
    offset_group = int(attrs["offset_group"])

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, w, offset = args[:3]
        bias = args[3] if len(args) > 3 else None
        mask = args[4] if len(args) > 4 else None
        window = window_for_weights(w)
        rank = x.ndim - 2
        n, channels = x.shape[:2]
        out = offset.shape[2:]
        taps = int(np.prod(window.kernel))
        begins, _, expected = window.geometry(x.shape[2:])
        if channels % group or channels % offset_group or w.shape[1] * group != channels or w.shape[0] % group \
                or offset.shape[:2] != (n, offset_group * taps * rank) or list(out) != expected \
                or (mask is not None and mask.shape != (n, offset_group * taps, *out)):
            raise ValueError(f"X {x.shape}, W {w.shape}, offset {offset.shape}"
                             f"{'' if mask is None else f', mask {mask.shape}'} do not agree with group={group}, "
                             f"offset_group={offset_group}, kernel {list(window.kernel)} and output {expected}")
        work = compute_dtype(x.dtype)
        moves = offset.astype(work).reshape(n, offset_group, taps, rank, *out)
        grid = np.meshgrid(*(np.arange(o) for o in out), indexing="ij")
        tap_index = np.array(list(window.offsets())).reshape(taps, rank)
        points = [(tap_index[:, a].reshape((1, 1, taps) + (1,) * rank) * window.dilations[a] - begins[a]
                   + grid[a] * window.strides[a] + moves[:, :, :, a]) for a in range(rank)]
        grouped = x.astype(work).reshape(n, offset_group, channels // offset_group, *x.shape[2:])
        sampled = _sample(grouped, points)  # (N, G, C/G, taps, *out)
        if mask is not None:
            sampled = sampled * mask.astype(work).reshape(n, offset_group, 1, taps, *out)
        columns = sampled.reshape(n, group, channels // group, taps, -1)
        weights = w.astype(work).reshape(group, w.shape[0] // group, channels // group, taps)
        y = np.einsum("ngckp,gmck->ngmp", columns, weights, optimize=True).reshape(n, w.shape[0], *out)
        if bias is not None:
            y = y + bias.astype(work).reshape((1, -1) + (1,) * rank)
        return (y.astype(x.dtype),)

    return run


KERNELS: dict[str, KernelFactory] = {"Col2Im": col2im_kernel, "DeformConv": deform_conv_kernel}
