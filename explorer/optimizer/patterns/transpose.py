"""Transpose rules: Transpose∘Transpose composed into one (or none), identity Transpose removed."""
from __future__ import annotations

from collections.abc import Sequence

from ..ir import Built, Node
from ..pattern import CLEANUP, SIMPLIFY, MatchResult, Pattern
from ..state import GraphState
from .common import ChainPattern, identity


def perm_of(g: GraphState, node: Node) -> list[int] | None:
    """The permutation of a Transpose (default: reversed dims, which needs the input's rank)."""
    perm = g.attribute(node, "perm")
    if perm is not None:
        return [int(p) for p in perm]
    rank = g.rank(node.input[0])
    return None if rank is None else list(reversed(range(rank)))


class TransposeTransposePattern(ChainPattern):
    """Transpose(Transpose(x, p1), p2) -> Transpose(x, p) with p[i] = p1[p2[i]], or x itself when p is the
    identity. The inner Transpose stays when something else reads its output."""

    op_types = inner_ops = ("Transpose",)
    priority = SIMPLIFY

    def check(self, g: GraphState, inner: Node, node: Node) -> str | None:
        p1, p2 = perm_of(g, inner), perm_of(g, node)
        if p1 is None or p2 is None:
            return "a permutation depends on an unknown rank"
        return "permutations of different lengths" if len(p1) != len(p2) else None

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        p1, p2 = perm_of(g, inner), perm_of(g, node)
        assert p1 is not None and p2 is not None  # check() declined otherwise
        perm = [p1[i] for i in p2]
        if perm == list(range(len(perm))):
            return [identity(g, inner.input[0], node.output[0])]
        return [g.make_node("Transpose", [inner.input[0]], [node.output[0]], perm=perm)]


class IdentityTransposePattern(Pattern):
    """Transpose(x, perm=[0, 1, ..., n-1]) -> x (also a default perm on a tensor of rank 0 or 1)."""

    op_types = ("Transpose",)
    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        perm = perm_of(g, node)
        if perm is None or perm != list(range(len(perm))):
            return None
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        return [identity(g, node.input[0], node.output[0])]
