"""Control flow: If with a condition known before running inlined (see branches.py for how it is known)."""
from __future__ import annotations

from collections.abc import Sequence

import onnx

from ..ir import Built, Node
from ..pattern import SIMPLIFY, MatchResult, Pattern
from ..scope import graph_definitions, rename_in_graph
from ..state import GraphState
from .branches import branch, decided
from .common import identity


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
        taken = onnx.GraphProto()
        taken.CopyFrom(branch(node, found[0]))
        rename_in_graph(taken, {name: g.unique_name(name) for name in graph_definitions(taken)})
        for info in [*taken.value_info, *taken.output]:
            if info.HasField("type"):
                g.set_type(info.name, info.type)
        made = []
        for tensor in taken.initializer:
            constant, _ = g.make_constant(onnx.numpy_helper.to_array(tensor), name=tensor.name)
            made.append(constant)
        for inner in taken.node:
            copy = onnx.NodeProto()
            copy.CopyFrom(inner)
            copy.name = g.unique_name(f"{node.name}_{inner.name}" if inner.name else node.name)
            made.append(copy)
        for out, source in zip(node.output, taken.output):
            if out:
                made.append(identity(g, source.name, out))
        return made
