"""Concat rules: Concat of a single input removed, nested Concats on the same axis flattened."""
from __future__ import annotations

from collections.abc import Sequence

from ..ir import Built, Node
from ..pattern import CLEANUP, SIMPLIFY, MatchResult, Pattern
from ..state import GraphState
from .common import identity


class ConcatSinglePattern(Pattern):
    """Concat(x) -> x (a Concat of one input copies it)."""

    op_types = ("Concat",)
    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        if len([i for i in node.input if i]) != 1:
            return None
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        return [identity(g, next(i for i in node.input if i), node.output[0])]


class ConcatConcatPattern(Pattern):
    """Concat(a, Concat(b, c, axis=k), d, axis=k) -> Concat(a, b, c, d, axis=k): inner Concats on the same axis
    whose output nothing else reads are flattened into the outer one (negative axes need a known rank)."""

    op_types = ("Concat",)
    priority = SIMPLIFY

    def _inner(self, g: GraphState, node: Node) -> list[Node]:
        rank = g.rank(node.output[0])
        axis = g.attribute(node, "axis")
        found: list[Node] = []
        for name in node.input:
            inner = g.producer_op(name, "Concat")
            if inner is None:
                continue
            if g.is_used_more_than_once(name) or any(f is inner for f in found):
                continue
            other = g.attribute(inner, "axis")
            if other == axis or (rank is not None and other % rank == axis % rank):
                found.append(inner)
        return found

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        inner = self._inner(g, node)
        if not inner:
            return None
        return self.result([*inner, node])

    def apply(self, g: GraphState, *nodes: Node) -> Sequence[Built]:
        *inner, node = nodes
        by_output = {n.output[0]: n for n in inner}
        inputs: list[str] = []
        for name in node.input:
            inputs.extend(by_output[name].input if name in by_output else [name])
        return [g.make_node("Concat", inputs, [node.output[0]], axis=g.attribute(node, "axis"))]
