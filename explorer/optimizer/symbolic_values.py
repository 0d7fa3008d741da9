"""Value rules of the symbolic propagation (symbolic.py): the contents of a small integer tensor (a shape
tensor) computed from what is known of its inputs' contents and shapes. Elements are dims: int (known), str (a
symbol or an expression of symbols) or None (unknown).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import onnx

from .dim_algebra import combine, linear

if TYPE_CHECKING:
    from .ir import Node
    from .state import GraphState

Dim = int | str | None
Shape = tuple[Dim, ...]
ShapeOf = Callable[[str], "Shape | None"]


def product(dims: Sequence[Dim]) -> int:
    """The product of dims known to be ints."""
    found = 1
    for d in dims:
        found *= int(d)  # type: ignore[arg-type]
    return found


def inferred_dim(source: Shape, target: Sequence[Dim]) -> Dim:
    """The dim a Reshape's -1 stands for, from the input's dims and the other target dims: each of those
    cancels an equal input dim (a symbol or an int), the ints left over must divide, and what remains is one
    symbol or an int; None when that does not determine it."""
    rest = list(source)
    divisor = 1
    for d in target:
        if d == -1:
            continue
        if d is not None and d in rest:
            rest.remove(d)
        elif isinstance(d, int) and d > 0:
            divisor *= d
        else:
            return None
    symbols = [d for d in rest if not isinstance(d, int)]
    count = product([d for d in rest if isinstance(d, int)])
    if None in symbols or len(symbols) > 1 or count % divisor:
        return None
    if symbols:
        return symbols[0] if count == divisor else None
    return count // divisor


def ints(value: np.ndarray | None) -> list[int] | None:
    if value is None or not all(isinstance(v, (int, np.integer, bool, np.bool_)) for v in value.reshape(-1)):
        return None
    return [int(v) for v in value.reshape(-1)]


def _dims_of(g: GraphState, shape_of: ShapeOf, node: Node, args: list) -> np.ndarray | None:
    shape = shape_of(node.input[0])
    if shape is None:
        return None
    start, end = g.attribute(node, "start", 0), g.attribute(node, "end")
    return np.array(list(shape[slice(start, end)]), dtype=object)


def _gather(g: GraphState, shape_of: ShapeOf, node: Node, args: list) -> np.ndarray | None:
    data, indices = args[0], ints(args[1]) if len(args) > 1 else None
    if data is None or indices is None or data.ndim != 1 or g.attribute(node, "axis", 0) not in (0, -1):
        return None
    picked = data[np.array(indices, dtype=np.int64).reshape(args[1].shape)]
    return np.asarray(picked, dtype=object)


def _concat(g: GraphState, shape_of: ShapeOf, node: Node, args: list) -> np.ndarray | None:
    if any(a is None for a in args) or not args:
        return None
    return np.concatenate([a.reshape(-1) for a in args]).astype(object)


def _reshape_like(g: GraphState, shape_of: ShapeOf, node: Node, args: list) -> np.ndarray | None:
    """Squeeze/Unsqueeze/Reshape/Identity/Cast of a known value: same contents, new shape when known."""
    if args[0] is None:
        return None
    shape = g.declared_shape(node.output[0])
    if node.op_type in ("Identity", "Cast"):
        return args[0]
    if shape is not None and all(isinstance(d, int) for d in shape) and product(shape) == args[0].size:
        return args[0].reshape(shape)
    if node.op_type == "Unsqueeze" and args[0].ndim == 0:
        return args[0].reshape(1)
    if node.op_type == "Squeeze" and args[0].size == 1:
        return args[0].reshape(())
    return None


def _slice(g: GraphState, shape_of: ShapeOf, node: Node, args: list) -> np.ndarray | None:
    data = args[0]
    if data is None or data.ndim != 1 or len(args) < 3:
        return None
    starts, ends = ints(args[1]), ints(args[2])
    axes = ints(args[3]) if len(args) > 3 and args[3] is not None else [0]
    steps = ints(args[4]) if len(args) > 4 and args[4] is not None else [1]
    if starts is None or ends is None or axes is None or steps is None or len(starts) != 1 or axes[0] not in (0, -1):
        return None
    end = min(ends[0], 2**62) if ends[0] > 0 else max(ends[0], -(2**62))
    return data[slice(starts[0], end, steps[0])]


def _div(x: int, y: int) -> int | None:
    """Integer Div as ONNX computes it (truncating), for the non-negative sizes shape arithmetic deals with."""
    return x // y if x >= 0 and y > 0 else None


def _arith(fn: Callable[[int, int], int | None], symbol: str) -> Callable[..., np.ndarray | None]:
    def rule(g: GraphState, shape_of: ShapeOf, node: Node, args: list) -> np.ndarray | None:
        a, b = args[0], args[1] if len(args) > 1 else None
        if a is None or b is None:
            return None
        a, b = np.broadcast_arrays(a, b)
        out = np.empty(a.shape, dtype=object)
        for i, (x, y) in enumerate(zip(a.reshape(-1), b.reshape(-1))):
            if isinstance(x, (int, np.integer)) and isinstance(y, (int, np.integer)):
                out.reshape(-1)[i] = fn(int(x), int(y))
            elif x is None or y is None:
                out.reshape(-1)[i] = None
            else:
                x, y = (int(v) if isinstance(v, np.integer) else v for v in (x, y))
                out.reshape(-1)[i] = combine(x, y, symbol) if symbol in "+-*" else f"({x}{symbol}{y})"
        return out
    return rule


def range_length(start: Dim, limit: Dim) -> Dim:
    """The length of Range(start, limit, 1), max(limit - start, 0): an int, or a dim that cannot be negative (a
    sum of symbols, each a size, plus a constant >= 0); None otherwise."""
    if start is None or limit is None:
        return None
    if isinstance(start, int) and isinstance(limit, int):
        return max(limit - start, 0)
    length = combine(limit, start, "-")
    if isinstance(length, int):
        return max(length, 0)
    form = linear(length)
    if form is None or form[1] < 0 or any(c < 0 for c in form[0].values()):
        return None
    return length


def _size(g: GraphState, shape_of: ShapeOf, node: Node, args: list) -> np.ndarray | None:
    shape = shape_of(node.input[0])
    if shape is None or not all(isinstance(d, int) for d in shape):
        return None
    return np.array(product(shape), dtype=object)


def _compare(fn: Callable[[int, int], bool]) -> Callable[..., np.ndarray | None]:
    def rule(g: GraphState, shape_of: ShapeOf, node: Node, args: list) -> np.ndarray | None:
        a, b = (ints(v) for v in args[:2])
        if a is None or b is None or len(args) != 2:
            return None
        x, y = np.broadcast_arrays(np.array(a).reshape(args[0].shape), np.array(b).reshape(args[1].shape))
        return np.vectorize(fn, otypes=[object])(x, y).astype(object)
    return rule


def _not(g: GraphState, shape_of: ShapeOf, node: Node, args: list) -> np.ndarray | None:
    a = ints(args[0])
    return None if a is None else np.array([not v for v in a], dtype=object).reshape(args[0].shape)


VALUE_RULES: dict[str, Callable[..., np.ndarray | None]] = {
    "Size": _size, "Not": _not, "Equal": _compare(lambda x, y: x == y), "Less": _compare(lambda x, y: x < y),
    "Greater": _compare(lambda x, y: x > y), "LessOrEqual": _compare(lambda x, y: x <= y),
    "GreaterOrEqual": _compare(lambda x, y: x >= y),
    "Shape": _dims_of, "Gather": _gather, "Concat": _concat, "Slice": _slice,
    "Squeeze": _reshape_like, "Unsqueeze": _reshape_like, "Reshape": _reshape_like, "Identity": _reshape_like,
    "Cast": _reshape_like,
    "Add": _arith(lambda x, y: x + y, "+"), "Sub": _arith(lambda x, y: x - y, "-"),
    "Mul": _arith(lambda x, y: x * y, "*"), "Div": _arith(_div, "/"),
}
INT_TYPES = frozenset({onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.BOOL})
