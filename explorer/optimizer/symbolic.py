"""Symbolic shape and value propagation: one forward pass over a graph that refines every value's shape (dims
as ints, symbolic names or expressions like `(n+1)`) and the contents of small integer tensors (shape tensors)
where they are known, through Shape/Gather/Concat/Slice/Squeeze/Unsqueeze/Reshape/Expand/ConstantOfShape/
Cast/arithmetic. Other operators go through onnx's own node inference, fed the refined input shapes and the
contents known so far (its data propagation), which is what lets shapes flow on past a computed Reshape.

Dims are `int` (known), `str` (a symbol or an expression of symbols) or None (unknown). A known value is a numpy
object array whose elements are such dims.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import helper, shape_inference

from ..budgets import SYMBOLIC_VALUE_ELEMENTS
from . import body_facts, tensors
from .symbolic_values import INT_TYPES, VALUE_RULES, inferred_dim, ints, range_length

if TYPE_CHECKING:
    from .ir import Node
    from .state import GraphState

Dim = int | str | None
Shape = tuple[Dim, ...]
VALUE_TYPES = INT_TYPES | {None}  # element types whose contents the value rules compute (None: not known)


@dataclass
class Facts:
    """What one propagation pass found: refined shapes and known contents, per value name."""

    shapes: dict[str, Shape] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)


def propagate(g: GraphState, facts: Facts | None = None, seen: set[Node] | None = None,
              changed_out: set[str] | None = None) -> Facts:
    """Runs the pass over `g` in its current order (outer facts come from the parent's constants and shapes;
    a Loop or Scan body starts from what its node tells of its inputs, see body_facts). Given the facts and the
    visited nodes (`seen`, updated) of an earlier pass over the same graph, it visits only nodes that are new or
    read a value whose facts changed: a value's facts stay true while it exists. The names of values whose
    facts are new or changed are added to `changed_out` when given."""
    seen = set() if seen is None else seen
    changed_out = set() if changed_out is None else changed_out
    if facts is not None and seen:
        changed_out.update(_forward(g, facts, seen))
        return facts
    seeds = body_facts.seeds(g, lambda outer, name: _shape(outer, outer.facts, name),
                             lambda outer, name: known(outer, outer.facts, name))
    if seeds is None:
        facts = Facts() if facts is None else facts
        changed_out.update(_forward(g, facts, seen))
        return facts
    while True:  # each pass either confirms every assumed carried shape or gives up at least one
        trial = Facts(dict(seeds.shapes), dict(seeds.values))
        visited: set[Node] = set()
        changed = _forward(g, trial, visited)
        broken = [name for name, result in seeds.assumed.items()
                  if not body_facts.keeps(seeds.shapes[name], _shape(g, trial, result))]
        if not broken:
            seen.update(visited)
            changed_out.update(changed)
            return trial
        for name in broken:
            seeds.drop(name)


def _forward(g: GraphState, facts: Facts, seen: set[Node]) -> set[str]:
    """One pass over the nodes not yet `seen` or reading a changed value; the names whose facts changed."""
    changed: set[str] = set()
    nodes = g.nodes()
    seen.intersection_update(nodes)  # forget removed nodes
    shapes, values = facts.shapes, facts.values
    body = g.parent is not None
    for node in nodes:
        fresh = node not in seen
        if not fresh and (not changed or changed.isdisjoint(node.input)):
            continue
        seen.add(node)
        outputs = node.output
        if fresh and body:
            _captured(g, facts, node)
        if not node.is_onnx() or node.has_body() or node.op_type == "Constant":
            if fresh:
                changed.update(o for o in outputs if o)
            continue
        before = [(shapes.pop(o, None), values.pop(o, None)) for o in outputs]
        # a malformed node teaches nothing; running it reports the problem
        with contextlib.suppress(ValueError, TypeError, IndexError, OverflowError, ZeroDivisionError):
            _node(g, facts, node)
        for name, (shape, value) in zip(outputs, before):
            if name and (fresh or shape != shapes.get(name) or not tensors.same(value, values.get(name))):
                changed.add(name)
    return changed


def _captured(g: GraphState, facts: Facts, node: Node) -> None:
    """A value of an enclosing graph is the same on every run of a body: it keeps the shape known outside."""
    for name in node.input:
        outer = g.outer(name) if name and name not in facts.shapes else None
        if outer is not None:
            shape = _shape(outer, outer.facts, name)
            if shape is not None:
                facts.shapes[name] = shape


def known(g: GraphState, facts: Facts, name: str) -> np.ndarray | None:
    """The known contents of `name`: a small integer constant, or what the pass found."""
    if not name:
        return None
    found = facts.values.get(name)
    if found is None:
        found = g.constant_dims.get(name)
    if found is not None:
        return found
    node = g.producer(name)
    if node is not None and not node.is_onnx("Constant"):
        return None  # computed here: only what the pass found
    kind = g.constant_kind(name)  # a big or float constant (a weight) is not read at all
    if kind is not None:
        value = g.constant(name) if kind[0] in "iub" and kind[1] <= SYMBOLIC_VALUE_ELEMENTS else None
        if value is None:
            return None
        dims = np.array([int(v) for v in value.reshape(-1)], dtype=object).reshape(value.shape)
        dims.flags.writeable = False  # shared by every reader (a constant's value never changes)
        g.constant_dims[name] = dims
        return dims
    outer = g.outer(name)
    if outer is not None:  # a body reads what its enclosing graph knows
        return known(outer, outer.facts, name)
    return None


def outer_facts(g: GraphState, names: list[str]) -> tuple:
    """What `g` knows of `names` that a body reading them may use (constness, shape, known contents), as a
    hashable key: a body at its fixpoint under one key may rewrite further under another."""
    key = []
    for name in names:
        value = known(g, g.facts, name)
        contents = None if value is None else (value.shape, tuple(value.reshape(-1).tolist()))
        key.append((name, g.is_constant(name), _shape(g, g.facts, name), contents))
    return tuple(key)


def _shape(g: GraphState, facts: Facts, name: str) -> Shape | None:
    found = facts.shapes.get(name)
    if found is not None:
        return found
    outer = g.outer(name)
    if outer is not None:
        return _shape(outer, outer.facts, name)
    return g.declared_shape(name)


def _node(g: GraphState, facts: Facts, node: Node) -> None:
    rule = VALUE_RULES.get(node.op_type)
    args = None
    out = node.output[0] if node.output else ""
    if rule is not None and out and g.elem_type(out) in VALUE_TYPES:
        args = [known(g, facts, n) for n in node.input]
        value = rule(g, lambda name: _shape(g, facts, name), node, args)
        if value is not None and value.size <= SYMBOLIC_VALUE_ELEMENTS:
            facts.values[out] = value
            facts.shapes[out] = tuple(value.shape)
    for o in node.output:
        if not o or not _static(g.declared_shape(o)):
            break
    else:
        return  # every output shape is known already
    if args is None:
        args = [known(g, facts, n) for n in node.input]
    shapes = _shape_rule(g, facts, node, args)
    if shapes is None:
        shapes = _onnx_inference(g, facts, node, args)
    for name, shape in zip(node.output, shapes or ()):
        if name and shape is not None and name not in facts.shapes:
            facts.shapes[name] = _merge(shape, g.declared_shape(name))


def _static(shape: Shape | None) -> bool:
    return shape is not None and all(isinstance(d, int) for d in shape)


def _merge(found: Shape, declared: Shape | None) -> Shape:
    """Per dim, the more precise of what was found and what the model declared (int > symbol > None)."""
    if declared is None or len(declared) != len(found):
        return found
    return tuple(d if isinstance(d, int) or (f is None and d is not None) else f for f, d in zip(found, declared))


# ------------------------------------------------------------------------------------------------ shape rules
def _shape_rule(g: GraphState, facts: Facts, node: Node, args: list) -> list[Shape | None] | None:
    op = node.op_type
    if op == "ConstantOfShape" and args and args[0] is not None:
        return [tuple(None if d is None else d for d in args[0].reshape(-1))]
    if op == "Reshape" and len(args) > 1 and args[1] is not None:
        source = _shape(g, facts, node.input[0])
        target = list(args[1].reshape(-1))
        if not g.attribute(node, "allowzero", 0):  # 0 copies the input's dim (unknown with it); allowzero=1: a size
            target = [(source[i] if source is not None and i < len(source) else None) if d == 0 else d
                      for i, d in enumerate(target)]
        if -1 in target:
            rest = None if source is None else inferred_dim(source, target)
            target = [rest if d == -1 else d for d in target]
        return [tuple(target)]
    if op == "Range" and len(args) == 3 and all(a is not None and a.size == 1 for a in args) \
            and args[2].item() == 1:
        length = range_length(args[0].item(), args[1].item())
        return None if length is None else [(length,)]
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
        contents = ints(value)
        if contents is not None:
            data[name] = tensors.to_tensor(np.array(contents, dtype=np.int64).reshape(value.shape), name)
    try:
        inferred = shape_inference.infer_node_outputs(schema, node.proto, types, input_data=data)
    except Exception:  # noqa: BLE001 - inference refuses: nothing learnt
        return None
    return [tensors.tensor_shape(inferred.get(o)) if o else None for o in node.output]
