"""Checks made before a kernel allocates, for operators whose output size is known from their inputs."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import onnx


def _prod(dims: Iterable[Any]) -> int:
    total = 1
    for d in dims:
        total *= max(int(d), 0)
    return total


def _constant_of_shape(node: onnx.NodeProto) -> Callable[[list[Any]], int]:
    itemsize = 4
    for att in node.attribute:
        if att.name == "value" and att.HasField("t"):
            itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(att.t.data_type)).itemsize
    return lambda args: _prod(np.asarray(args[0]).ravel()) * itemsize


def _expand(args: list[Any]) -> int:
    x, shape = args[0], np.asarray(args[1]).ravel()
    out = np.broadcast_shapes(tuple(max(int(d), 0) for d in shape), tuple(x.shape)) if len(shape) else x.shape
    return _prod(out) * int(x.itemsize)


def _tile(args: list[Any]) -> int:
    x, reps = args[0], np.asarray(args[1]).ravel()
    return _prod(int(a) * int(b) for a, b in zip(x.shape, reps)) * int(x.itemsize)


def _range(args: list[Any]) -> int:
    start, limit, delta = (np.asarray(a).item() for a in args[:3])
    if delta == 0:
        return 0
    return max(int(np.ceil((limit - start) / delta)), 0) * np.asarray(args[0]).itemsize


def guard_for(node: onnx.NodeProto) -> Callable[[list[Any]], int] | None:
    """A function estimating the output bytes of a node from its inputs, for ops that may allocate a lot."""
    op = node.op_type
    if node.domain not in ("", "ai.onnx"):
        return None
    if op == "ConstantOfShape":
        return _constant_of_shape(node)
    table: dict[str, Callable[[list[Any]], int]] = {"Expand": _expand, "Tile": _tile, "Range": _range}
    return table.get(op)
