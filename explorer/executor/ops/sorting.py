"""Ordering kernels: TopK and Unique."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .axes import axis_of, int_scalar
from .base import KernelFactory, OpNode, PlainKernel


def top_k(op: OpNode) -> PlainKernel:
    """TopK-1 (k attribute), 10 (K input), 11 and 24 (largest, sorted). Equal values keep their index order,
    as onnxruntime orders them; results are always sorted (sorted=0 leaves the order open)."""
    axis = op.get_int("axis")
    fixed_k = op.get_int("k") if op.version < 10 else None
    largest = op.version < 11 or op.get_int("largest") == 1

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        k = fixed_k if fixed_k is not None else int_scalar(args[1], "K")
        at = axis_of(axis, x.ndim)
        size = x.shape[at]
        if not 0 <= k <= size:
            raise ValueError(f"k={k} must lie in [0, {size}] (the size of axis {axis})")
        if largest:
            reverse = np.flip(x, axis=at)
            order = size - 1 - np.flip(np.argsort(reverse, axis=at, kind="stable"), axis=at)
        else:
            order = np.argsort(x, axis=at, kind="stable")
        indices = np.take(order, np.arange(k), axis=at)
        return np.take_along_axis(x, indices, axis=at), indices.astype(np.int64)

    return run


def unique(op: OpNode) -> PlainKernel:
    """Unique-11, 28: the unique values (or slices along `axis`), sorted ascending or in order of first
    occurrence (sorted=0); with the first index of each, the inverse indices and the counts."""
    axis = op.attr("axis")
    is_sorted = op.get_int("sorted") == 1

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        at = None if axis is None else axis_of(int(axis), x.ndim)
        source = x.reshape(-1) if at is None else x
        if source.dtype == object and at is not None:
            raise ValueError("unique slices along an axis are not supported for strings")
        values, first, inverse, counts = np.unique(source, return_index=True, return_inverse=True,
                                                   return_counts=True, axis=at, equal_nan=False)
        inverse = inverse.reshape(-1)
        if not is_sorted:
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            values = np.take(values, order, axis=0 if at is None else at)
            first, counts, inverse = first[order], counts[order], rank[inverse]
        return values, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)

    return run


KERNELS: dict[str, KernelFactory] = {"TopK": top_k, "Unique": unique}
