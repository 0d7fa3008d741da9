"""Shapes known before running: Shape of a static tensor, and Gather of its known dims, become constants."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir import Built, Node
from ..pattern import SIMPLIFY, MatchResult, Pattern
from ..state import GraphState
from .common import ChainPattern, int_constant


def shape_dims(g: GraphState, node: Node) -> tuple | None:
    """The dims a Shape node returns (its start/end attributes applied), None if the input's rank is unknown."""
    dims = g.shape(node.input[0])
    if dims is None:
        return None
    start, end = g.attribute(node, "start", 0), g.attribute(node, "end")
    return tuple(dims[slice(start, end)])


class StaticShapePattern(Pattern):
    """Shape(x) -> constant, when every dim it returns is known (outside Loop/Scan bodies, whose shapes may
    change from one iteration to the next)."""

    op_types = ("Shape",)
    priority = SIMPLIFY

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        dims = shape_dims(g, node)
        if dims is None or not all(isinstance(d, int) for d in dims):
            return None
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        value = np.array(shape_dims(g, node), dtype=np.int64)
        constant, _ = g.make_constant(value, name=node.output[0])
        return [constant]


class ShapeGatherPattern(ChainPattern):
    """Gather(Shape(x), i) -> constant, when i is a constant and every dim it selects is known (others may be
    symbolic). The Shape stays when something else reads it."""

    op_types = ("Gather",)
    inner_ops = ("Shape",)
    priority = SIMPLIFY

    @staticmethod
    def _selected(g: GraphState, shape: Node, node: Node) -> np.ndarray | None:
        indices = int_constant(g, node.input[1])
        dims = shape_dims(g, shape)
        if indices is None or dims is None:
            return None
        n = len(dims)
        if indices.size and (indices.min() < -n or indices.max() >= n):
            return None
        picked = np.asarray(np.array(dims, dtype=object)[indices], dtype=object)
        if not all(isinstance(d, int) for d in picked.reshape(-1)):
            return None
        return picked.astype(np.int64)

    def check(self, g: GraphState, shape: Node, node: Node) -> str | None:
        if g.attribute(node, "axis", 0) not in (0, -1):
            return ""
        return None if self._selected(g, shape, node) is not None else "a selected dim is not known"

    def rewrite(self, g: GraphState, shape: Node, node: Node) -> Sequence[Built]:
        constant, _ = g.make_constant(self._selected(g, shape, node), name=node.output[0])
        return [constant]
