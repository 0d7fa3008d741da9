"""Pad (constant / reflect / edge / wrap; negative pads crop) and CenterCropPad."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from .axes import axes_of, int_list
from .base import KernelFactory, OpNode, PlainKernel

_NUMPY_MODE: dict[str, Literal["reflect", "edge", "wrap"]] = {"reflect": "reflect", "edge": "edge", "wrap": "wrap"}


def pad(op: OpNode) -> PlainKernel:
    """Pad-1 (`paddings` attribute), 2 (`pads`, `value` attributes), 11 and 13 (pads and constant_value inputs),
    18 (axes input), 19 (wrap mode)."""
    mode = op.get_str("mode", "constant")
    allowed = ("constant", "reflect", "edge", "wrap") if op.version >= 19 else ("constant", "reflect", "edge")
    if mode not in allowed:
        raise op.error(f"mode {mode!r} is not one of {list(allowed)} (Pad-{op.version})")
    if op.version < 11:
        fixed = op.get_ints("paddings" if op.version == 1 else "pads") or []
        value = op.get_float("value", 0.0)

        def run_attributes(args: Sequence[Any]) -> tuple[Any, ...]:
            data = args[0]
            fill = np.array(value).astype(data.dtype)
            return (padded(data, fixed, None, mode, fill),)

        return run_attributes

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data = args[0]
        pads = int_list(args[1], "pads")
        fill = args[2] if len(args) > 2 else None
        axes = int_list(args[3], "axes") if len(args) > 3 and args[3] is not None else None
        if fill is None or fill.size == 0:
            fill = zero_of(data.dtype)
        elif fill.size != 1:
            raise ValueError(f"constant_value must hold one value, got shape {list(fill.shape)}")
        elif fill.dtype != data.dtype:
            raise ValueError(f"constant_value is {fill.dtype}, data is {data.dtype}")
        return (padded(data, pads, axes, mode, fill.reshape(())),)

    return run


def zero_of(dtype: np.dtype) -> np.ndarray:
    """The value padding and zeroing fill with: 0, False, or '' for strings."""
    return np.array("", dtype=object) if dtype.kind == "O" else np.zeros((), dtype=dtype)


def padded(data: np.ndarray, pads: list[int], axes: list[int] | None, mode: str, fill: np.ndarray) -> np.ndarray:
    """data padded by ONNX `pads` [begin..., end...] over `axes` (default: all); negative pads crop first."""
    axes = axes_of(axes if axes is not None else list(range(data.ndim)), data.ndim)
    if len(pads) != 2 * len(axes):
        raise ValueError(f"pads {pads} should have {2 * len(axes)} values (two per padded axis)")
    widths = [(0, 0)] * data.ndim
    crop = [slice(None)] * data.ndim
    for k, axis in enumerate(axes):
        begin, end = pads[k], pads[k + len(axes)]
        dim = data.shape[axis]
        if begin + end + dim < 0:
            raise ValueError(f"pads {begin}, {end} remove more than the {dim} elements of axis {axis}")
        crop[axis] = slice(max(-begin, 0), dim - max(-end, 0))
        widths[axis] = (max(begin, 0), max(end, 0))
    data = data[tuple(crop)]
    if not any(b or e for b, e in widths):
        return data
    if mode == "constant":
        return constant_padded(data, widths, fill)
    for axis, (begin, end) in enumerate(widths):
        if (begin or end) and data.shape[axis] == 0:
            raise ValueError(f"mode {mode!r} cannot pad axis {axis}, which is empty")
        if mode == "reflect" and max(begin, end) >= data.shape[axis]:
            raise ValueError(f"reflect pads {begin}, {end} on axis {axis} reach past its {data.shape[axis]} "
                             "elements (at most size - 1 each)")
    if mode in ("reflect", "edge"):
        return _mirrored(data, widths, mode == "reflect")
    return np.pad(data, widths, mode=_NUMPY_MODE[mode])


def _mirrored(data: np.ndarray, widths: list[tuple[int, int]], reflect: bool) -> np.ndarray:
    """np.pad's reflect or edge mode (non-negative widths, reflect's at most size - 1), at a fraction of its cost
    on small tensors: like np.pad, axis after axis over the whole extent of the others, so a corner is the
    reflection of a reflection."""
    out = np.empty([b + d + e for d, (b, e) in zip(data.shape, widths)], dtype=data.dtype)
    out[tuple(slice(b, b + d) for d, (b, _) in zip(data.shape, widths))] = data
    for axis, ((begin, end), size) in enumerate(zip(widths, data.shape)):
        def along(part: slice, axis: int = axis) -> tuple[slice, ...]:
            return (slice(None),) * axis + (part,)

        last = begin + size - 1  # the last element of the interior
        if begin:
            source = slice(2 * begin, begin, -1) if reflect else slice(begin, begin + 1)
            out[along(slice(0, begin))] = out[along(source)]
        if end:
            stop = last - end - 1  # reflect: last - 1 down to last - end
            source = slice(last - 1, stop if stop >= 0 else None, -1) if reflect else slice(last, last + 1)
            out[along(slice(last + 1, last + 1 + end))] = out[along(source)]
    return out


def constant_padded(data: np.ndarray, widths: list[tuple[int, int]], fill: np.ndarray) -> np.ndarray:
    """np.pad's constant mode (non-negative widths), at a fraction of its cost on small tensors."""
    out = np.full([b + d + e for d, (b, e) in zip(data.shape, widths)], fill, dtype=data.dtype)
    out[tuple(slice(b, b + d) for d, (b, _) in zip(data.shape, widths))] = data
    return out


def center_crop_pad(op: OpNode) -> PlainKernel:
    """CenterCropPad-18: each of `axes` (default: all) cropped or zero-padded to `shape`, centred (an odd
    difference puts the extra element at the end when padding and at the start when cropping)."""
    wanted_axes = op.get_ints("axes")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data = args[0]
        dims = int_list(args[1], "shape")
        axes = axes_of(wanted_axes if wanted_axes is not None else list(range(data.ndim)), data.ndim)
        if len(dims) != len(axes):
            raise ValueError(f"shape {dims} has {len(dims)} values for {len(axes)} axes")
        crop = [slice(None)] * data.ndim
        widths = [(0, 0)] * data.ndim
        for axis, size in zip(axes, dims):
            if size < 0:
                raise ValueError(f"shape {dims} has a negative size")
            have = data.shape[axis]
            if size <= have:
                start = (have - size) // 2
                crop[axis] = slice(start, start + size)
            else:
                before = (size - have) // 2
                widths[axis] = (before, size - have - before)
        cropped = data[tuple(crop)]
        return (constant_padded(cropped, widths, zero_of(data.dtype)) if any(map(any, widths)) else cropped,)

    return run


KERNELS: dict[str, KernelFactory] = {"Pad": pad, "CenterCropPad": center_crop_pad}
