"""Identity removal and dead-node removal: the cleanups every other rewrite relies on."""
from __future__ import annotations

from collections.abc import Sequence

from ..ir import Built, Node
from ..pattern import CLEANUP, MatchResult, Pattern
from ..state import GraphState


class IdentityRemovalPattern(Pattern):
    """y = Identity(x) -> readers of y read x.

    When y is a graph or body output its name stays: x's producer then writes y itself (x must be produced in
    this graph and be neither a graph output nor read by a body). Declined when y is read by a body, or when y is
    an output and x an input or an outer value (a body must not return an outer value directly)."""

    op_types = ("Identity",)
    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        x, y = node.input[0], node.output[0]
        if g.is_captured(y):
            return self.decline(g, node, f"{y!r} is read by a body")
        if not g.is_output(y):
            return self.result([None, node])  # no producer to rewrite: its position stays empty
        producer = g.producer(x)
        if producer is None:
            return self.decline(g, node, f"{y!r} is a graph output and {x!r} is not produced in this graph")
        if g.is_output(x) or g.is_captured(x):
            return self.decline(g, node, f"{y!r} and {x!r} are both needed under their names")
        return self.result([producer, node])

    def apply(self, g: GraphState, producer: Node | None, node: Node) -> Sequence[Built]:
        x, y = node.input[0], node.output[0]
        if producer is None:
            g.replace_uses(y, x)
            return []
        g.replace_uses(x, y)
        renamed = producer.copy()
        for i, name in enumerate(renamed.output):
            if name == x:
                renamed.output[i] = y
        return [renamed]


class DeadNodePattern(Pattern):
    """A node none of whose outputs is read (by a node, a body or as a graph output) -> nothing."""

    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        return self.result([node]) if g.is_dead(node) else None

    def apply(self, g: GraphState, *nodes: Node) -> Sequence[Built]:
        return []
