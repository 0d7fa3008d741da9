"""Writing by index into a copy of data: Scatter, ScatterElements, ScatterND (with their reductions).

A repeated index with reduction 'none' keeps the last update (as onnxruntime does; the spec leaves it open).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .axes import axis_of, checked_index, checked_indices
from .base import KernelFactory, OpNode, PlainKernel
from .indexing import check_element_shapes, element_index, nd_index, nd_view

_REDUCE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
_FEW_INDICES = 16  # index entries up to which ScatterND writes row by row (fewer NumPy calls than fancy indexing)


def _reduction(op: OpNode) -> str:
    """'none' before version 16; add/mul from 16; max/min from 18."""
    if op.version < 16:
        return "none"
    reduction = op.get_str("reduction")
    allowed = ["none", "add", "mul"] + (["max", "min"] if op.version >= 18 else [])
    if reduction not in allowed:
        raise op.error(f"reduction {reduction!r} is not one of {allowed} ({op.op_type}-{op.version})")
    return reduction


def _write(out: np.ndarray, index: tuple[Any, ...], updates: np.ndarray, reduction: str) -> None:
    if reduction == "none":
        out[index] = updates
    else:
        _REDUCE[reduction].at(out, index, updates)


def scatter_elements(op: OpNode) -> PlainKernel:
    """ScatterElements-11, 13, 16 (reduction add/mul), 18 (max/min); Scatter-9/11 is it without reduction."""
    axis = op.get_int("axis")
    reduction = _reduction(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data, indices, updates = args
        at = axis_of(axis, data.ndim)
        check_element_shapes(data, indices, at)
        if updates.shape != indices.shape:
            raise ValueError(f"updates {list(updates.shape)} and indices {list(indices.shape)} differ in shape")
        if updates.dtype != data.dtype:
            raise ValueError(f"updates are {updates.dtype}, data is {data.dtype}")
        out = data.copy()
        _write(out, element_index(checked_indices(indices, data.shape[at]), at), updates, reduction)
        return (out,)

    return run


def scatter_nd(op: OpNode) -> PlainKernel:
    """ScatterND-11, 13, 16 (reduction add/mul), 18 (max/min): updates written at the slices of data that
    the last axis of indices addresses."""
    reduction = _reduction(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data, indices, updates = args
        if data.ndim == 0:
            raise ValueError("data must have at least one dimension")
        few = indices.ndim >= 1 and indices.dtype.kind in "iu" and indices.size <= _FEW_INDICES \
            and 0 < indices.shape[-1] <= data.ndim
        if few:
            k, rows = indices.shape[-1], None
            outer = indices.shape[:-1]
        else:
            rows, outer, k = nd_index(data, indices, 0)
        expected = outer + data.shape[k:]
        if updates.shape != expected:
            raise ValueError(f"updates have shape {list(updates.shape)}, expected {list(expected)} "
                             f"(indices {list(indices.shape)}, data {list(data.shape)})")
        if updates.dtype != data.dtype:
            raise ValueError(f"updates are {updates.dtype}, data is {data.dtype}")
        out = data.copy()
        slices = updates.reshape((-1,) + data.shape[k:])
        if rows is not None:
            _write(nd_view(out, 0, k), (rows,), slices, reduction)  # a view of out
            return (out,)
        # a few index rows (a state or cache slot written): basic indexing, one row at a time, in order
        for row, update in zip(indices.reshape(-1, k).tolist(), slices):
            at = tuple(checked_index(i, size, f"indices[..., {j}]") for j, (i, size) in enumerate(zip(row, data.shape)))
            out[at] = update if reduction == "none" else _REDUCE[reduction](out[at], update)
        return (out,)

    return run


def tensor_scatter(op: OpNode) -> PlainKernel:
    """TensorScatter-24 (a KV-cache write): update's positions along `axis` (not the batch axis 0) written into a
    copy of past_cache from write_indices[batch] on (default 0); mode 'circular' wraps around the cache."""
    axis, mode = op.get_int("axis"), op.get_str("mode")
    if mode not in ("linear", "circular"):
        raise op.error(f"mode {mode!r} is not 'linear' or 'circular'")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        cache, update = args[0], args[1]
        at = axis_of(axis, cache.ndim)
        if at == 0:
            raise ValueError("axis must not be the batch axis 0")
        if update.ndim != cache.ndim or update.shape[:at] + update.shape[at + 1:] != \
                cache.shape[:at] + cache.shape[at + 1:]:
            raise ValueError(f"update {list(update.shape)} must match past_cache {list(cache.shape)} outside axis "
                             f"{axis}")
        batch, capacity, steps = cache.shape[0], cache.shape[at], update.shape[at]
        starts = np.zeros(batch, np.int64) if len(args) < 3 or args[2] is None else args[2].astype(np.int64)
        if starts.shape != (batch,):
            raise ValueError(f"write_indices have shape {list(starts.shape)}, expected [{batch}]")
        positions = starts[:, None] + np.arange(steps)[None, :]  # [batch, steps]
        if mode == "circular":
            positions %= max(capacity, 1)
        elif positions.size and (positions.min() < 0 or positions.max() >= capacity):
            raise ValueError(f"write_indices {starts.tolist()} + {steps} steps reach outside the cache's "
                             f"{capacity} positions")
        out = cache.copy()
        index = [np.arange(d).reshape((-1,) + (1,) * (cache.ndim - 1 - k)) for k, d in enumerate(update.shape)]
        index[at] = positions.reshape((batch,) + (1,) * (at - 1) + (steps,) + (1,) * (cache.ndim - 1 - at))
        out[tuple(index)] = update
        return (out,)

    return run


KERNELS: dict[str, KernelFactory] = {
    "TensorScatter": tensor_scatter,
    "Scatter": scatter_elements,
    "ScatterElements": scatter_elements,
    "ScatterND": scatter_nd,
}
