"""Sliding-window geometry shared by convolutions and pools: padding (explicit or auto_pad), output sizes, and the
strided views of a padded input, one per kernel offset (loops run over kernel offsets, never over pixels)."""
from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


@dataclass(frozen=True)
class Window:
    """Resolved window attributes of one node (per spatial axis); pads are (begin..., end...) as in ONNX."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads: tuple[int, ...]
    auto_pad: str
    ceil_mode: bool = False

    def effective(self, axis: int) -> int:
        return (self.kernel[axis] - 1) * self.dilations[axis] + 1

    def geometry(self, spatial: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
        """(begin pads, end pads, output sizes) for an input with these spatial sizes."""
        begins, ends, outs = _geometry(self, tuple(spatial))
        return list(begins), list(ends), list(outs)

    def _geometry(self, spatial: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        rank = len(self.kernel)
        if len(spatial) != rank:
            raise ValueError(f"input has {len(spatial)} spatial axes, the kernel {rank}")
        begins, ends, outs = [], [], []
        for i, size in enumerate(spatial):
            k, s = self.effective(i), self.strides[i]
            if self.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
                out = -(-size // s)
                total = max((out - 1) * s + k - size, 0)
                small = total // 2
                begin = small if self.auto_pad == "SAME_UPPER" else total - small
                end = total - begin
            else:
                begin, end = (0, 0) if self.auto_pad == "VALID" else (self.pads[i], self.pads[i + rank])
                span = size + begin + end - k
                if span < 0:
                    raise ValueError(f"axis {i}: the kernel ({k} with dilation) is larger than the padded input "
                                     f"({size + begin + end})")
                out = (-(-span // s) if self.ceil_mode else span // s) + 1
                if self.ceil_mode and (out - 1) * s >= size + begin:
                    out -= 1  # the last window would start in the end padding
            begins.append(begin)
            ends.append(end)
            outs.append(out)
        return tuple(begins), tuple(ends), tuple(outs)

    def offsets(self) -> Iterator[tuple[int, ...]]:
        """Every kernel offset, in C order of the kernel's axes."""
        return itertools.product(*(range(k) for k in self.kernel))

    def patches(self, padded: np.ndarray, outs: Sequence[int]) -> np.ndarray:
        """The read-only strided view (N, C, *kernel, *outs) of `padded` (N, C, *spatial): element
        [n, c, k..., o...] is the input under kernel offset k of output position o. Its C-order copy is the im2col
        matrix, gathered in one NumPy call."""
        n, c = padded.shape[:2]
        spatial = padded.strides[2:]
        shape = (n, c, *self.kernel, *outs)
        strides = (*padded.strides[:2], *(s * d for s, d in zip(spatial, self.dilations)),
                   *(s * t for s, t in zip(spatial, self.strides)))
        if padded.size and padded.flags.c_contiguous and padded.flags.writeable:  # the array's own buffer: no
            # __array_interface__ round trip
            view = np.ndarray(shape, padded.dtype, buffer=padded, strides=strides)
            view.flags.writeable = False
            return view
        return as_strided(padded, shape, strides, writeable=False)

    def views(self, padded: np.ndarray, outs: Sequence[int]) -> Iterator[np.ndarray]:
        """For each kernel offset, the strided view of `padded` (N, C, *spatial) its windows read."""
        for index in _view_indices(self, tuple(outs)):
            yield padded[index]


@lru_cache(maxsize=256)
def _view_indices(window: Window, outs: tuple[int, ...]) -> tuple[tuple[slice, ...], ...]:
    """The index of each kernel offset's view, computed once per window and output size."""
    found = []
    for offset in window.offsets():
        index: list[slice] = [slice(None), slice(None)]
        for i, k in enumerate(offset):
            start = k * window.dilations[i]
            index.append(slice(start, start + (outs[i] - 1) * window.strides[i] + 1, window.strides[i]))
        found.append(tuple(index))
    return tuple(found)


@lru_cache(maxsize=256)
def _geometry(window: Window, spatial: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    return window._geometry(spatial)


def window_of(attrs: dict[str, Any], rank_hint: int | None, kernel: Sequence[int] | None = None) -> Window | None:
    """A Window from a node's attributes; None when its kernel rank is only known from an input (Conv without
    kernel_shape)."""
    kernel = list(kernel if kernel is not None else attrs.get("kernel_shape") or [])
    rank = len(kernel) or rank_hint
    if rank is None:
        return None
    if not kernel:
        raise ValueError("kernel_shape is required")
    auto_pad = attrs.get("auto_pad") or "NOTSET"
    if auto_pad not in AUTO_PADS:
        raise ValueError(f"auto_pad {auto_pad!r} is not one of {list(AUTO_PADS)}")
    strides = list(attrs.get("strides") or [1] * rank)
    dilations = list(attrs.get("dilations") or [1] * rank)
    pads = list(attrs.get("pads") or [0] * (2 * rank))
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
        raise ValueError(f"kernel_shape {kernel}, strides {strides}, dilations {dilations} and pads {pads} do not "
                         f"describe the same {rank} spatial axes")
    if min(strides) < 1 or min(dilations) < 1 or min(kernel) < 1:
        raise ValueError(f"kernel_shape {kernel}, strides {strides} and dilations {dilations} must be positive")
    if min(pads) < 0:
        raise ValueError(f"pads {pads} must not be negative")
    return Window(tuple(kernel), tuple(strides), tuple(dilations), tuple(pads), auto_pad,
                  bool(attrs.get("ceil_mode") or 0))


def pad_spatial(x: np.ndarray, begins: Sequence[int], ends: Sequence[int], value: float = 0) -> np.ndarray:
    """`x` (N, C, *spatial) padded with `value`; `x` itself when there is nothing to pad."""
    if not any(begins) and not any(ends):
        return x
    shape = x.shape[:2] + tuple(size + b + e for size, b, e in zip(x.shape[2:], begins, ends))
    padded = np.full(shape, value, dtype=x.dtype)
    interior = (slice(None), slice(None)) + tuple(slice(b, b + size) for b, size in zip(begins, x.shape[2:]))
    padded[interior] = x
    return padded


def extend_ends(window: Window, spatial: Sequence[int], begins: Sequence[int], ends: Sequence[int],
                outs: Sequence[int]) -> list[int]:
    """End pads grown so the last window fits (ceil_mode windows may run past the end padding)."""
    return [max(end, (out - 1) * window.strides[i] + window.effective(i) - size - begin)
            for i, (size, begin, end, out) in enumerate(zip(spatial, begins, ends, outs))]
