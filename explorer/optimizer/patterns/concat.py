"""Concat rules: Concat of a single input removed, nested Concats on the same axis flattened, a Slice of a Concat
read from the pieces it covers."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir import Built, Node
from ..pattern import CLEANUP, SIMPLIFY, MatchResult, Pattern
from ..state import GraphState
from .common import identity, normalize
from .noop import slice_params


class ConcatSinglePattern(Pattern):
    """Concat(x) -> x (a Concat of one input copies it)."""

    op_types = ("Concat",)
    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        if len([i for i in node.input if i]) != 1:
            return None
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        return [identity(g, next(i for i in node.input if i), node.output[0])]


class ConcatConcatPattern(Pattern):
    """Concat(a, Concat(b, c, axis=k), d, axis=k) -> Concat(a, b, c, d, axis=k): inner Concats on the same axis
    whose output nothing else reads are flattened into the outer one (negative axes need a known rank)."""

    op_types = ("Concat",)
    priority = SIMPLIFY

    def _inner(self, g: GraphState, node: Node) -> list[Node]:
        rank = g.rank(node.output[0])
        axis = g.attribute(node, "axis")
        found: list[Node] = []
        for name in node.input:
            inner = g.producer_op(name, "Concat")
            if inner is None:
                continue
            if g.is_used_more_than_once(name) or any(f is inner for f in found):
                continue
            other = g.attribute(inner, "axis")
            if other == axis or (rank is not None and other % rank == axis % rank):
                found.append(inner)
        return found

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        inner = self._inner(g, node)
        if not inner:
            return None
        return self.result([*inner, node])

    def apply(self, g: GraphState, *nodes: Node) -> Sequence[Built]:
        *inner, node = nodes
        by_output = {n.output[0]: n for n in inner}
        inputs: list[str] = []
        for name in node.input:
            inputs.extend(by_output[name].input if name in by_output else [name])
        return [g.make_node("Concat", inputs, [node.output[0]], axis=g.attribute(node, "axis"))]


class SliceConcatPattern(Pattern):
    """Slice(Concat(p0, ..., pn, axis=k), a:b on axis k, step 1) -> the pieces the range covers: a piece itself
    when wholly inside, a Slice of it when cut, joined by a Concat when more than one. Needs constant Slice
    parameters and every piece's size along k."""

    op_types = ("Slice",)
    priority = SIMPLIFY

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        concat = g.producer_op(node.input[0], "Concat")
        if concat is None or g.opset() < 10:
            return None
        found = self._parts(g, node, concat)
        if isinstance(found, str):
            return self.decline(g, node, found)
        return None if found is None else self.result([node])

    @staticmethod
    def _parts(g: GraphState, node: Node, concat: Node) -> list[tuple[str, int, int, int]] | str | None:
        """(piece, start, stop, its size) per piece the slice reads, a reason to decline, or None."""
        params = slice_params(g, node)
        if params is None:
            return None
        starts, ends, axes_, steps = params
        rank = g.rank(node.input[0])
        axis = normalize([g.attribute(concat, "axis")], rank)
        sliced = normalize(axes_ or [0], rank)
        if len(starts) != 1 or axis is None or sliced != axis or (steps and steps[0] != 1):
            return None
        sizes = []
        for piece in concat.input:
            dims = g.shape(piece)
            size = None if dims is None or axis[0] >= len(dims) else dims[axis[0]]
            if not isinstance(size, int):
                return "a piece's size along the Concat's axis is unknown"
            sizes.append(size)
        start, stop, _ = slice(starts[0], ends[0]).indices(sum(sizes))
        parts, offset = [], 0
        for piece, size in zip(concat.input, sizes):
            lo, hi = max(start, offset), min(stop, offset + size)
            if lo < hi:
                parts.append((piece, lo - offset, hi - offset, size))
            offset += size
        return parts or None

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        concat = g.producer_op(node.input[0], "Concat")
        assert concat is not None  # a value's producer never changes while the value exists
        parts = self._parts(g, node, concat)
        assert isinstance(parts, list)
        axis = normalize([g.attribute(concat, "axis")], g.rank(node.input[0]))
        assert axis is not None
        made: list[Built] = []
        names = []
        single = len(parts) == 1
        for piece, lo, hi, size in parts:
            if lo == 0 and hi == size:
                names.append(piece)
                continue
            bounds = []
            for value in (lo, hi, axis[0]):
                bounds.append(g.make_weight(np.array([value], np.int64), "slice"))
            out = node.output[0] if single else g.unique_name(f"{piece}_part")
            made.append(g.make_node("Slice", [piece, *bounds], [out]))
            names.append(out)
        if not single:
            made.append(g.make_node("Concat", names, [node.output[0]], axis=axis[0]))
        elif names[0] != node.output[0]:
            made.append(identity(g, names[0], node.output[0]))
        return made
