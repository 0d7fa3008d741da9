"""Reading axes, shapes and integer inputs the way the shape, indexing and sequence kernels all need them.

Run-time problems raise ValueError with a message saying what is wrong; the engine turns it into an
ExecutionError naming the node, its iteration and its input shapes.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def axis_of(axis: int, rank: int, what: str = "axis") -> int:
    """`axis` in [-rank, rank-1] as a non-negative axis."""
    if not -rank <= axis < rank:
        raise ValueError(f"{what} {axis} is out of range for a tensor of rank {rank} "
                         f"(allowed: {-rank} to {rank - 1})")
    return axis + rank if axis < 0 else axis


def axes_of(axes: list[int], rank: int, what: str = "axes") -> list[int]:
    """Each axis normalised; repeated axes are refused."""
    normal = [a if type(a) is int and 0 <= a < rank else axis_of(int(a), rank, what) for a in axes]
    if len(normal) > 1 and len(set(normal)) != len(normal):
        raise ValueError(f"{what} {list(axes)} name an axis twice")
    return normal


def int_list(value: np.ndarray | None, what: str) -> list[int]:
    """A 0-d or 1-D integer tensor input as a list of Python ints."""
    if value is None:
        raise ValueError(f"input {what!r} is missing")
    array = value if type(value) is np.ndarray else np.asarray(value)
    if array.ndim > 1:
        raise ValueError(f"input {what!r} must be 1-D, got shape {list(array.shape)}")
    if array.dtype.kind not in "iu":
        raise ValueError(f"input {what!r} must be an integer tensor, got {array.dtype}")
    values: list[int] = array.reshape(-1).tolist()  # Python ints
    return values


def int_scalar(value: np.ndarray | None, what: str) -> int:
    """A scalar (or one-element) integer tensor input as a Python int."""
    values = int_list(None if value is None else np.asarray(value).reshape(-1), what)
    if len(values) != 1:
        raise ValueError(f"input {what!r} must hold one value, got {len(values)}")
    return values[0]


def shape_of(value: np.ndarray | None, what: str = "shape") -> tuple[int, ...]:
    """A 1-D int64 shape input with non-negative dimensions."""
    dims = int_list(value, what)
    negative = [d for d in dims if d < 0]
    if negative:
        raise ValueError(f"input {what!r} {dims} has negative dimensions")
    return tuple(dims)


def broadcast_dims(*shapes: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """The shape NumPy broadcasts `shapes` to (np.broadcast_shapes, whose cost is many times a small node's
    whole kernel); ValueError when they do not broadcast."""
    rank = max(map(len, shapes), default=0)
    out = [1] * rank
    for shape in shapes:
        offset = rank - len(shape)
        for k, d in enumerate(shape):
            have = out[offset + k]
            if d != have:
                if have == 1:
                    out[offset + k] = d
                elif d != 1:
                    raise ValueError(f"shapes {[list(s) for s in shapes]} do not broadcast")
    return tuple(out)


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether `shape` broadcasts to `target` unchanged (a bias added to a product, say)."""
    return len(shape) <= len(target) and all(d == 1 or d == t for d, t in zip(reversed(shape), reversed(target)))


def _out_of_range(what: str, bad: int, size: int) -> ValueError:
    return ValueError(f"{what} hold {bad}, out of range for an axis of size {size} (allowed: {-size} to {size - 1})")


def checked_index(index: int, size: int, what: str = "indices") -> int:
    """One integer index in [-size, size-1] as a non-negative index; out of range it is refused."""
    if not -size <= index < size:
        raise _out_of_range(what, index, size)
    return index + size if index < 0 else index


def checked_indices(indices: np.ndarray, size: int, what: str = "indices") -> np.ndarray:
    """Integer indices in [-size, size-1] as non-negative int64 indices; out-of-range ones are refused."""
    if indices.dtype.kind not in "iu":
        raise ValueError(f"{what} must be integers, got {indices.dtype}")
    idx = indices.astype(np.int64, copy=False)
    if idx.size:
        low, high = int(idx.min()), int(idx.max())
        if low < -size or high >= size:
            raise _out_of_range(what, low if low < -size else high, size)
        if low < 0:
            idx = np.where(idx < 0, idx + size, idx)
    return idx


class ConstantInputs:
    """What a kernel made last from inputs that are constants (small read-only arrays: initializers, Constant
    values, results of constant nodes) for the same `key` (a data input's shape, or whatever else the result
    depends on): a Slice's index, a Squeeze's shape, a DequantizeLinear's table. The same arrays and key give the
    same result, without reading the inputs again (in a loop's body, at every iteration)."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        # (inputs, key, result) replaced whole, so that a run on another thread never reads one keep's inputs
        # with another keep's result
        self._kept: tuple[tuple[Any, ...], object, Any] = ((), None, None)

    def get(self, inputs: Sequence[Any], key: object) -> Any:
        """The kept result when `inputs` are the kept arrays themselves and `key` the kept key, else None."""
        kept, kept_key, made = self._kept
        if key != kept_key or len(inputs) != len(kept):
            return None
        for a, b in zip(inputs, kept):
            if a is not b:
                return None
        return made

    @staticmethod
    def constant(inputs: Sequence[Any]) -> bool:
        """Whether every input is a small read-only array (or omitted): what `keep` keeps a result of."""
        for value in inputs:
            if value is not None and (type(value) is not np.ndarray or value.flags.writeable or value.size > 64):
                return False
        return True

    def keep(self, inputs: Sequence[Any], key: object, made: Any) -> None:
        """Keeps `made` when the inputs are `constant`."""
        if self.constant(inputs):
            self._kept = (tuple(inputs), key, made)
