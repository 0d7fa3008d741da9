"""Common subexpressions: identical sibling nodes computed once."""
from __future__ import annotations

from collections.abc import Sequence

from ..ir import Built, Node
from ..pattern import STRUCTURE, MatchResult, Pattern
from ..state import GraphState
from ..tensors import NONDETERMINISTIC
from .common import identity


def signature(node: Node) -> tuple:
    """What makes two nodes compute the same thing: operator, inputs in order, attributes."""
    attributes = tuple(sorted((a.name, a.SerializeToString(deterministic=True)) for a in node.attribute))
    return node.domain or "", node.op_type, tuple(node.input), attributes


class CommonSubexpressionPattern(Pattern):
    """b = op(x, ...) next to an earlier a = op(x, ...) with the same operator, inputs and attributes -> readers of
    b read a (b's graph outputs become Identity(a)). ONNX-domain nodes without bodies; random operators stay."""

    priority = STRUCTURE

    def _twin(self, g: GraphState, node: Node) -> Node | None:
        if (node.domain not in ("", "ai.onnx") or node.op_type in NONDETERMINISTIC or not node.input
                or not node.input[0] or node.has_body()):
            return None
        mine = None
        where = node.pos
        for other in g.consumers(node.input[0]):
            if other is node or other.op_type != node.op_type or other.pos > where:
                continue
            mine = mine or signature(node)
            if signature(other) == mine and len(other.output) == len(node.output):
                return other
        return None

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        twin = self._twin(g, node)
        if twin is None:
            return None
        for mine, theirs in zip(node.output, twin.output):
            if mine and not theirs:
                return self.decline(g, node, f"its twin {twin.name!r} does not produce the optional output")
            if mine and g.is_captured(mine):
                return self.decline(g, node, f"{mine!r} is read by a body")
        return self.result([twin, node])

    def apply(self, g: GraphState, twin: Node, node: Node) -> Sequence[Built]:
        made = [twin]
        for mine, theirs in zip(node.output, twin.output):
            if not mine:
                continue
            if g.is_output(mine):
                made.append(identity(g, theirs, mine))
            else:
                g.replace_uses(mine, theirs)
        return made
