"""Reading by index: Gather, GatherElements, GatherND, Compress, OneHot, NonZero.

Negative indices count from the end of their axis; an index outside [-size, size-1] is an error naming it.
"""
from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

from .axes import axis_of, checked_indices
from .base import KernelFactory, OpNode, PlainKernel


def gather(op: OpNode) -> PlainKernel:
    """Gather: entries of `data` along `axis` at `indices` (any rank q): output rank q + r - 1."""
    axis = op.get_int("axis")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data, indices = args
        at = axis_of(axis, data.ndim)
        if indices.dtype.kind not in "iu":
            raise ValueError(f"indices must be integers, got {indices.dtype}")
        try:
            return (data.take(indices, axis=at),)  # takes negative indices, refuses out-of-range ones (the method:
            # np.take wraps it in Python, twice its time on a small tensor)
        except IndexError:
            checked_indices(indices, data.shape[at])  # raises naming the bad index
            raise

    return run


def element_index(indices: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
    """The fancy index that picks, for every position of `indices`, its index along `axis` and its own
    coordinates along the other axes."""
    grid = list(np.ogrid[tuple(slice(d) for d in indices.shape)])
    grid[axis] = indices
    return tuple(grid)


def check_element_shapes(data: np.ndarray, indices: np.ndarray, axis: int) -> None:
    if indices.ndim != data.ndim:
        raise ValueError(f"indices have rank {indices.ndim}, data rank {data.ndim}: they must be equal")
    wider = [k for k in range(data.ndim) if k != axis and indices.shape[k] > data.shape[k]]
    if wider:
        raise ValueError(f"indices {list(indices.shape)} exceed data {list(data.shape)} on axes {wider}")


def gather_elements(op: OpNode) -> PlainKernel:
    """GatherElements: output[i][j][k] = data[i][indices[i][j][k]][k] (for axis 1); output shaped as indices."""
    axis = op.get_int("axis")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data, indices = args
        at = axis_of(axis, data.ndim)
        check_element_shapes(data, indices, at)
        return (data[element_index(checked_indices(indices, data.shape[at]), at)],)

    return run


def nd_index(data: np.ndarray, indices: np.ndarray, batch_dims: int) -> tuple[np.ndarray, tuple[int, ...], int]:
    """For GatherND / ScatterND with `batch_dims` leading batch axes: (row numbers into data viewed as
    [rows, *rest] by `nd_view`, the index shape without its last axis, k = the number of axes addressed)."""
    if indices.dtype.kind not in "iu":
        raise ValueError(f"indices must be integers, got {indices.dtype}")
    if indices.ndim < 1:
        raise ValueError("indices must have at least one dimension")
    k = indices.shape[-1]
    if batch_dims < 0 or batch_dims >= min(data.ndim, indices.ndim):
        raise ValueError(f"batch_dims {batch_dims} must be below the ranks of data ({data.ndim}) and indices "
                         f"({indices.ndim})")
    if data.shape[:batch_dims] != indices.shape[:batch_dims]:
        raise ValueError(f"the first {batch_dims} dimensions of data {list(data.shape)} and indices "
                         f"{list(indices.shape)} differ")
    if k > data.ndim - batch_dims:
        raise ValueError(f"indices address {k} dimensions, data has {data.ndim - batch_dims} after the batch ones")
    batch = prod(data.shape[:batch_dims])
    dims = data.shape[batch_dims:batch_dims + k]
    columns = indices.reshape(batch, -1, k)
    rows = None
    if k and columns.size:
        try:  # in range and not negative, the usual case: one call (it checks the bounds) instead of k passes
            rows = np.ravel_multi_index(tuple(columns.reshape(-1, k).T), dims).reshape(batch, -1)
        except (ValueError, TypeError):  # TypeError: uint64 indices, which it does not take
            rows = None  # a negative index, or one out of range: the passes below wrap it or name it
    if rows is None:
        rows = np.zeros((batch, columns.shape[1]), np.int64)
        stride = prod(dims)
        for j, size in enumerate(dims):
            stride //= size
            rows = rows + checked_indices(columns[..., j], size, f"indices[..., {j}]") * stride
    if batch > 1:
        rows = rows + np.arange(batch, dtype=np.int64)[:, None] * prod(dims)  # each batch's first row
    return rows.reshape(-1), indices.shape[:-1], k


def nd_view(data: np.ndarray, batch_dims: int, k: int) -> np.ndarray:
    """data viewed as [rows, *rest]: one row per addressable slice (a view when data is contiguous)."""
    return data.reshape((prod(data.shape[:batch_dims + k]),) + data.shape[batch_dims + k:])


def gather_nd(op: OpNode) -> PlainKernel:
    """GatherND-11, 12 and 13 (batch_dims): slices of data addressed by the last axis of indices."""
    batch_dims = op.get_int("batch_dims", 0) if op.version >= 12 else 0

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data, indices = args
        rows, outer, k = nd_index(data, indices, batch_dims)
        return (nd_view(data, batch_dims, k)[rows].reshape(outer + data.shape[batch_dims + k:]),)

    return run


def compress(op: OpNode) -> PlainKernel:
    """Compress: the slices along `axis` (or elements of the flattened input) where condition is true; a
    condition shorter than the axis drops the rest, entries past the axis are ignored (as onnxruntime does)."""
    axis = op.attr("axis")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data, condition = args
        if condition.ndim != 1:
            raise ValueError(f"condition must be 1-D, got shape {list(condition.shape)}")
        source = data.reshape(-1) if axis is None else data
        at = 0 if axis is None else axis_of(int(axis), data.ndim)
        keep = condition[:source.shape[at]].astype(bool)  # entries past the axis select nothing
        return (np.compress(keep, source, axis=at),)

    return run


def one_hot(op: OpNode) -> PlainKernel:
    """OneHot: a new axis of size depth, on_value where it equals the index, off_value elsewhere. From version
    11 negative indices count from depth; indices outside [-depth, depth-1] (version 9: [0, depth-1]) give a
    row of off_value."""
    axis = op.get_int("axis")
    wrap = op.version >= 11

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        indices, depth_value, values = args
        depth = int(np.asarray(depth_value).reshape(-1)[0]) if np.asarray(depth_value).size == 1 else None
        if depth is None or depth < 1:
            raise ValueError(f"depth must be one positive value, got {np.asarray(depth_value).tolist()}")
        if values.shape != (2,):
            raise ValueError(f"values must be [off_value, on_value], got shape {list(values.shape)}")
        at = axis_of(axis, indices.ndim + 1)
        idx = indices.astype(np.int64)
        if wrap:
            idx = np.where(idx < 0, idx + depth, idx)
        hot = np.expand_dims(idx, at) == np.arange(depth).reshape((-1,) + (1,) * (indices.ndim - at))
        return (values[hot.astype(np.intp)],)  # indexing keeps the values' dtype (strings too)

    return run


def non_zero(op: OpNode) -> PlainKernel:
    """NonZero: [rank, count] int64 coordinates of the non-zero elements in row-major order; a scalar counts as
    one-dimensional ([1, count]), as numpy.nonzero, which the spec follows, and onnxruntime treat it."""

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if x.ndim == 0:
            return (np.zeros((1, int(bool(x))), dtype=np.int64),)
        return (np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "Gather": gather,
    "GatherElements": gather_elements,
    "GatherND": gather_nd,
    "Compress": compress,
    "OneHot": one_hot,
    "NonZero": non_zero,
}
