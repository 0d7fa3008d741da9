"""Symbolic shape and value propagation: one forward pass over a graph that refines every value's shape (dims
as ints, symbolic names or expressions like `(n+1)`) and the contents of small integer tensors (shape tensors)
where they are known, through Shape/Gather/Concat/Slice/Squeeze/Unsqueeze/Reshape/Expand/ConstantOfShape/
Cast/arithmetic. Other operators go through onnx's own node inference, fed the refined input shapes and the
contents known so far (its data propagation), which is what lets shapes flow on past a computed Reshape.

Dims are `int` (known), `str` (a symbol or an expression of symbols) or None (unknown). A known value is a numpy
object array whose elements are such dims.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import helper, shape_inference

from . import tensors

if TYPE_CHECKING:
    from .ir import Node
    from .state import GraphState

Dim = int | str | None
Shape = tuple[Dim, ...]
MAX_VALUE_ELEMENTS = 64  # integer tensors up to this size have their contents tracked


@dataclass
class Facts:
    """What one propagation pass found: refined shapes and known contents, per value name."""

    shapes: dict[str, Shape] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)


def propagate(g: GraphState, facts: Facts | None = None, seen: set[Node] | None = None,
              changed_out: set[str] | None = None) -> Facts:
    """Runs the pass over `g` in its current order (outer facts come from the parent's constants and shapes).
    Given the facts and the visited nodes (`seen`, updated) of an earlier pass over the same graph, it visits
    only nodes that are new or read a value whose facts changed: a value's facts stay true while it exists.
    The names of values whose facts are new or changed are added to `changed_out` when given."""
    facts = Facts() if facts is None else facts
    seen = set() if seen is None else seen
    changed: set[str] = set()
    nodes = g.nodes()
    seen.intersection_update(nodes)  # forget removed nodes
    for node in nodes:
        fresh = node not in seen
        if not fresh and not any(n in changed for n in node.input):
            continue
        seen.add(node)
        if not node.is_onnx() or node.has_body() or node.op_type == "Constant":
            if fresh:
                changed.update(o for o in node.output if o)
            continue
        before = [(facts.shapes.pop(o, None), facts.values.pop(o, None)) for o in node.output]
        try:
            _node(g, facts, node)
        except (ValueError, TypeError, IndexError, OverflowError, ZeroDivisionError):
            pass  # a malformed node teaches nothing; running it reports the problem
        for name, (shape, value) in zip(node.output, before):
            if name and (fresh or shape != facts.shapes.get(name) or not tensors.same(value, facts.values.get(name))):
                changed.add(name)
    if changed_out is not None:
        changed_out.update(changed)
    return facts


def known(g: GraphState, facts: Facts, name: str) -> np.ndarray | None:
    """The known contents of `name`: a small integer constant, or what the pass found."""
    if not name:
        return None
    found = facts.values.get(name)
    if found is not None:
        return found
    kind = g.constant_kind(name)  # a big or float constant (a weight) is not read at all
    if kind is not None:
        value = g.constant(name) if kind[0] in "iub" and kind[1] <= MAX_VALUE_ELEMENTS else None
        return None if value is None else np.array([int(v) for v in value.reshape(-1)],
                                                   dtype=object).reshape(value.shape)
    outer = g.outer(name)
    if outer is not None:  # a body reads what its enclosing graph knows
        return known(outer, outer.facts, name)
    return None


def _shape(g: GraphState, facts: Facts, name: str) -> Shape | None:
    found = facts.shapes.get(name)
    if found is not None:
        return found
    outer = g.outer(name)
    if outer is not None and g.trust_shapes:
        return _shape(outer, outer.facts, name)
    return g.declared_shape(name)


def _product(dims: Sequence[Dim]) -> int:
    """The product of dims known to be ints."""
    found = 1
    for d in dims:
        found *= int(d)  # type: ignore[arg-type]
    return found


def _ints(value: np.ndarray | None) -> list[int] | None:
    if value is None or not all(isinstance(v, (int, np.integer, bool, np.bool_)) for v in value.reshape(-1)):
        return None
    return [int(v) for v in value.reshape(-1)]


def _node(g: GraphState, facts: Facts, node: Node) -> None:
    rule = VALUE_RULES.get(node.op_type)
    args = [known(g, facts, n) for n in node.input]
    out = node.output[0] if node.output else ""
    if rule is not None and out and g.elem_type(out) in INT_TYPES | {None}:
        value = rule(g, facts, node, args)
        if value is not None and value.size <= MAX_VALUE_ELEMENTS:
            facts.values[out] = value
            facts.shapes[out] = tuple(value.shape)
    declared = [g.declared_shape(o) if o else None for o in node.output]
    if all(s is not None and all(isinstance(d, int) for d in s) for s in declared):
        return  # every output shape is known already
    shapes = _shape_rule(g, facts, node, args)
    if shapes is None:
        shapes = _onnx_inference(g, facts, node, args)
    for name, shape in zip(node.output, shapes or ()):
        if name and shape is not None and name not in facts.shapes:
            facts.shapes[name] = _merge(shape, g.declared_shape(name))


def _merge(found: Shape, declared: Shape | None) -> Shape:
    """Per dim, the more precise of what was found and what the model declared (int > symbol > None)."""
    if declared is None or len(declared) != len(found):
        return found
    return tuple(d if isinstance(d, int) or (f is None and d is not None) else f for f, d in zip(found, declared))


# ------------------------------------------------------------------------------------------------ value rules
def _dims_of(g: GraphState, facts: Facts, node: Node, args: list) -> np.ndarray | None:
    shape = _shape(g, facts, node.input[0])
    if shape is None:
        return None
    start, end = g.attribute(node, "start", 0), g.attribute(node, "end")
    return np.array(list(shape[slice(start, end)]), dtype=object)


def _gather(g: GraphState, facts: Facts, node: Node, args: list) -> np.ndarray | None:
    data, indices = args[0], _ints(args[1]) if len(args) > 1 else None
    if data is None or indices is None or data.ndim != 1 or g.attribute(node, "axis", 0) not in (0, -1):
        return None
    picked = data[np.array(indices, dtype=np.int64).reshape(args[1].shape)]
    return np.asarray(picked, dtype=object)


def _concat(g: GraphState, facts: Facts, node: Node, args: list) -> np.ndarray | None:
    if any(a is None for a in args) or not args:
        return None
    return np.concatenate([a.reshape(-1) for a in args]).astype(object)


def _reshape_like(g: GraphState, facts: Facts, node: Node, args: list) -> np.ndarray | None:
    """Squeeze/Unsqueeze/Reshape/Identity/Cast of a known value: same contents, new shape when known."""
    if args[0] is None:
        return None
    shape = g.declared_shape(node.output[0])
    if node.op_type in ("Identity", "Cast"):
        return args[0]
    if shape is not None and all(isinstance(d, int) for d in shape) and _product(shape) == args[0].size:
        return args[0].reshape(shape)
    if node.op_type == "Unsqueeze" and args[0].ndim == 0:
        return args[0].reshape(1)
    if node.op_type == "Squeeze" and args[0].size == 1:
        return args[0].reshape(())
    return None


def _slice(g: GraphState, facts: Facts, node: Node, args: list) -> np.ndarray | None:
    data = args[0]
    if data is None or data.ndim != 1 or len(args) < 3:
        return None
    starts, ends = _ints(args[1]), _ints(args[2])
    axes = _ints(args[3]) if len(args) > 3 and args[3] is not None else [0]
    steps = _ints(args[4]) if len(args) > 4 and args[4] is not None else [1]
    if starts is None or ends is None or axes is None or steps is None or len(starts) != 1 or axes[0] not in (0, -1):
        return None
    end = min(ends[0], 2**62) if ends[0] > 0 else max(ends[0], -(2**62))
    return data[slice(starts[0], end, steps[0])]


def _div(x: int, y: int) -> int | None:
    """Integer Div as ONNX computes it (truncating), for the non-negative sizes shape arithmetic deals with."""
    return x // y if x >= 0 and y > 0 else None


def _arith(fn: Callable[[int, int], int | None], symbol: str) -> Callable[..., np.ndarray | None]:
    def rule(g: GraphState, facts: Facts, node: Node, args: list) -> np.ndarray | None:
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
                out.reshape(-1)[i] = f"({x}{symbol}{y})"
        return out
    return rule


def _size(g: GraphState, facts: Facts, node: Node, args: list) -> np.ndarray | None:
    shape = _shape(g, facts, node.input[0])
    if shape is None or not all(isinstance(d, int) for d in shape):
        return None
    return np.array(_product(shape), dtype=object)


def _compare(fn: Callable[[int, int], bool]) -> Callable[..., np.ndarray | None]:
    def rule(g: GraphState, facts: Facts, node: Node, args: list) -> np.ndarray | None:
        a, b = (_ints(v) for v in args[:2])
        if a is None or b is None or len(args) != 2:
            return None
        x, y = np.broadcast_arrays(np.array(a).reshape(args[0].shape), np.array(b).reshape(args[1].shape))
        return np.vectorize(fn, otypes=[object])(x, y).astype(object)
    return rule


def _not(g: GraphState, facts: Facts, node: Node, args: list) -> np.ndarray | None:
    a = _ints(args[0])
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


# ------------------------------------------------------------------------------------------------ shape rules
def _shape_rule(g: GraphState, facts: Facts, node: Node, args: list) -> list[Shape | None] | None:
    op = node.op_type
    if op == "ConstantOfShape" and args and args[0] is not None:
        return [tuple(None if d is None else d for d in args[0].reshape(-1))]
    if op == "Reshape" and len(args) > 1 and args[1] is not None and not g.attribute(node, "allowzero", 0):
        source = _shape(g, facts, node.input[0])
        target = list(args[1].reshape(-1))
        if source is not None:
            target = [source[i] if d == 0 and i < len(source) else d for i, d in enumerate(target)]
        if -1 in target:
            if source is None or not all(isinstance(d, int) for d in source) \
                    or not all(isinstance(d, int) for d in target):
                target = [None if d == -1 else d for d in target]
            else:
                rest = _product([d for d in target if d != -1])
                target = [_product(source) // rest if d == -1 else d for d in target]
        return [tuple(target)]
    if op == "Expand" and len(args) > 1 and args[1] is not None:
        source = _shape(g, facts, node.input[0])
        if source is None:
            return None
        target = list(args[1].reshape(-1))
        rank = max(len(source), len(target))
        a = [1] * (rank - len(source)) + list(source)
        b = [1] * (rank - len(target)) + target
        return [tuple(x if y == 1 else y if x == 1 else x if x == y else None for x, y in zip(a, b))]
    return None


def _onnx_inference(g: GraphState, facts: Facts, node: Node, args: list) -> list[Shape | None] | None:
    try:
        schema = onnx.defs.get_schema(node.op_type, g.opset(), "")
    except Exception:  # noqa: BLE001 - unknown operator
        return None
    types: dict[str, onnx.TypeProto] = {}
    data: dict[str, onnx.TensorProto] = {}
    for name, value in zip(node.input, args):
        if not name:
            continue
        elem = g.elem_type(name)
        if elem is None:
            return None
        shape = _shape(g, facts, name)
        types[name] = helper.make_tensor_type_proto(elem, None if shape is None else list(shape))
        ints = _ints(value)
        if ints is not None:
            data[name] = tensors.to_tensor(np.array(ints, dtype=np.int64).reshape(value.shape), name)
    try:
        inferred = shape_inference.infer_node_outputs(schema, node.proto, types, input_data=data)
    except Exception:  # noqa: BLE001 - inference refuses: nothing learnt
        return None
    return [tensors.tensor_shape(inferred.get(o)) if o else None for o in node.output]
