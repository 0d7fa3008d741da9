"""Neutral elements: x+0, 0+x, x-0, x*1, 1*x, x/1 -> x (as an Identity, which IdentityRemoval then removes)."""
from __future__ import annotations

from typing import ClassVar

import numpy as np
import onnx

from ..pattern import CLEANUP, MatchResult, Pattern
from ..state import GraphState
from .common import broadcast_keeps_shape, identity


class _Neutral(Pattern):
    """Base of the neutral-element rules: `neutral` is the constant, `positions` where it may stand."""

    neutral: ClassVar[float] = 0
    positions: ClassVar[tuple[int, ...]] = (1,)
    priority = CLEANUP

    def _is_neutral(self, value: np.ndarray | None) -> bool:
        if value is None or value.dtype.kind not in "biuf":
            return False
        return value.item() == self.neutral if value.size == 1 else bool((value == self.neutral).all())

    def match(self, g: GraphState, node: onnx.NodeProto, matched: list[MatchResult]) -> MatchResult | None:
        for k in self.positions:
            value = g.constant(node.input[k])
            if not self._is_neutral(value):
                continue
            why = broadcast_keeps_shape(g, node.input[1 - k], value)
            if why is not None:
                return self.decline(g, node, why)
            return self.result([node])
        return None

    def apply(self, g: GraphState, node: onnx.NodeProto) -> list[onnx.NodeProto]:
        for k in self.positions:
            if self._is_neutral(g.constant(node.input[k])):
                return [identity(g, node.input[1 - k], node.output[0])]
        raise AssertionError("apply called without a match")


class AddZeroPattern(_Neutral):
    """Add(x, 0) or Add(0, x) -> x, when the zero constant does not broadcast x to a larger shape."""

    op_types = ("Add",)
    neutral, positions = 0, (1, 0)


class SubZeroPattern(_Neutral):
    """Sub(x, 0) -> x, when the zero constant does not broadcast x to a larger shape."""

    op_types = ("Sub",)
    neutral, positions = 0, (1,)


class MulOnePattern(_Neutral):
    """Mul(x, 1) or Mul(1, x) -> x, when the constant one does not broadcast x to a larger shape."""

    op_types = ("Mul",)
    neutral, positions = 1, (1, 0)


class DivOnePattern(_Neutral):
    """Div(x, 1) -> x, when the constant one does not broadcast x to a larger shape."""

    op_types = ("Div",)
    neutral, positions = 1, (1,)
