"""Loop-invariant hoisting: body nodes of a Loop or Scan that depend only on outer values and constants run
once, before the loop, instead of once per iteration."""
from __future__ import annotations

from collections.abc import Sequence

import onnx

from ...proto.weights import tensor_value
from ...spec.random_ops import NONDETERMINISTIC  # never folded, merged or moved
from ..ir import Built, Node
from ..pattern import STRUCTURE, MatchResult, Pattern
from ..scope import graph_definitions, node_captures, rename_node
from ..state import GraphState
from .common import identity


def _body(node: Node) -> onnx.GraphProto | None:
    return next((a.g for a in node.attribute if a.name == "body" and a.type == onnx.AttributeProto.GRAPH), None)


def invariant_nodes(body: onnx.GraphProto) -> list[onnx.NodeProto]:
    """Body nodes (in order) whose inputs are outer values, body initializers or results of such nodes;
    Constant nodes only when a hoisted computation reads them."""
    defined = graph_definitions(body)
    inputs = {i.name for i in body.input}
    invariant = {t.name for t in body.initializer if t.name not in inputs}
    found = []
    for node in body.node:
        if (node.domain not in ("", "ai.onnx") or node.op_type in NONDETERMINISTIC
                or any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)):
            continue
        if all(not n or n in invariant or n not in defined for n in node.input):
            found.append(node)
            invariant.update(o for o in node.output if o)
    read = {n for node in found if node.op_type != "Constant" for n in node.input}
    return [n for n in found if n.op_type != "Constant" or any(o in read for o in n.output)]


class LoopInvariantHoistingPattern(Pattern):
    """Loop/Scan whose body computes f(outer values, constants) -> f computed once before the loop, its results
    read by the body from the outer scope. Body outputs keep their names (an Identity inside the body returns a
    hoisted value); body initializers a hoisted node reads become Constants before the loop. Random operators
    and nodes with bodies stay. A hoisted node runs once even when the loop runs zero times."""

    op_types = ("Loop", "Scan")
    priority = STRUCTURE

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        body = _body(node)
        if body is None:
            return None
        hoisted = invariant_nodes(body)
        if not any(n.op_type != "Constant" for n in hoisted):
            return self.decline(g, node, "no loop-invariant computation in the body")
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        body = _body(node)
        assert body is not None  # match() declined otherwise
        hoisted = invariant_nodes(body)
        types = {v.name: v.type for v in [*body.value_info, *body.output] if v.HasField("type")}
        inits = {t.name: t for t in body.initializer}
        constants: dict[str, str] = {}  # body initializer read by a hoisted node -> outer Constant's output
        renamed: dict[str, str] = {}  # hoisted result -> its fresh outer name
        outside: list[onnx.NodeProto] = []
        for inner in hoisted:
            for name in inner.input:
                if name in inits and name not in constants:
                    constant, constants[name] = g.make_constant(tensor_value(inits[name]), name)
                    outside.append(constant)
            copy = onnx.NodeProto()
            copy.CopyFrom(inner)
            copy.name = g.unique_name(f"{node.name}_{inner.name}")
            rename_node(copy, {**constants, **renamed})
            for i, name in enumerate(copy.output):
                if name:
                    renamed[name] = copy.output[i] = g.unique_name(name)
                    g.set_type(renamed[name], types.get(name))
            outside.append(copy)
        loop = node.copy()
        next(a for a in loop.attribute if a.name == "body").g.CopyFrom(
            _without(g, body, {id(n) for n in hoisted}, renamed))
        return outside + [loop]


def _without(g: GraphState, body: onnx.GraphProto, moved: set[int], renamed: dict[str, str]) -> onnx.GraphProto:
    """The body minus the hoisted nodes, reading their results from the outer scope; its outputs keep their
    names (an Identity returns a hoisted value, as a body must not return an outer value directly)."""
    new = onnx.GraphProto()
    new.CopyFrom(body)
    del new.node[:]
    for inner in body.node:
        if id(inner) not in moved:
            copy = new.node.add()
            copy.CopyFrom(inner)
            rename_node(copy, renamed)
    outputs = {o.name for o in body.output}
    for name in outputs & set(renamed):
        bridge = identity(g, renamed[name], name)
        bridge.name = g.unique_name("Identity")
        new.node.append(bridge)
    read = {i for n in new.node for i in n.input} | {c for n in new.node for c in node_captures(n)} | outputs
    read |= {i.name for i in body.input}
    kept_info = [v for v in body.value_info if v.name not in renamed or v.name in outputs]
    kept_inits = [t for t in body.initializer if t.name in read]
    del new.value_info[:], new.initializer[:]
    new.value_info.extend(kept_info)
    new.initializer.extend(kept_inits)
    return new
