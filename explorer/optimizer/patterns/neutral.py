"""Neutral elements, one rule per row: op(x, neutral constant) -> x (as an Identity, which IdentityRemoval then
removes), when the constant does not broadcast x to a larger shape."""
from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from ..ir import Built, Node
from ..pattern import CLEANUP, MatchResult, Pattern
from ..state import GraphState
from .common import broadcast_keeps_shape, identity

# name, operator, neutral element, input positions where it may stand
NEUTRAL_RULES: tuple[tuple[str, str, float, tuple[int, ...]], ...] = (
    ("AddZero", "Add", 0, (1, 0)),  # x+0 -> x, 0+x -> x
    ("SubZero", "Sub", 0, (1,)),  # x-0 -> x
    ("MulOne", "Mul", 1, (1, 0)),  # x*1 -> x, 1*x -> x
    ("DivOne", "Div", 1, (1,)),  # x/1 -> x
    ("PowOne", "Pow", 1, (1,)),  # x**1 -> x
    ("AndTrue", "And", True, (1, 0)),  # x and True -> x, True and x -> x
    ("OrFalse", "Or", False, (1, 0)),  # x or False -> x, False or x -> x
)


class NeutralPattern(Pattern):
    """Base of the neutral-element rules: `neutral` is the constant, `positions` where it may stand."""

    neutral: ClassVar[float] = 0
    positions: ClassVar[tuple[int, ...]] = (1,)
    priority = CLEANUP

    def _is_neutral(self, value: np.ndarray | None) -> bool:
        if value is None or value.dtype.kind not in "biuf":
            return False
        return value.item() == self.neutral if value.size == 1 else bool((value == self.neutral).all())

    def _position(self, g: GraphState, node: Node) -> int | None:
        return next((k for k in self.positions if self._is_neutral(g.constant(node.input[k]))), None)

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        k = self._position(g, node)
        if k is None:
            return None
        value = g.constant(node.input[k])
        assert value is not None
        why = broadcast_keeps_shape(g, node.input[1 - k], value)
        if why is not None:
            return self.decline(g, node, why)
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        k = self._position(g, node)
        assert k is not None, "apply called without a match"
        return [identity(g, node.input[1 - k], node.output[0])]


def _rule(name: str, op: str, neutral: float, positions: tuple[int, ...]) -> type[NeutralPattern]:
    shown = str(neutral) if isinstance(neutral, bool) else f"{neutral:g}"
    sides = " or ".join(f"{op}({'x, ' if k else ''}{shown}{'' if k else ', x'})" for k in positions)
    doc = f"{sides} -> x, when the constant {shown} does not broadcast x to a larger shape."
    return type(f"{name}Pattern", (NeutralPattern,),
                {"op_types": (op,), "neutral": neutral, "positions": positions, "__doc__": doc,
                 "__module__": __name__})


NEUTRAL_PATTERNS: tuple[type[NeutralPattern], ...] = tuple(_rule(*row) for row in NEUTRAL_RULES)
