"""Gather rules. GatherConcat and GatherGather follow the xoptim patterns of the same name."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir import Built, Node
from ..pattern import SIMPLIFY
from ..state import GraphState
from .common import ChainPattern


def _int_indices(g: GraphState, name: str) -> np.ndarray | None:
    value = g.constant(name)
    if value is None or value.dtype not in (np.int64, np.int32):
        return None
    return value


class GatherConcatPattern(ChainPattern):
    """Gather(Concat(..., X, ..., axis=0), cst1) -> Gather(X, cst2) where X is a 1D tensor and cst1, cst2 are 0D
    or 1D integer tensors.

    Applies when the Concat axis is 0; exactly one Concat input (X) is not a constant and all others are
    constants with known sizes; cst1 is a constant 0D or 1D int64 (or int32) tensor with non-negative values;
    all indices in cst1 fall within X's slice of the concatenated tensor (when constants follow X, X's size must
    be known to check it). cst2 = cst1 - offset, offset being the total size of the constants before X. The
    Concat stays when something else reads it."""

    op_types = ("Gather",)
    inner_ops = ("Concat",)
    priority = SIMPLIFY

    def check(self, g: GraphState, concat: Node, node: Node) -> str | None:
        if g.attribute(node, "axis", 0) != 0:
            return ""
        cst1 = _int_indices(g, node.input[1])
        if cst1 is None or cst1.ndim > 1:
            return "indices are not a constant 0D/1D integer tensor"
        if g.attribute(concat, "axis", 0) != 0:
            return "the Concat axis is not 0"
        variable = [name for name in concat.input if not g.is_constant(name)]
        if len(variable) != 1:
            return f"{len(variable)} Concat inputs are not constant (exactly one must be)"
        x = variable[0]
        if g.rank(x) != 1:
            return f"{x!r} is not known to be 1D"
        position = list(concat.input).index(x)
        offset = self._offset(g, concat, position)
        size = None
        if concat.input[position + 1:]:
            shape = g.static_shape(x)
            if shape is None:
                return f"constants follow {x!r}, whose size is unknown"
            size = shape[0]
        indices = np.atleast_1d(cst1).reshape(-1)
        if not np.all(indices >= offset):
            return "an index points before X (negative indices are not handled)"
        if size is not None and not np.all(indices < offset + size):
            return "an index points after X"
        return None

    @staticmethod
    def _offset(g: GraphState, concat: Node, position: int) -> int:
        return sum(len(np.asarray(g.constant(name))) for name in concat.input[:position])

    def rewrite(self, g: GraphState, concat: Node, node: Node) -> Sequence[Built]:
        x = next(name for name in concat.input if not g.is_constant(name))
        offset = self._offset(g, concat, list(concat.input).index(x))
        cst1 = g.constant(node.input[1])
        assert cst1 is not None  # check() declined otherwise
        constant, cst2 = g.make_constant(np.asarray(cst1 - offset, dtype=cst1.dtype), "gather_indices")
        return [constant, g.make_node("Gather", [x, cst2], [node.output[0]], axis=0)]


class GatherGatherPattern(ChainPattern):
    """Gather(Gather(X, cst1, axis=0), cst2, axis=0) -> Gather(X, cst3, axis=0) with cst3 = cst1[cst2].

    Applies when both Gathers use axis 0, the inner indices cst1 are a constant 1-D integer array and the outer
    indices cst2 a constant integer tensor of any shape (each within [-len(cst1), len(cst1))). The inner Gather
    stays when something else reads it."""

    op_types = inner_ops = ("Gather",)
    priority = SIMPLIFY

    def check(self, g: GraphState, inner: Node, node: Node) -> str | None:
        if g.attribute(node, "axis", 0) != 0:
            return ""
        cst2 = _int_indices(g, node.input[1])
        if cst2 is None:
            return "outer indices are not a constant integer tensor"
        if g.attribute(inner, "axis", 0) != 0:
            return "the inner Gather axis is not 0"
        cst1 = _int_indices(g, inner.input[1])
        if cst1 is None or cst1.ndim != 1:
            return "inner indices are not a constant 1-D integer array"
        k = cst1.shape[0]
        if cst2.size and (cst2.min() < -k or cst2.max() >= k):
            return "outer indices fall outside the inner result"
        return None

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        cst1, cst2 = g.constant(inner.input[1]), g.constant(node.input[1])
        assert cst1 is not None and cst2 is not None  # check() declined otherwise
        constant, cst3 = g.make_constant(np.asarray(cst1[cst2], dtype=np.int64), "gather_indices")
        return [constant, g.make_node("Gather", [inner.input[0], cst3], [node.output[0]], axis=0)]
