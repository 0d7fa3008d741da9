"""Sampling grids: AffineGrid (20) makes one from affine matrices, GridSample (16, 20, 22) reads an input at its
positions. GridSample-16 takes 4-D inputs and names its modes bilinear/nearest/bicubic; from 20 any rank, modes
linear/nearest/cubic. Positions are normalized to [-1, 1] (align_corners: -1 and 1 are the corner pixels' centers,
else their outer edges); grid[..., 0] is the last spatial axis. Outside positions are padded with zeros, the border
value or the reflection, pixel by pixel (each pixel an interpolation reads); nearest rounds half to even, cubic is Keys' with a = -0.75. Integer inputs are sampled in
floating point and truncated."""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .shared import compute_dtype, node_attributes

_MODES_16 = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
_MODES = ("linear", "nearest", "cubic")
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75


def _base_coordinates(length: int, align_corners: bool) -> np.ndarray:
    """The normalized positions of `length` pixel centers."""
    if align_corners:  # a one-pixel axis: its center, 0 (as PyTorch's affine_grid)
        return np.linspace(-1.0, 1.0, length) if length > 1 else np.array([0.0])
    return (2.0 * np.arange(length) + 1.0) / length - 1.0


def affine_grid_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    align_corners = bool(attrs["align_corners"])

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        theta, size = args
        sizes = [int(s) for s in size.reshape(-1)]
        rank = len(sizes) - 2
        if rank not in (2, 3) or theta.shape != (sizes[0], rank, rank + 1):
            raise ValueError(f"theta {theta.shape} and size {sizes} must be (N, 2, 3) with (N, C, H, W) or "
                             "(N, 3, 4) with (N, C, D, H, W)")
        axes = [_base_coordinates(length, align_corners) for length in sizes[2:]]
        mesh = np.meshgrid(*axes, indexing="ij")  # per spatial axis, outermost first
        homogeneous = np.stack([*mesh[::-1], np.ones(sizes[2:])], axis=-1)  # (x, y[, z], 1)
        work = compute_dtype(theta.dtype)
        grid = np.einsum("...k,njk->n...j", homogeneous.astype(work), theta.astype(work))
        return (grid.astype(theta.dtype),)

    return run


def _unnormalize(position: np.ndarray, length: int, align_corners: bool) -> np.ndarray:
    if align_corners:
        return (position + 1) / 2 * (length - 1)
    return ((position + 1) * length - 1) / 2


def _reflect(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """x reflected by the borders until it lies in [low, high]."""
    span = high - low
    if span <= 0:
        return np.full_like(x, low)
    below, above = x < low, x > high
    distance = np.where(below, low - x, np.where(above, x - high, 0.0))
    flips = np.floor(distance / span)
    rest = distance - flips * span
    even = flips % 2 == 0
    from_low, from_high = low + rest, high - rest
    return np.where(below, np.where(even, from_low, from_high),
                    np.where(above, np.where(even, from_high, from_low), x))


def _cubic_far(d: np.ndarray) -> np.ndarray:
    """Keys' weight of a pixel 1 <= d < 2 away."""
    a = _CUBIC_A
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a


def _cubic_near(d: np.ndarray) -> np.ndarray:
    """Keys' weight of a pixel d < 1 away."""
    a = _CUBIC_A
    return ((a + 2) * d - (a + 3)) * d * d + 1


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    return [_cubic_far(t + 1), _cubic_near(t), _cubic_near(1 - t), _cubic_far(2 - t)]


def _taps(x: np.ndarray, mode: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(index, weight) of each input pixel a position reads along one axis."""
    if mode == "nearest":
        return [(x.astype(np.int64), np.ones_like(x))]
    start = np.floor(x)
    t = x - start
    first = start.astype(np.int64)
    if mode == "linear":
        return [(first, 1 - t), (first + 1, t)]
    return [(first + k - 1, w) for k, w in enumerate(_cubic_weights(t))]


def _fetch_index(index: np.ndarray, length: int, padding: str, low: float, high: float
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """(index inside the axis, mask of real pixels or None) for the padding mode."""
    if padding == "zeros":
        inside = (index >= 0) & (index < length)
        return np.clip(index, 0, length - 1), inside
    if padding == "border":
        return np.clip(index, 0, length - 1), None
    reflected = _reflect(index.astype(np.float64), low, high)
    return np.clip(np.trunc(reflected).astype(np.int64), 0, length - 1), None


def grid_sample(x: np.ndarray, grid: np.ndarray, mode: str, padding: str, align_corners: bool) -> np.ndarray:
    """X (N, C, *D) sampled at grid (N, *O, r): (N, C, *O)."""
    spatial = x.shape[2:]
    rank = len(spatial)
    work = np.dtype(np.float64) if x.dtype == np.float64 or grid.dtype == np.float64 else np.dtype(np.float32)
    positions = grid.astype(work)
    axis_taps = []
    for axis, length in enumerate(spatial):
        low, high = (0.0, length - 1.0) if align_corners else (-0.5, length - 0.5)
        p = _unnormalize(positions[..., rank - 1 - axis], length, align_corners)
        if mode == "nearest":
            p = np.rint(p)
        axis_taps.append([(*_fetch_index(index, length, padding, low, high), weight)
                          for index, weight in _taps(p, mode)])
    values = x if x.dtype.kind in "fc" and x.dtype.itemsize >= 4 else x.astype(work)
    batch = np.arange(x.shape[0]).reshape((-1,) + (1,) * (grid.ndim - 2))
    total: Any = 0
    for combination in itertools.product(*axis_taps):
        weight: Any = 1
        for _, mask, axis_weight in combination:
            weight = weight * (axis_weight if mask is None else np.where(mask, axis_weight, 0))
        picked = np.moveaxis(_gather(values, batch, [position for position, _, _ in combination]), -1, 1)
        total = total + picked * np.expand_dims(weight, 1)
    return np.asarray(total)


def _gather(values: np.ndarray, batch: np.ndarray, positions: list[np.ndarray]) -> np.ndarray:
    """values[n, :, i1, i2, ...] for each output position: (N, *O, C)."""
    moved = np.moveaxis(values, 1, -1)  # (N, *D, C)
    picked: np.ndarray = moved[(batch,) + tuple(positions)]
    return picked


def grid_sample_kernel(op: OpNode) -> PlainKernel:
    version, attrs = node_attributes(op)
    mode, padding = str(attrs["mode"]), str(attrs["padding_mode"])
    modes = _MODES_16 if version < 20 else {m: m for m in _MODES}
    if mode not in modes:
        raise op.error(f"GridSample-{version} has no mode {mode!r} (it has {', '.join(modes)})")
    if padding not in _PADDINGS:
        raise op.error(f"padding_mode {padding!r} is none of {', '.join(_PADDINGS)}")
    mode, align_corners = modes[mode], bool(attrs["align_corners"])

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, grid = args
        rank = x.ndim - 2
        if rank < 1 or (version < 20 and rank != 2) or grid.shape != (x.shape[0], *grid.shape[1:-1], rank) \
                or grid.ndim != x.ndim:
            raise ValueError(f"X {x.shape} and grid {grid.shape} must be (N, C, D1..Dr) and (N, O1..Or, r)"
                             f"{' with r = 2' if version < 20 else ''}")
        if x.dtype.kind in "OUSb" and mode != "nearest":
            raise ValueError(f"{x.dtype} inputs can only be sampled with mode nearest")
        if x.dtype.kind in "OUSb":
            return (_sample_nearest_any(x, grid, padding, align_corners),)
        y = grid_sample(x, grid, mode, padding, align_corners)
        return (y.astype(x.dtype),)

    return run


def _sample_nearest_any(x: np.ndarray, grid: np.ndarray, padding: str, align_corners: bool) -> np.ndarray:
    """Nearest sampling of strings and bools: the index map of a numeric sample, then a gather."""
    flat = np.arange(x[0, 0].size, dtype=np.float64).reshape(x.shape[2:])
    where = grid_sample(np.broadcast_to(flat, (x.shape[0], 1, *flat.shape)) + 1, grid, "nearest", padding,
                        align_corners)[:, 0]
    taken = np.moveaxis(x.reshape(x.shape[0], x.shape[1], -1), 1, -1)[
        np.arange(x.shape[0]).reshape((-1,) + (1,) * (where.ndim - 1)), np.maximum(where.astype(np.int64) - 1, 0)]
    fill = np.array("" if x.dtype.kind in "OUS" else False, dtype=x.dtype)
    return np.moveaxis(np.where((where > 0)[..., None], taken, fill), -1, 1)


KERNELS: dict[str, KernelFactory] = {"AffineGrid": affine_grid_kernel, "GridSample": grid_sample_kernel}
