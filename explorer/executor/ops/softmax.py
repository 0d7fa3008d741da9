"""Softmax, LogSoftmax and Hardmax. Before version 13 the input is coerced to 2-D at `axis` (default 1): the
operator runs over all axes from `axis` on together, as one row per index of the leading axes. From 13 it runs
along the single axis `axis` (default -1)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel

# the ufuncs' own reductions: np.max and np.sum reach them through Python (fromnumeric), which costs a small
# model's softmax more than its arithmetic
_max, _sum = np.maximum.reduce, np.add.reduce


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.subtract(x, _max(x, axis=axis, keepdims=True))
    np.exp(e, out=e)
    np.divide(e, _sum(e, axis=axis, keepdims=True), out=e)
    return e


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = np.subtract(x, _max(x, axis=axis, keepdims=True))
    return shifted - np.log(_sum(np.exp(shifted), axis=axis, keepdims=True))


def _hardmax(x: np.ndarray, axis: int) -> np.ndarray:
    """1 at the first maximum along `axis`, 0 elsewhere."""
    y = np.zeros_like(x)
    if x.size:
        first = np.expand_dims(np.argmax(x, axis=axis), axis)
        np.put_along_axis(y, first, 1, axis=axis)  # y is a new array: nothing recorded is modified
    return y


FUNCTIONS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "Softmax": _softmax, "LogSoftmax": _log_softmax, "Hardmax": _hardmax,
}


def softmax_kernel(op: OpNode) -> PlainKernel:
    fn = FUNCTIONS[op.op_type]
    axis = op.get_int("axis")
    coerce_2d = op.version < 13

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if not -x.ndim <= axis < max(x.ndim, 1):
            raise op.error(f"axis {axis} is out of range for input of rank {x.ndim}")
        if not x.size:
            return (np.empty_like(x),)
        if not coerce_2d:
            return (fn(x, axis),)
        k = axis + x.ndim if axis < 0 else axis
        rows = int(np.prod(x.shape[:k], dtype=np.int64))
        return (fn(x.reshape(rows, -1), 1).reshape(x.shape),)

    return run


KERNELS: dict[str, KernelFactory] = {name: softmax_kernel for name in FUNCTIONS}
