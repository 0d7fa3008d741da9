"""Sum, Mean, Max, Min over any number of inputs (same shapes before version 8, broadcasting from 8), Where,
CumSum/CumProd (exclusive, reverse)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel, as_array

FOLDS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "Sum": np.add, "Mean": np.add, "Max": np.maximum, "Min": np.minimum,
}


def fold_kernel(op: OpNode) -> PlainKernel:
    fn = FOLDS[op.op_type]
    broadcast = op.version >= 8
    mean = op.op_type == "Mean"

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        first = args[0]
        for other in args[1:]:
            if other.dtype != first.dtype:
                raise op.error(f"input types differ ({first.dtype} and {other.dtype})")
            if not broadcast and other.shape != first.shape:
                raise op.error(f"shapes {first.shape} and {other.shape} differ (broadcasting starts at version 8)")
        result = as_array(reduce(fn, args))
        if mean:
            result = (result / len(args)).astype(first.dtype, copy=False)
        return (result,)

    return run


def where_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        condition, x, y = args
        if x.dtype != y.dtype:
            raise op.error(f"X and Y types differ ({x.dtype} and {y.dtype})")
        return (as_array(np.where(condition, x, y)),)

    return run


def cumulative_kernel(op: OpNode) -> PlainKernel:
    exclusive, reverse = bool(op.get_int("exclusive")), bool(op.get_int("reverse"))
    product = op.op_type == "CumProd"
    accumulate = np.cumprod if product else np.cumsum

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, axis_value = args
        if axis_value.size != 1:
            raise op.error(f"axis must hold one value, got shape {axis_value.shape}")
        axis = int(axis_value.reshape(()))
        if not -x.ndim <= axis < x.ndim:
            raise op.error(f"axis {axis} is out of range for input of rank {x.ndim}")
        v = np.flip(x, axis) if reverse else x
        y = accumulate(v, axis=axis, dtype=x.dtype)
        if exclusive:  # shifted by one along the axis, starting from the identity
            moved = np.moveaxis(y, axis, 0)
            shifted = np.empty_like(moved)
            if len(moved):
                shifted[0] = 1 if product else 0
                shifted[1:] = moved[:-1]
            y = np.moveaxis(shifted, 0, axis)
        return (np.flip(y, axis) if reverse else y,)

    return run


KERNELS: dict[str, KernelFactory] = {
    **{name: fold_kernel for name in FOLDS},
    "CumProd": cumulative_kernel,
    "CumSum": cumulative_kernel,
    "Where": where_kernel,
}
