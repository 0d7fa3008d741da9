"""Expand and Slice that leave their input as it is; reductions over dims of size 1."""
from __future__ import annotations

from collections.abc import Sequence

from ..ir import Built, Node
from ..pattern import CLEANUP, MatchResult, Pattern
from ..state import GraphState
from .common import axes, axes_input, identity, int_constant, normalize, shape_fact

# Slice ends at or beyond this are "to the end" whatever the dim (exporters write INT32_MAX or INT64_MAX).
END_OF_AXIS = 2**31 - 1


class NoOpExpandPattern(Pattern):
    """Expand(x, s) -> x when s is constant, has no more dims than x, and each of its entries is 1 or the known
    size of x's aligned dim."""

    op_types = ("Expand",)
    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        shape = int_constant(g, node.input[1])
        if shape is None:
            return None
        target = shape.reshape(-1).tolist()
        dims = g.shape(node.input[0])
        if dims is None:
            if all(t == 1 for t in target):
                return self.decline(g, node, "the input's rank is unknown")
            return None
        if len(target) > len(dims):
            return None
        for want, have in zip(target, dims[len(dims) - len(target):]):
            if want != 1 and want != have:
                return None
        self.because(g, node, shape_fact(g, node.input[0]))
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        return [identity(g, node.input[0], node.output[0])]


def slice_params(g: GraphState, node: Node) -> tuple[list[int], list[int], list[int] | None,
                                                                 list[int] | None] | None:
    """(starts, ends, axes, steps) of a Slice, from inputs (opset >= 10) or attributes; None if not constant."""
    if g.opset() < 10:
        starts, ends = g.attribute(node, "starts"), g.attribute(node, "ends")
        if starts is None or ends is None:
            return None
        return list(starts), list(ends), g.attribute(node, "axes"), None
    values: list[list[int] | None] = []
    for k in range(1, 5):
        name = node.input[k] if len(node.input) > k else ""
        if not name:
            values.append(None)
            continue
        value = int_constant(g, name)
        if value is None:
            return None
        values.append([int(v) for v in value.reshape(-1)])
    starts, ends, axes, steps = values
    if starts is None or ends is None:
        return None
    return starts, ends, axes, steps


class NoOpSlicePattern(Pattern):
    """Slice(x, starts, ends, axes, steps) -> x when, on every sliced axis, the step is 1, the start is 0 (or
    clamps to 0) and the end reaches the end of the axis. Needs constant parameters."""

    op_types = ("Slice",)
    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        params = slice_params(g, node)
        if params is None:
            return None
        starts, ends, axes, steps = params
        dims = g.shape(node.input[0])
        rank = None if dims is None else len(dims)
        axes = list(range(len(starts))) if axes is None else axes
        steps = [1] * len(starts) if steps is None else steps
        for start, end, axis, step in zip(starts, ends, axes, steps):
            if axis < 0:
                if rank is None:
                    return self.decline(g, node, "negative axis on a tensor of unknown rank")
                axis += rank
            dim = dims[axis] if dims is not None and 0 <= axis < len(dims) else None
            size = dim if isinstance(dim, int) else None
            if step != 1:
                return None
            if start != 0 and not (start < 0 and size is not None and start <= -size):
                return None
            if end < END_OF_AXIS and not (size is not None and end >= size):
                return None
        if dims is not None:
            self.because(g, node, shape_fact(g, node.input[0]))
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        return [identity(g, node.input[0], node.output[0])]


# Reductions that give back the one element they reduce (ReduceL1, ReduceL2 etc. would take its absolute value).
SINGLE_ELEMENT_REDUCTIONS = ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd")


class ReduceOverOnesPattern(Pattern):
    """Reduce{Mean,Max,Min,Sum,Prod}(x, axes) -> Squeeze(x, axes) (keepdims=0) or x (keepdims=1) when every
    reduced dim of x is known to be 1. Needs explicit constant axes."""

    op_types = SINGLE_ELEMENT_REDUCTIONS
    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        found = axes(g, node)
        if not found:
            return None
        dims = g.shape(node.input[0])
        reduced = None if dims is None else normalize(found, len(dims))
        if dims is None or reduced is None or any(not 0 <= a < len(dims) for a in reduced):
            return self.decline(g, node, "the input's rank is unknown")
        if any(dims[a] != 1 for a in reduced):
            return None
        self.because(g, node, shape_fact(g, node.input[0]))
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        if g.attribute(node, "keepdims", 1):
            return [identity(g, node.input[0], node.output[0])]
        reduced = normalize(axes(g, node) or [], g.rank(node.input[0]))
        assert reduced is not None  # match checked the rank
        consts, extra, attrs = axes_input(g, sorted(reduced), "squeeze_axes")
        return consts + [g.make_node("Squeeze", [node.input[0], *extra], [node.output[0]], **attrs)]
