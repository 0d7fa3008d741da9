"""Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare and ArgMax/ArgMin.

`axes` is an attribute up to ReduceSum-11 and the others' version 13, then an optional input (ReduceSum 13,
the others 18), where `noop_with_empty_axes=1` makes empty axes reduce over no axis (the input itself for
ReduceSum, |x| for ReduceL1); otherwise empty or missing axes reduce over every axis. The result keeps the input's type (float16 is summed in float32).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel, as_array

Axes = tuple[int, ...]


_add_reduce: Callable[..., np.ndarray] = np.add.reduce  # np.sum's reduction, without np.sum's Python wrapper


def _accumulator(x: np.ndarray) -> np.dtype:
    return np.dtype(np.float32) if x.dtype == np.float16 else x.dtype


def _sum(x: np.ndarray, axes: Axes, keep: bool) -> np.ndarray:
    return _add_reduce(x, axis=axes, keepdims=keep, dtype=_accumulator(x))


def _mean(x: np.ndarray, axes: Axes, keep: bool) -> np.ndarray:
    if x.dtype.kind in "iu":
        count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        total = np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype)
        if not count:
            return total
        # integer division truncating toward zero, as C and onnxruntime divide (-1 // 2 would floor to -1)
        return np.where(total < 0, -(-total // count), total // count).astype(x.dtype, copy=False)
    count = math.prod(x.shape[a] for a in axes)
    if not count:  # the spec leaves an empty mean undefined; onnxruntime gives 0
        return np.zeros_like(np.sum(x, axis=axes, keepdims=keep))
    return np.true_divide(_sum(x, axes, keep), count)  # as np.mean divides its sum (which wraps this in Python)


def _lowest(x: np.ndarray) -> Any:
    if x.dtype == np.bool_:
        return False
    return np.iinfo(x.dtype).min if x.dtype.kind in "iu" else -np.inf  # floats, and bfloat16 (kind "V")


def _highest(x: np.ndarray) -> Any:
    if x.dtype == np.bool_:
        return True
    return np.iinfo(x.dtype).max if x.dtype.kind in "iu" else np.inf


def _max(x: np.ndarray, axes: Axes, keep: bool) -> np.ndarray:
    return np.max(x, axis=axes, keepdims=keep, initial=_lowest(x))  # empty reductions give the lowest value


def _min(x: np.ndarray, axes: Axes, keep: bool) -> np.ndarray:
    return np.min(x, axis=axes, keepdims=keep, initial=_highest(x))


def _prod(x: np.ndarray, axes: Axes, keep: bool) -> np.ndarray:
    return np.prod(x, axis=axes, keepdims=keep, dtype=_accumulator(x))


def _l1(x: np.ndarray, axes: Axes, keep: bool) -> np.ndarray:
    return _sum(np.abs(x), axes, keep)


def _sum_square(x: np.ndarray, axes: Axes, keep: bool) -> np.ndarray:
    return _sum(x * x, axes, keep)


def _l2(x: np.ndarray, axes: Axes, keep: bool) -> np.ndarray:
    return np.sqrt(_sum_square(x.astype(np.float64) if x.dtype.kind in "iu" else x, axes, keep))


def _log_sum(x: np.ndarray, axes: Axes, keep: bool) -> np.ndarray:
    return np.log(_sum(x.astype(np.float64) if x.dtype.kind in "iu" else x, axes, keep))


def _log_sum_exp(x: np.ndarray, axes: Axes, keep: bool) -> np.ndarray:
    v = x.astype(np.float64) if x.dtype.kind in "iu" else x.astype(_accumulator(x))
    top = np.max(v, axis=axes, keepdims=True, initial=-np.inf)
    top = np.where(np.isfinite(top), top, 0)
    total = np.log(np.sum(np.exp(v - top), axis=axes, keepdims=True)) + top
    return total if keep else np.squeeze(total, axis=axes)


REDUCTIONS: dict[str, Callable[[np.ndarray, Axes, bool], np.ndarray]] = {
    "ReduceSum": _sum, "ReduceMean": _mean, "ReduceMax": _max, "ReduceMin": _min, "ReduceProd": _prod,
    "ReduceL1": _l1, "ReduceL2": _l2, "ReduceLogSum": _log_sum, "ReduceLogSumExp": _log_sum_exp,
    "ReduceSumSquare": _sum_square,
}


def _normalized(op: OpNode, axes: list[int], rank: int) -> Axes:
    if any(not -rank <= a < max(rank, 1) for a in axes):
        raise op.error(f"axes {axes} are out of range for input of rank {rank}")
    found = tuple(sorted(a + rank if a < 0 else a for a in axes))
    if len(set(found)) != len(found):
        raise op.error(f"axes {axes} repeat an axis")
    return found


def reduce_kernel(op: OpNode) -> PlainKernel:
    fn = REDUCTIONS[op.op_type]
    keep = bool(op.get_int("keepdims"))
    axes_from_input = op.schema is not None and "axes" not in op.schema.attributes
    noop = bool(op.get_int("noop_with_empty_axes", 0))
    fixed = op.get_ints("axes") or []

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        axes = fixed
        if axes_from_input:
            given = args[1] if len(args) > 1 else None
            axes = [] if given is None else [int(a) for a in given.reshape(-1)]
            if not axes and noop:  # reduce over no axis: ReduceL1 still takes |x| (as onnxruntime does)
                return (as_array(fn(x, (), keep)).astype(x.dtype, copy=False),)
        chosen = _normalized(op, axes, x.ndim) if axes else tuple(range(x.ndim))
        return (as_array(fn(x, chosen, keep)).astype(x.dtype, copy=False),)

    return run


def arg_kernel(op: OpNode) -> PlainKernel:
    """ArgMax/ArgMin: int64 indices of the first extreme along `axis`, or the last with select_last_index."""
    pick = np.argmax if op.op_type == "ArgMax" else np.argmin
    axis, keep = op.get_int("axis"), bool(op.get_int("keepdims"))
    last = bool(op.get_int("select_last_index", 0))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        (k,) = _normalized(op, [axis], x.ndim)
        index = x.shape[k] - 1 - pick(np.flip(x, axis=k), axis=k) if last else pick(x, axis=k)
        index = np.asarray(index, dtype=np.int64)
        return (np.expand_dims(index, k) if keep else index,)

    return run


KERNELS: dict[str, KernelFactory] = {
    **{name: reduce_kernel for name in REDUCTIONS},
    "ArgMax": arg_kernel,
    "ArgMin": arg_kernel,
}
