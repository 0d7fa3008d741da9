"""Control flow: If with a constant condition inlined."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx

from ..ir import Built, Node
from ..pattern import SIMPLIFY, MatchResult, Pattern
from ..scope import graph_definitions, rename_in_graph
from ..state import GraphState
from .common import identity


class IfConstantPattern(Pattern):
    """If(c) then A else B -> the nodes of A (c true) or B (c false), when c is a constant with one element.
    Every value the branch defines gets a fresh name; each If output becomes an Identity of the matching branch
    output (IdentityRemoval then removes them). Branches with sparse initializers are declined."""

    op_types = ("If",)
    priority = SIMPLIFY

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        cond = g.constant(node.input[0])
        if cond is None:
            return None
        if cond.size != 1:
            return self.decline(g, node, f"the condition holds {cond.size} elements")
        branch = self._branch(g, node)
        if branch is None or len(branch.output) != len(node.output):
            return self.decline(g, node, "the branch does not match the If's outputs")
        if len(branch.sparse_initializer):
            return self.decline(g, node, "the branch has sparse initializers")
        return self.result([node])

    @staticmethod
    def _branch(g: GraphState, node: Node) -> onnx.GraphProto | None:
        name = "then_branch" if bool(np.asarray(g.constant(node.input[0])).reshape(-1)[0]) else "else_branch"
        return next((a.g for a in node.attribute if a.name == name), None)

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        branch = onnx.GraphProto()
        branch.CopyFrom(self._branch(g, node))
        rename_in_graph(branch, {name: g.unique_name(name) for name in graph_definitions(branch)})
        for info in [*branch.value_info, *branch.output]:
            if info.HasField("type"):
                g.set_type(info.name, info.type)
        made = []
        for tensor in branch.initializer:
            constant, _ = g.make_constant(onnx.numpy_helper.to_array(tensor), name=tensor.name)
            made.append(constant)
        for inner in branch.node:
            copy = onnx.NodeProto()
            copy.CopyFrom(inner)
            copy.name = g.unique_name(f"{node.name}_{inner.name}" if inner.name else node.name)
            made.append(copy)
        for out, source in zip(node.output, branch.output):
            if out:
                made.append(identity(g, source.name, out))
        return made
