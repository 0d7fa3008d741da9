"""Output sizes of the shape-building operators (Expand, Tile, Range, Pad, Resize, Concat, OneHot, Gather,
broadcasting elementwise ops, MatMul, Einsum, ConstantOfShape) from their inputs' shapes and small shape
tensors."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import onnx

from ...proto.graph import attribute
from ..ops.axes import broadcast_dims

Guard = Callable[[Sequence[Any]], int]


def prod(dims: Iterable[Any]) -> int:
    total = 1
    for d in dims:
        total *= max(int(d), 0)
    return total


def ints(value: Any) -> list[int]:
    values = np.asarray(value).ravel().tolist()  # Python numbers, read at once
    return values if values and type(values[0]) is int else [int(v) for v in values]


def widest_itemsize(args: Sequence[Any]) -> int:
    return int(max((a.itemsize for a in args if isinstance(a, np.ndarray)), default=1))


def _constant_of_shape(node: onnx.NodeProto) -> Guard:
    value = attribute(node, "value")
    itemsize = value.dtype.itemsize if value is not None else 4
    return lambda args: prod(ints(args[0])) * itemsize


def _expand(args: Sequence[Any]) -> int:
    x, shape = args[0], ints(args[1])
    out = broadcast_dims([max(d, 0) for d in shape], x.shape) if shape else x.shape
    return prod(out) * int(x.itemsize)


def _tile(args: Sequence[Any]) -> int:
    x, reps = args[0], ints(args[1])
    return prod(int(a) * int(b) for a, b in zip(x.shape, reps)) * int(x.itemsize)


def _range(args: Sequence[Any]) -> int:
    start, limit, delta = (np.asarray(a).item() for a in args[:3])
    if delta == 0:
        return 0
    return max(int(np.ceil((limit - start) / delta)), 0) * int(np.asarray(args[0]).itemsize)


def _pad(node: onnx.NodeProto) -> Guard:
    given = attribute(node, "pads")

    def size(args: Sequence[Any]) -> int:
        x = args[0]
        pads = list(given) if given is not None else ints(args[1])
        rank = x.ndim
        axes = list(range(rank)) if len(args) < 4 or args[3] is None else [a % rank for a in ints(args[3])]
        dims = list(x.shape)
        for k, axis in enumerate(axes):
            dims[axis] = dims[axis] + pads[k] + pads[k + len(axes)]
        return prod(dims) * int(x.itemsize)

    return size


def _resize(node: onnx.NodeProto) -> Guard:
    axes_attr = attribute(node, "axes")
    scales_attr = attribute(node, "scales")  # Upsample-7

    def size(args: Sequence[Any]) -> int:
        x = args[0]
        rank = x.ndim
        axes = list(range(rank)) if axes_attr is None else [a % rank for a in axes_attr]
        dims = list(x.shape)
        sizes = args[3] if len(args) > 3 and args[3] is not None and np.asarray(args[3]).size else None
        if sizes is not None:
            for axis, d in zip(axes, ints(sizes)):
                dims[axis] = d
            return prod(dims) * int(x.itemsize)
        if scales_attr is not None:
            scales = list(scales_attr)
        else:
            scales = np.asarray(args[1] if len(args) == 2 else args[2]).ravel().tolist()
        for axis, s in zip(axes, scales):
            dims[axis] = int(np.floor(dims[axis] * float(s)))
        return prod(dims) * int(x.itemsize)

    return size


def _total(args: Sequence[Any]) -> int:
    """Concatenations: the output holds every input."""
    total = 0
    for a in args:
        if isinstance(a, np.ndarray):
            total += a.nbytes
        elif isinstance(a, list):
            total += sum(np.asarray(v).nbytes for v in a)
    return total


def _one_hot(args: Sequence[Any]) -> int:
    indices, depth, values = args[0], np.asarray(args[1]).item(), args[2]
    return int(indices.size) * max(int(depth), 0) * int(np.asarray(values).itemsize)


def _broadcast(args: Sequence[Any]) -> int:
    """Elementwise ops: the broadcast shape of their inputs. One pass and no broadcasting when every shape is the
    same or all inputs but the largest hold at most one element (the output is then no bigger than the largest):
    this runs before every elementwise node."""
    size = second = itemsize = 0
    shape: tuple[int, ...] | None = None
    same = True
    for a in args:
        if isinstance(a, np.ndarray):
            n = a.size
            if shape is None:
                shape = a.shape
            elif same and a.shape != shape:
                same = False
            if n > size:
                size, second = n, size
            elif n > second:
                second = n
            if a.itemsize > itemsize:
                itemsize = a.itemsize
    if same or second <= 1:
        return size * itemsize
    return prod(broadcast_dims(*(a.shape for a in args if isinstance(a, np.ndarray)))) * itemsize


def _product_bound(args: Sequence[Any]) -> int:
    """At most the product of the inputs' sizes in the widest item size: a broadcast never makes more elements.
    A few operations where the broadcast shape takes many, so the common case (small tensors) costs little; the
    exact size (`_broadcast`) is computed only when this bound is over the limit."""
    total: int = 1
    itemsize: int = 1
    for a in args:
        total *= a.size
        if a.itemsize > itemsize:
            itemsize = a.itemsize
    return total * itemsize


def product_bound2(args: Sequence[Any]) -> int:
    """`_product_bound` of two inputs."""
    a, b = args
    size: int = a.size * b.size * (a.itemsize if a.itemsize > b.itemsize else b.itemsize)
    return size


def _elementwise_bound(node: onnx.NodeProto) -> Guard:
    return product_bound2 if len(node.input) == 2 and all(node.input) else _product_bound


def _matmul(args: Sequence[Any]) -> int:
    a, b = args[0], args[1]
    if a.ndim < 2 or b.ndim < 2:
        return int(max(a.nbytes, b.nbytes))
    itemsize = a.itemsize if a.itemsize > b.itemsize else b.itemsize
    if a.ndim == 2 and b.ndim == 2:  # the common case, without broadcasting
        size: int = a.shape[0] * b.shape[1] * itemsize
        return size
    batch = broadcast_dims(a.shape[:-2], b.shape[:-2])
    return prod((*batch, a.shape[-2], b.shape[-1])) * int(itemsize)


def _matmul_integer(args: Sequence[Any]) -> int:
    """int32 products of 8-bit inputs."""
    return _matmul(args) * 4 // widest_itemsize(args[:2])


def _gather(node: onnx.NodeProto) -> Guard:
    axis = int(attribute(node, "axis", 0))

    def size(args: Sequence[Any]) -> int:
        data, indices = args[0], args[1]
        k = axis % max(data.ndim, 1)
        return prod((*data.shape[:k], *np.shape(indices), *data.shape[k + 1:])) * int(data.itemsize)

    return size


def _einsum(node: onnx.NodeProto) -> Guard:
    equation = str(attribute(node, "equation", "")).replace(" ", "")

    def size(args: Sequence[Any]) -> int:
        lhs, arrow, rhs = equation.partition("->")
        sizes: dict[str, int] = {}
        ellipsis: tuple[int, ...] = ()
        for term, x in zip(lhs.split(","), args):
            if "..." in term:
                head, tail = term.split("...")
                n = x.ndim - len(head) - len(tail)
                ellipsis = np.broadcast_shapes(ellipsis, x.shape[len(head):len(head) + n])
                pairs = zip(head + tail, (*x.shape[:len(head)], *x.shape[len(head) + n:]))
            else:
                pairs = zip(term, x.shape)
            for letter, d in pairs:
                sizes[letter] = max(sizes.get(letter, 1), int(d))
        if not arrow:  # implicit output: the ellipsis, then the letters used once, sorted
            rhs = ("..." if "..." in lhs else "") + "".join(sorted(c for c in sizes if lhs.count(c) == 1))
        dims = [sizes.get(c, 1) for c in rhs.replace("...", "")]
        if "..." in rhs:
            dims += list(ellipsis)
        return prod(dims) * widest_itemsize(args)

    return size


ELEMENTWISE = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where", "Equal",
                         "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor", "BitShift",
                         "BitwiseAnd", "BitwiseOr", "BitwiseXor", "PRelu", "StringConcat"})
BY_INPUTS: dict[str, Guard] = {"Expand": _expand, "Tile": _tile, "Range": _range, "Concat": _total,
                               "ConcatFromSequence": _total, "OneHot": _one_hot, "MatMul": _matmul,
                               "MatMulInteger": _matmul_integer,
                               **{op: _broadcast for op in ELEMENTWISE}}
QUICK_BY_NODE: dict[str, Callable[[onnx.NodeProto], Guard]] = {
    **{op: _elementwise_bound for op in ELEMENTWISE},
    # Gather's output has (data's size / its axis) × the indices' elements; an empty axis takes no index at all
    "Gather": lambda node: product_bound2,
}
"""Cheap upper bounds run before the exact estimate, which then runs only when the bound is over the limit."""
BY_NODE: dict[str, Callable[[onnx.NodeProto], Guard]] = {
    "ConstantOfShape": _constant_of_shape, "Pad": _pad, "Resize": _resize, "Upsample": _resize,
    "Gather": _gather, "Einsum": _einsum}
