"""Resize (10, 11, 13, 18, 19) and Upsample (7, 9, 10): separable per-axis resampling. Nearest gathers; linear
and cubic build one (output x input) weight matrix per resized axis (edge-clamped taps, exclude_outside,
antialias stretching the filter by 1/scale) and apply it with tensordot on BLAS.

Resize-10 and Upsample take the coordinates as x / scale ("asymmetric") and, for nearest, the input index
onnxruntime picks: floor when upsampling, ceil when downsampling."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .shared import node_attributes

_TRANSFORMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
               "tf_half_pixel_for_nn", "tf_crop_and_resize")
_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")


def source_coordinates(mode: str, out: int, size: int, scale: float, roi: tuple[float, float]) -> np.ndarray:
    """x_original for every x_resized of one axis, in float32 arithmetic as onnxruntime computes it (a float32
    scale such as 0.6 then maps (1 + 0.5) / 0.6 - 0.5 to exactly 2, as the real numbers do)."""
    x = np.arange(out, dtype=np.float32)
    scale = np.float32(scale)
    size_ = np.float32(size)
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = np.float32(out) / (scale * size_)
        return np.asarray(size_ / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5, np.float32)
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out > 1 else np.zeros(out, np.float32)
    if mode == "align_corners":
        return x * (size_ - 1) / np.float32(out - 1) if out > 1 else np.zeros(out, np.float32)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    start, end = np.float32(roi[0]), np.float32(roi[1])
    if out > 1:
        return np.asarray(start * (size_ - 1) + x * (end - start) * (size_ - 1) / np.float32(out - 1), np.float32)
    return np.full(out, 0.5 * (start + end) * (size_ - 1), np.float32)


def nearest_indices(coords: np.ndarray, mode: str, downsampling: bool, size: int) -> np.ndarray:
    if mode == "round_prefer_floor":
        index = np.ceil(coords - 0.5)
    elif mode == "round_prefer_ceil":
        index = np.floor(coords + 0.5)
    elif mode == "floor" or (mode == "simple" and not downsampling):
        index = np.floor(coords)
    else:
        index = np.ceil(coords)
    return np.clip(index, 0, size - 1).astype(np.int64)


def _cubic(t: np.ndarray, a: float) -> np.ndarray:
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def interpolation_matrix(coords: np.ndarray, size: int, cubic: bool, a: float, exclude_outside: bool,
                         stretch: float) -> np.ndarray:
    """(out, size) weights: each row the linear or cubic filter (stretched by `stretch` >= 1 for antialias)
    centred on x_original, taps beyond the edges clamped to it (or dropped with exclude_outside)."""
    support = (2.0 if cubic else 1.0) * stretch
    base = np.floor(coords)
    first = math.floor(-support + 1) if stretch > 1 else (-1 if cubic else 0)
    last = -first + 1 if stretch > 1 else (2 if cubic else 1)
    offsets = np.arange(first, last + 1)
    taps = base[:, None] + offsets[None, :]
    distance = (taps - coords[:, None]) / stretch
    weights = _cubic(distance, a) if cubic else np.clip(1 - np.abs(distance), 0, None)
    inside = (taps >= 0) & (taps <= size - 1)
    if exclude_outside:
        weights = np.where(inside, weights, 0.0)
    totals = weights.sum(axis=1, keepdims=True)
    weights = np.divide(weights, totals, out=np.zeros_like(weights), where=totals != 0)
    matrix = np.zeros((coords.shape[0], size))
    rows = np.broadcast_to(np.arange(coords.shape[0])[:, None], taps.shape)
    np.add.at(matrix, (rows, np.clip(taps, 0, size - 1).astype(np.int64)), weights)
    return matrix


class Plan:
    """The resampling of one node: mode, coordinate transform and their parameters."""

    def __init__(self, mode: str, transform: str, nearest: str, a: float, exclude_outside: bool,
                 extrapolation: float, antialias: bool) -> None:
        self.mode, self.transform, self.nearest = mode, transform, nearest
        self.a, self.exclude_outside, self.extrapolation, self.antialias = a, exclude_outside, extrapolation, antialias

    def apply(self, x: np.ndarray, outs: list[int], scales: list[float], rois: list[tuple[float, float]]) -> Any:
        integer = x.dtype.kind in "iu"
        y = x if self.mode == "nearest" else x.astype(np.float64 if x.dtype == np.float64 else np.float32)
        outside = None
        for axis, (out, scale, roi) in enumerate(zip(outs, scales, rois)):
            size = x.shape[axis]
            if out == size and scale == 1.0 and self.transform != "tf_crop_and_resize":
                continue
            coords = source_coordinates(self.transform, out, size, scale, roi).astype(np.float64)
            if self.transform == "tf_crop_and_resize":
                beyond = (coords < 0) | (coords > size - 1)
                shape = [1] * x.ndim
                shape[axis] = out
                mask = beyond.reshape(shape)
                outside = mask if outside is None else outside | mask
            if self.mode == "nearest":
                y = np.take(y, nearest_indices(coords, self.nearest, scale < 1, size), axis=axis)
            else:
                stretch = 1.0 / scale if self.antialias and scale < 1 else 1.0
                matrix = interpolation_matrix(coords, size, self.mode == "cubic", self.a, self.exclude_outside,
                                              stretch).astype(y.dtype)
                y = np.moveaxis(np.tensordot(matrix, y, axes=([1], [axis])), 0, axis)
        if outside is not None:
            y = np.where(outside, np.asarray(self.extrapolation, dtype=y.dtype), y)
        if integer and self.mode != "nearest":
            info = np.iinfo(x.dtype)
            y = np.clip(np.trunc(y), info.min, info.max)  # onnxruntime truncates interpolated integers
        return y.astype(x.dtype, copy=False)


def _floats(value: Any) -> list[float]:
    return [] if value is None else [float(v) for v in np.asarray(value).ravel()]


def resize_kernel(op: OpNode) -> PlainKernel:
    version, attrs = node_attributes(op)
    mode = attrs["mode"]
    if mode not in (("nearest", "linear") if version < 11 else ("nearest", "linear", "cubic")):
        raise op.error(f"mode {mode!r} is not one of Resize-{version}'s modes")
    transform = attrs.get("coordinate_transformation_mode") or "asymmetric"
    allowed: tuple[str, ...] = _TRANSFORMS[:1] + _TRANSFORMS[2:] if version < 19 else _TRANSFORMS
    if version >= 13:
        allowed = tuple(t for t in allowed if t != "tf_half_pixel_for_nn")
    if transform not in allowed:
        raise op.error(f"coordinate_transformation_mode {transform!r} is not one of Resize-{version}'s "
                           f"{list(allowed)}")
    nearest = attrs.get("nearest_mode") or "simple"
    if nearest not in _NEAREST[:4] and version >= 11:
        raise op.error(f"nearest_mode {nearest!r} is not one of {list(_NEAREST[:4])}")
    policy = attrs.get("keep_aspect_ratio_policy") or "stretch"
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise op.error(f"keep_aspect_ratio_policy {policy!r} is not stretch, not_larger or not_smaller")
    plan = Plan(mode, transform, nearest, float(attrs.get("cubic_coeff_a") or -0.75),
                bool(attrs.get("exclude_outside") or 0), float(attrs.get("extrapolation_value") or 0.0),
                bool(attrs.get("antialias") or 0))
    axes_attr = attrs.get("axes")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if version < 11:
            roi, scales, sizes = None, args[1], None
        else:
            roi = args[1] if len(args) > 1 else None
            scales = args[2] if len(args) > 2 else None
            sizes = args[3] if len(args) > 3 else None
        axes = [int(a) % x.ndim for a in axes_attr] if axes_attr else list(range(x.ndim))
        outs, factors, rois = _targets(x.shape, axes, _floats(roi), _floats(scales), sizes, policy, transform)
        return (plan.apply(x, outs, factors, rois),)

    return run


def _targets(shape: tuple[int, ...], axes: list[int], roi: list[float], scales: list[float], sizes: Any,
             policy: str, transform: str) -> tuple[list[int], list[float], list[tuple[float, float]]]:
    """(output sizes, scales, roi per axis) for every axis of the input."""
    rank = len(shape)
    rois = [(0.0, 1.0)] * rank
    if transform == "tf_crop_and_resize" and roi:
        if len(roi) != 2 * len(axes):
            raise ValueError(f"roi has {len(roi)} values; expected {2 * len(axes)} (start and end per axis)")
        for k, axis in enumerate(axes):
            rois[axis] = (roi[k], roi[k + len(axes)])
    size_list = [] if sizes is None else [int(v) for v in np.asarray(sizes).ravel()]
    if scales and size_list:
        raise ValueError("only one of scales and sizes may be given")
    if not scales and not size_list:
        raise ValueError("one of scales and sizes is required")
    outs, factors = list(shape), [1.0] * rank
    if scales:
        if len(scales) != len(axes):
            raise ValueError(f"scales has {len(scales)} values for {len(axes)} axes")
        for axis, scale in zip(axes, scales):
            if scale <= 0:
                raise ValueError(f"scales must be positive, got {scales}")
            start, end = rois[axis]
            outs[axis] = math.floor(shape[axis] * (end - start) * scale + 1e-9)
            factors[axis] = scale
        return outs, factors, rois
    if len(size_list) != len(axes):
        raise ValueError(f"sizes has {len(size_list)} values for {len(axes)} axes")
    if min(size_list) < 1 or min(shape[a] for a in axes) < 1:
        raise ValueError(f"sizes {size_list} and the resized input dims must be positive")
    if policy != "stretch":
        ratios = [size / shape[axis] for axis, size in zip(axes, size_list)]
        common = min(ratios) if policy == "not_larger" else max(ratios)
        size_list = [math.floor(common * shape[axis] + 0.5) for axis in axes]
        for axis, size in zip(axes, size_list):
            outs[axis], factors[axis] = size, common
        return outs, factors, rois
    for axis, size in zip(axes, size_list):
        outs[axis], factors[axis] = size, size / shape[axis]
    return outs, factors, rois


def upsample_kernel(op: OpNode) -> PlainKernel:
    version, attrs = node_attributes(op)
    mode = attrs["mode"]
    if mode not in ("nearest", "linear", "bilinear"):
        raise op.error(f"mode {mode!r} is not nearest or linear")
    plan = Plan("nearest" if mode == "nearest" else "linear", "asymmetric", "simple", -0.75, False, 0.0, False)
    if version == 1:
        if attrs.get("height_scale") is None or attrs.get("width_scale") is None:
            raise op.error("Upsample-1 requires height_scale and width_scale")
        fixed: list[float] | None = [1.0, 1.0, float(attrs["height_scale"]), float(attrs["width_scale"])]
    else:
        fixed = _floats(attrs.get("scales")) if version < 9 else None
    if version < 9 and not fixed:
        raise op.error(f"Upsample-{version} requires the scales attribute")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        scales = fixed if fixed is not None else _floats(args[1])
        if len(scales) != x.ndim:
            raise ValueError(f"scales has {len(scales)} values for an input of rank {x.ndim}")
        outs = [math.floor(d * s + 1e-9) for d, s in zip(x.shape, scales)]
        return (plan.apply(x, outs, scales, [(0.0, 1.0)] * x.ndim),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "Resize": resize_kernel,
    "Upsample": upsample_kernel,
}
