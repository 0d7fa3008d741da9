"""Convolutions by patches: Col2Im (18) sums column blocks back into an image, DeformConv (19, 22) convolves with
kernels whose taps move by learned offsets (N-linear sampling, zero outside the input) and are weighted by a mask.
Both work for any number of spatial axes; loops run over kernel taps (and interpolation corners), never pixels."""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from .base import PlainKernel
from .shared import compute_dtype, node_attributes

if TYPE_CHECKING:
    from ...graph import NodeRef
    from ..program import Program


def _per_axis(value: Any, rank: int, default: int, name: str) -> list[int]:
    found = [default] * rank if value is None else [int(v) for v in value]
    if len(found) != rank:
        raise ValueError(f"{name} has {len(found)} values for {rank} spatial axes")
    return found


def _blocks(size: int, kernel: int, stride: int, dilation: int, begin: int, end: int) -> int:
    """How many positions a dilated kernel takes along a padded axis."""
    return (size + begin + end - dilation * (kernel - 1) - 1) // stride + 1


def col2im_kernel(node: NodeRef, program: Program) -> PlainKernel:
    _, attrs = node_attributes(node, program)

    def run(args: list[Any]) -> tuple[Any, ...]:
        cols, image_shape, block_shape = args
        image = [int(v) for v in image_shape.reshape(-1)]
        block = [int(v) for v in block_shape.reshape(-1)]
        rank = len(image)
        if len(block) != rank or cols.ndim != 3:
            raise ValueError(f"input {cols.shape}, image_shape {image} and block_shape {block} do not agree")
        strides = _per_axis(attrs["strides"], rank, 1, "strides")
        dilations = _per_axis(attrs["dilations"], rank, 1, "dilations")
        pads = _per_axis(attrs["pads"], 2 * rank, 0, "pads")
        counts = [_blocks(image[a], block[a], strides[a], dilations[a], pads[a], pads[a + rank]) for a in range(rank)]
        taps = int(np.prod(block))
        if cols.shape[1] % max(taps, 1) or cols.shape[2] != int(np.prod(counts)) or min(counts) < 1:
            raise ValueError(f"input {cols.shape} holds no {block} blocks of an image {image} ({counts} blocks)")
        if cols.dtype.kind in "OUS":
            raise ValueError("Col2Im sums overlapping blocks; strings cannot be summed")
        n, channels = cols.shape[0], cols.shape[1] // taps
        blocks = cols.reshape(n, channels, *block, *counts)
        padded = np.zeros((n, channels, *(image[a] + pads[a] + pads[a + rank] for a in range(rank))), cols.dtype)
        for tap in itertools.product(*(range(b) for b in block)):
            where = tuple(slice(t * d, t * d + s * (c - 1) + 1, s) for t, d, s, c in zip(tap, dilations, strides, counts))
            padded[(slice(None), slice(None)) + where] += blocks[(slice(None), slice(None)) + tap]
        crop = tuple(slice(pads[a], pads[a] + image[a]) for a in range(rank))
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


def deform_conv_kernel(node: NodeRef, program: Program) -> PlainKernel:
    _, attrs = node_attributes(node, program)
    group, offset_group = int(attrs["group"]), int(attrs["offset_group"])

    def run(args: list[Any]) -> tuple[Any, ...]:
        x, w, offset = args[:3]
        bias = args[3] if len(args) > 3 else None
        mask = args[4] if len(args) > 4 else None
        rank = x.ndim - 2
        kernel = _per_axis(attrs["kernel_shape"] if attrs["kernel_shape"] is not None else w.shape[2:], rank, 1,
                           "kernel_shape")
        strides = _per_axis(attrs["strides"], rank, 1, "strides")
        dilations = _per_axis(attrs["dilations"], rank, 1, "dilations")
        pads = _per_axis(attrs["pads"], 2 * rank, 0, "pads")
        n, channels = x.shape[:2]
        out = offset.shape[2:]
        taps = int(np.prod(kernel))
        expected = [_blocks(x.shape[2 + a], kernel[a], strides[a], dilations[a], pads[a], pads[a + rank])
                    for a in range(rank)]
        if channels % group or channels % offset_group or w.shape[1] * group != channels or w.shape[0] % group \
                or offset.shape[:2] != (n, offset_group * taps * rank) or list(out) != expected \
                or (mask is not None and mask.shape != (n, offset_group * taps, *out)):
            raise ValueError(f"X {x.shape}, W {w.shape}, offset {offset.shape}"
                             f"{'' if mask is None else f', mask {mask.shape}'} do not agree with group={group}, "
                             f"offset_group={offset_group}, kernel {kernel} and output {expected}")
        work = compute_dtype(x.dtype)
        moves = offset.astype(work).reshape(n, offset_group, taps, rank, *out)
        grid = np.meshgrid(*(np.arange(o) for o in out), indexing="ij")
        tap_index = np.array(list(itertools.product(*(range(k) for k in kernel)))).reshape(taps, rank)
        points = [(tap_index[:, a].reshape((1, 1, taps) + (1,) * rank) * dilations[a] - pads[a]
                   + grid[a] * strides[a] + moves[:, :, :, a]) for a in range(rank)]
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


KERNELS = {"Col2Im": col2im_kernel, "DeformConv": deform_conv_kernel}
