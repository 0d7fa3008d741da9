"""Squeeze/Unsqueeze rules: Unsqueeze∘Unsqueeze merged, Squeeze and Unsqueeze of the same axes cancelled."""
from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ..ir import Built, Node
from ..pattern import CLEANUP, SIMPLIFY
from ..state import GraphState
from .common import ChainPattern, axes, axes_input, identity, normalize
from .noop import slice_params


def _merged_axes(a1: list[int], a2: list[int], rank: int | None) -> list[int] | None:
    """Axes of one Unsqueeze doing Unsqueeze(Unsqueeze(x, a1), a2), for x of `rank` (None if unknown)."""
    middle = None if rank is None else rank + len(a1)
    final = None if middle is None else middle + len(a2)
    n1, n2 = normalize(a1, middle), normalize(a2, final)
    if n1 is None or n2 is None or len(set(n1)) != len(n1) or len(set(n2)) != len(n2):
        return None
    second = set(n2)
    # the intermediate's dims land, in order, on the final positions the second Unsqueeze leaves free
    free = list(itertools.islice((i for i in itertools.count() if i not in second), max(n1, default=-1) + 1))
    return sorted(second | {free[p] for p in n1})


class UnsqueezeUnsqueezePattern(ChainPattern):
    """Unsqueeze(Unsqueeze(x, a1), a2) -> Unsqueeze(x, a) where a holds the final positions of all new dims.
    Needs constant axes (and x's rank when an axis is negative); the inner node stays when also read elsewhere."""

    op_types = inner_ops = ("Unsqueeze",)
    priority = SIMPLIFY

    def check(self, g: GraphState, inner: Node, node: Node) -> str | None:
        a1, a2 = axes(g, inner), axes(g, node)
        if a1 is None or a2 is None:
            return "axes are not constant"
        if _merged_axes(a1, a2, g.rank(inner.input[0])) is None:
            return "negative axes on a tensor of unknown rank"
        return None

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        a1, a2 = axes(g, inner), axes(g, node)
        assert a1 is not None and a2 is not None  # check() declined otherwise
        merged = _merged_axes(a1, a2, g.rank(inner.input[0]))
        assert merged is not None  # check() declined otherwise
        consts, extra, attrs = axes_input(g, merged, "unsqueeze_axes")
        return consts + [g.make_node("Unsqueeze", [inner.input[0], *extra], [node.output[0]], **attrs)]


class SqueezeUnsqueezePattern(ChainPattern):
    """Unsqueeze(Squeeze(x, a), a) -> x and Squeeze(Unsqueeze(x, a), a) -> x (same axes once made
    non-negative). Squeeze without axes, or negative axes on a tensor of unknown rank, are declined."""

    op_types = inner_ops = ("Squeeze", "Unsqueeze")
    priority = CLEANUP

    def check(self, g: GraphState, inner: Node, node: Node) -> str | None:
        if inner.op_type == node.op_type:
            return ""
        a_in, a_out = axes(g, inner), axes(g, node)
        if a_in is None or a_out is None:
            return "axes missing or not constant"
        rank = g.rank(inner.input[0])
        if node.op_type == "Squeeze" and rank is not None:  # both axes lists refer to the unsqueezed rank
            rank += len(a_in)
        first, second = normalize(a_in, rank), normalize(a_out, rank)
        if first is None or second is None:
            return "negative axes on a tensor of unknown rank"
        return None if sorted(first) == sorted(second) else ""

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        return [identity(g, inner.input[0], node.output[0])]


class SliceSqueezePattern(ChainPattern):
    """Squeeze(Slice(x, [k], [k+1], [a]), [a]) -> Gather(x, k, axis=a): one index taken along one axis, then that
    axis dropped, is a Gather of a scalar index. Needs constant parameters, a single axis, step 1 and k >= 0
    (negative axes need x's rank). The Slice stays when something else reads it."""

    op_types = ("Squeeze",)
    inner_ops = ("Slice",)
    priority = SIMPLIFY

    def _index(self, g: GraphState, inner: Node, node: Node) -> tuple[int, int] | str:
        params = slice_params(g, inner)
        if params is None:
            return "the Slice parameters are not constant"
        starts, ends, slice_axes, steps = params
        rank = g.rank(inner.input[0])
        sliced = normalize(list(slice_axes) if slice_axes is not None else [0], rank)
        squeezed = axes(g, node)
        squeezed = None if squeezed is None else normalize(squeezed, rank)
        if len(starts) != 1 or sliced is None or squeezed is None or squeezed != sliced:
            return ""
        if (steps or [1])[0] != 1 or starts[0] < 0 or ends[0] != starts[0] + 1:
            return "the Slice does not take exactly one index k >= 0 with step 1"
        return starts[0], sliced[0]

    def check(self, g: GraphState, inner: Node, node: Node) -> str | None:
        found = self._index(g, inner, node)
        return found if isinstance(found, str) else None

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        found = self._index(g, inner, node)
        assert not isinstance(found, str)
        index, axis = found
        constant, name = g.make_constant(np.array(index, dtype=np.int64), "gather_index")
        return [constant, g.make_node("Gather", [inner.input[0], name], [node.output[0]], axis=axis)]
