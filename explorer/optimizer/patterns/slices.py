"""A Slice of a Slice becomes one Slice of the original tensor."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir import Built, Node
from ..pattern import SIMPLIFY
from ..state import GraphState
from .common import ChainPattern, shape_fact
from .noop import slice_params

Ranges = dict[int, tuple[int, int, int]]  # axis -> (start, end, step)


def _ranges(g: GraphState, node: Node, rank: int | None) -> Ranges | None:
    """A Slice's constant parameters per (non-negative) axis; None when not constant or an axis repeats."""
    params = slice_params(g, node)
    if params is None:
        return None
    starts, ends, axes, steps = params
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if any(a < 0 for a in axes):
        if rank is None:
            return None
        axes = [a + rank if a < 0 else a for a in axes]
    if len(set(axes)) != len(axes) or not len(starts) == len(ends) == len(axes) == len(steps):
        return None
    return {a: (s, e, t) for a, s, e, t in zip(axes, starts, ends, steps)}


def _clamp(start: int, end: int, dim: int) -> tuple[int, int]:
    """[start, end) of a step-1 slice of a dim of `dim`, as ONNX resolves negative and out-of-range bounds."""
    start, end = (v + dim if v < 0 else v for v in (start, end))
    return min(max(start, 0), dim), min(max(end, 0), dim)


class SliceSlicePattern(ChainPattern):
    """Slice(Slice(x, s1, e1, axes1, steps1), s2, e2, axes2, steps2) -> Slice(x, s, e, axes, steps): axes only one
    of them slices keep that one's range; an axis both slice, with steps 1 and x's dim d known, takes
    [b1 + b2, b1 + max(b2, f2)) where [b1, f1) is the first range clamped to d and [b2, f2) the second clamped to
    f1 - b1. Needs constant parameters (opset >= 10). The inner Slice stays when something else reads it."""

    op_types = ("Slice",)
    inner_ops = ("Slice",)
    priority = SIMPLIFY

    def _merged(self, g: GraphState, inner: Node, node: Node) -> Ranges | str:
        if g.opset() < 10:
            return ""
        x = inner.input[0]
        shape = g.shape(x)
        rank = None if shape is None else len(shape)
        first, second = _ranges(g, inner, rank), _ranges(g, node, rank)
        if first is None or second is None:
            return "a Slice's parameters are not constant"
        merged = {**first, **second}
        for axis in first.keys() & second.keys():
            (s1, e1, t1), (s2, e2, t2) = first[axis], second[axis]
            dim = shape[axis] if shape is not None and axis < len(shape) else None
            if t1 != 1 or t2 != 1:
                return f"both slice axis {axis} with a step other than 1"
            if not isinstance(dim, int):
                return f"both slice axis {axis}, whose size is not known"
            b1, f1 = _clamp(s1, e1, dim)
            b2, f2 = _clamp(s2, e2, max(f1 - b1, 0))
            merged[axis] = (b1 + b2, b1 + max(b2, f2), 1)
        return merged

    def check(self, g: GraphState, inner: Node, node: Node) -> str | None:
        merged = self._merged(g, inner, node)
        if isinstance(merged, str):
            return merged
        self.because(g, node, shape_fact(g, inner.input[0]))
        return None

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        merged = self._merged(g, inner, node)
        assert not isinstance(merged, str)  # check() declined otherwise
        axes = sorted(merged)
        columns = [[merged[a][k] for a in axes] for k in range(3)]
        names = [g.make_weight(np.array(v, dtype=np.int64), label)
                 for v, label in zip((columns[0], columns[1], axes, columns[2]), ("starts", "ends", "axes", "steps"))]
        return [g.make_node("Slice", [inner.input[0], *names], [node.output[0]])]
