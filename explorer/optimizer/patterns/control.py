"""Control flow: If with a condition known before running inlined (see branches.py for how it is known), and a
Loop that runs exactly once replaced by its body."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx

from ...proto.weights import tensor_value
from ..ir import Built, Node
from ..pattern import SIMPLIFY, STRUCTURE, MatchResult, Pattern
from ..scope import graph_definitions, node_captures, rename_in_graph
from ..state import GraphState
from .branches import branch, decided
from .common import axes_input, identity


class IfConstantPattern(Pattern):
    """If(c) then A else B -> the nodes of A (c true) or B (c false), when c is a constant with one element, a
    known value, or a rank check one branch's declared outputs contradict. Every value the branch defines gets a fresh name; each If output becomes an Identity of the matching branch
    output (IdentityRemoval then removes them). Branches with sparse initializers are declined."""

    op_types = ("If",)
    priority = SIMPLIFY

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        cond = g.constant(node.input[0])
        if cond is not None and cond.size != 1:
            return self.decline(g, node, f"the condition holds {cond.size} elements")
        found = decided(g, node)
        if found is None:
            return None
        taken = branch(node, found[0])
        if taken is None or len(taken.output) != len(node.output):
            return self.decline(g, node, "the branch does not match the If's outputs")
        if len(taken.sparse_initializer):
            return self.decline(g, node, "the branch has sparse initializers")
        if found[1]:
            self.because(g, node, found[1])
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        found = decided(g, node)
        assert found is not None  # a value's facts hold while it exists: match found it
        made, outputs = inline(g, node, branch(node, found[0]), {})  # type: ignore[arg-type]
        made.extend(identity(g, source, out) for out, source in zip(node.output, outputs) if out)
        return made


def inline(g: GraphState, node: Node, body: onnx.GraphProto, bound: dict[str, str]) -> tuple[list[Built], list[str]]:
    """The nodes of `body` to run in `g` in place of `node`, and the names its outputs get there: body inputs
    read the outer values `bound` gives them, every other value the body defines gets a fresh name, its
    initializers become Constants."""
    taken = onnx.GraphProto()
    taken.CopyFrom(body)
    rename_in_graph(taken, {name: bound.get(name) or g.unique_name(name) for name in graph_definitions(taken)})
    for info in [*taken.value_info, *taken.output]:
        if info.HasField("type"):
            g.set_type(info.name, info.type)
    made: list[Built] = []
    for tensor in taken.initializer:
        constant, _ = g.make_constant(tensor_value(tensor), name=tensor.name)
        made.append(constant)
    for inner in taken.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(inner)
        copy.name = g.unique_name(f"{node.name}_{inner.name}" if inner.name else node.name)
        made.append(copy)
    return made, [o.name for o in taken.output]


def _rank_matters(body: onnx.GraphProto) -> bool:
    """True when the body declares its iteration number or condition with a rank other than 0 (onnxruntime then
    passes one element of rank 1, the spec a scalar) and reads it where the rank shows: anything but an If's
    condition, or returned by the body (the condition may go back as the next condition)."""
    for k, info in enumerate(body.input[:2]):
        shape = info.type.tensor_type.shape if info.type.tensor_type.HasField("shape") else None
        if shape is not None and len(shape.dim) == 0:
            continue
        returned = [o.name for o in body.output[1:]] if k == 1 else [o.name for o in body.output]
        if info.name in returned or any(info.name in node_captures(n) for n in body.node):
            return True
        if any(info.name in n.input and n.op_type != "If" for n in body.node):
            return True
    return False


class SingleTripLoopPattern(Pattern):
    """Loop(1, true, v...) -> its body run once in the graph: the iteration number a constant 0, the condition
    a constant true, each carried input its initial value; each final value is the body's result for it and
    each scan output that result with a leading axis of 1 (Unsqueeze). Needs a constant trip count of 1 and a
    condition that is absent or a constant true, and a body that reads neither its iteration number nor its
    condition where their rank shows unless it declares them scalars."""

    op_types = ("Loop",)
    priority = STRUCTURE

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        trips = g.constant(node.input[0]) if node.input[0] else None
        if trips is None or trips.size != 1 or int(trips.reshape(-1)[0]) != 1:
            return None
        cond = g.constant(node.input[1]) if len(node.input) > 1 and node.input[1] else np.array(True)
        if cond is None or cond.size != 1 or not bool(cond.reshape(-1)[0]):
            return self.decline(g, node, "its condition is not a constant true")
        body = g.attribute(node, "body")
        if body is None or len(body.input) != len(node.input) or len(body.sparse_initializer):
            return self.decline(g, node, "its body does not match its inputs or has sparse initializers")
        if _rank_matters(body):
            return self.decline(g, node, "the body reads its iteration number or condition, declared not as scalars")
        self.because(g, node, f"{node.input[0]} = 1")
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        body = g.attribute(node, "body")
        first = g.make_constant(np.array(0, dtype=np.int64), "iteration")
        go = g.make_constant(np.array(True), "cond")
        bound = {body.input[0].name: first[1], body.input[1].name: go[1]}
        bound.update((inp.name, outer) for inp, outer in zip(body.input[2:], node.input[2:]))
        made, outputs = inline(g, node, body, bound)
        made[:0] = [first[0], go[0]]
        carried = len(node.input) - 2
        for k, (out, source) in enumerate(zip(node.output, outputs[1:])):
            if not out:
                continue
            if k < carried:
                made.append(identity(g, source, out))
            else:
                constants, extra, attrs = axes_input(g, [0], "axes")
                made.extend(constants)
                made.append(g.make_node("Unsqueeze", [source, *extra], [out], **attrs))
        return made
