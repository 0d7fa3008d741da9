"""Reshape rules: Reshape∘Reshape collapsed, Reshape to the same shape removed."""
from __future__ import annotations

from collections.abc import Sequence

from ..ir import Built, Node
from ..pattern import CLEANUP, SIMPLIFY, MatchResult, Pattern
from ..state import GraphState
from .common import ChainPattern, identity, int_constant, rewired, same_dim, shape_fact


class ReshapeReshapePattern(ChainPattern):
    """Reshape(Reshape(x, s1), s2) -> Reshape(x, s2) when s2 is constant and copies no dim from the intermediate
    (no 0 in s2, unless allowzero=1 makes 0 a real size); likewise when the inner node is a Squeeze, Unsqueeze or
    Flatten (each keeps the elements in order). The inner node stays when something else reads it."""

    op_types = ("Reshape",)
    inner_ops = ("Reshape", "Squeeze", "Unsqueeze", "Flatten")
    priority = SIMPLIFY

    def check(self, g: GraphState, inner: Node, node: Node) -> str | None:
        if len(node.input) < 2:
            return "shape given as an attribute (opset < 5)"
        shape = int_constant(g, node.input[1])
        if shape is None:
            return "the outer shape is not constant"
        if 0 in shape.tolist() and not g.attribute(node, "allowzero", 0):
            return "the outer shape copies a dim (0) from the intermediate"
        return None

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        return [rewired(node, inner.input[0])]


class NoOpReshapePattern(Pattern):
    """Reshape(x, s) -> x when s gives x's own shape: every entry is the same known dim, a 0 copying it, or a
    single -1 standing for the only remaining dim (x must have no zero-sized dim)."""

    op_types = ("Reshape",)
    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        if len(node.input) < 2:
            return None
        shape = int_constant(g, node.input[1])
        if shape is None:
            return None
        dims = g.shape(node.input[0])
        if dims is None:
            return self.decline(g, node, "the input's shape is unknown")
        target = shape.reshape(-1).tolist()
        if len(target) != len(dims) or any(d == 0 for d in dims) or target.count(-1) > 1:
            return None
        allowzero = g.attribute(node, "allowzero", 0)
        for want, have in zip(target, dims):
            ok = want == -1 or (want == 0 and not allowzero) or same_dim(want, have)
            if not ok:
                return None
        self.because(g, node, shape_fact(g, node.input[0]))
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        return [identity(g, node.input[0], node.output[0])]
