"""Common subexpressions: identical sibling nodes computed once."""
from __future__ import annotations

from collections.abc import Sequence

from ...budgets import CSE_COMPARED_ELEMENTS
from ...spec.random_ops import NONDETERMINISTIC  # never folded, merged or moved
from ..ir import Built, Node
from ..pattern import STRUCTURE, MatchResult, Pattern
from ..state import GraphState
from .common import identity


def signature(g: GraphState, node: Node) -> tuple:
    """What makes two nodes compute the same thing: operator, inputs in order (a small constant by its value, so
    two Unsqueezes reading equal axes from different Constant nodes match), attributes."""
    attributes = tuple(sorted((a.name, a.SerializeToString(deterministic=True)) for a in node.attribute))
    return node.domain or "", node.op_type, tuple(_input_key(g, name) for name in node.input), attributes


def _input_key(g: GraphState, name: str) -> object:
    kind = g.constant_kind(name) if name else None
    if kind is None or kind[1] > CSE_COMPARED_ELEMENTS:
        return name
    value = g.constant(name)
    return name if value is None else (value.dtype.str, value.shape, value.tobytes())


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
            mine = mine or signature(g, node)
            if signature(g, other) == mine and len(other.output) == len(node.output):
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
