"""Kernels that move elements between axes: DepthToSpace, SpaceToDepth, ReverseSequence."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel


def _block_mode(op: OpNode, has_mode: bool) -> tuple[int, str]:
    blocksize = op.get_int("blocksize")
    if blocksize < 1:
        raise op.error(f"blocksize {blocksize} must be at least 1")
    mode = op.get_str("mode", "DCR") if has_mode else "DCR"
    if mode not in ("DCR", "CRD"):
        raise op.error(f"mode {mode!r} is not 'DCR' or 'CRD'")
    return blocksize, mode


def _nchw(x: np.ndarray) -> tuple[int, int, int, int]:
    if x.ndim != 4:
        raise ValueError(f"input must be 4-D [N, C, H, W], got shape {list(x.shape)}")
    n, c, h, w = x.shape
    return n, c, h, w


def depth_to_space(op: OpNode) -> PlainKernel:
    """DepthToSpace-1 (DCR), 11 and later (mode DCR: depth-column-row, or CRD: column-row-depth)."""
    b, mode = _block_mode(op, op.version >= 11)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        n, c, h, w = _nchw(x)
        if c % (b * b):
            raise ValueError(f"{c} channels do not divide by blocksize² = {b * b}")
        depth = c // (b * b)
        if mode == "DCR":
            y = x.reshape(n, b, b, depth, h, w).transpose(0, 3, 4, 1, 5, 2)
        else:
            y = x.reshape(n, depth, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
        return (y.reshape(n, depth, h * b, w * b),)

    return run


def space_to_depth(op: OpNode) -> PlainKernel:
    """SpaceToDepth-1, 13 (DCR), 28 (mode DCR or CRD), the inverse of DepthToSpace in the same mode."""
    b, mode = _block_mode(op, op.version >= 28)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        n, c, h, w = _nchw(x)
        if h % b or w % b:
            raise ValueError(f"height {h} and width {w} must divide by blocksize {b}")
        y = x.reshape(n, c, h // b, b, w // b, b)
        y = y.transpose(0, 3, 5, 1, 2, 4) if mode == "DCR" else y.transpose(0, 1, 3, 5, 2, 4)
        return (y.reshape(n, c * b * b, h // b, w // b),)

    return run


def reverse_sequence(op: OpNode) -> PlainKernel:
    """ReverseSequence: along time_axis, the first sequence_lens[i] elements of batch i reversed."""
    time_axis, batch_axis = op.get_int("time_axis"), op.get_int("batch_axis")
    if {time_axis, batch_axis} != {0, 1}:
        raise op.error(f"time_axis={time_axis} and batch_axis={batch_axis} must be 0 and 1 (one each)")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, lens = args[0], np.asarray(args[1])
        if x.ndim < 2:
            raise ValueError(f"input must have at least 2 dimensions, got shape {list(x.shape)}")
        steps, batch = x.shape[time_axis], x.shape[batch_axis]
        if lens.shape != (batch,):
            raise ValueError(f"sequence_lens has shape {list(lens.shape)}, expected [{batch}] (the batch size)")
        lens = lens.astype(np.int64)
        if lens.size and (lens.min() < 0 or lens.max() > steps):
            raise ValueError(f"sequence_lens {lens.tolist()} must lie in [0, {steps}] (the time steps)")
        t = np.arange(steps)[:, None]
        source = np.where(t < lens[None, :], lens[None, :] - 1 - t, t)  # [time, batch]
        if time_axis == 1:
            source = source.T
        index = source.reshape(source.shape + (1,) * (x.ndim - 2))
        return (np.take_along_axis(x, index, axis=time_axis),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "DepthToSpace": depth_to_space,
    "SpaceToDepth": space_to_depth,
    "ReverseSequence": reverse_sequence,
}
