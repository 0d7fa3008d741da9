"""ScatterND that writes a box of whole rows: PyTorch's `x[:, :, a:b] = u` exported with a full index grid."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...budgets import SCATTER_CONE_NODES, SCATTER_INDEX_BYTES
from ..evaluate import NotFoldable, evaluate
from ..ir import Built, Node
from ..pattern import SIMPLIFY, MatchResult, Pattern
from ..state import GraphState
from .common import identity


def computed(g: GraphState, name: str, budget: list[int]) -> np.ndarray | None:
    """The value of `name` when it is a constant or computed from constants only (through at most
    SCATTER_CONE_NODES nodes, counted in `budget`), else None. Nothing is added to the graph."""
    value = g.constant(name)
    if value is not None:
        return value
    node = g.producer(name)
    if node is None or not node.is_onnx() or node.has_body() or budget[0] <= 0:
        return None
    budget[0] -= 1
    args = []
    for arg in node.input:
        found = computed(g, arg, budget) if arg else None
        if arg and found is None:
            return None
        args.append(found)
    try:
        outputs = evaluate(node.proto, g.ctx.opsets, args, g.value_type, SCATTER_INDEX_BYTES)
    except NotFoldable:
        return None
    return outputs[list(node.output).index(name)]


def box(indices: np.ndarray, dims: tuple[int, ...]) -> tuple[int, int, int] | None:
    """(axis, start, stop) when `indices` ([..., rank] over a tensor of `dims`) is the full grid of every index
    of `dims` but for one axis, where it runs over start..stop-1, in row-major order; else None."""
    if indices.ndim != len(dims) + 1 or indices.shape[-1] != len(dims) or indices.size == 0:
        return None
    flat = indices.reshape(-1, len(dims))
    lo, hi = flat.min(axis=0), flat.max(axis=0)
    if (lo < 0).any() or any(int(h) >= d for h, d in zip(hi, dims)):
        return None
    partial = [k for k, (a, b, d) in enumerate(zip(lo, hi, dims)) if a != 0 or b != d - 1]
    if len(partial) > 1:
        return None
    axis = partial[0] if partial else 0
    ranges = [np.arange(int(a), int(b) + 1) for a, b in zip(lo, hi)]
    if tuple(len(r) for r in ranges) != indices.shape[:-1]:
        return None
    grid = np.stack(np.meshgrid(*ranges, indexing="ij"), axis=-1)
    if not np.array_equal(grid, indices):
        return None
    return axis, int(lo[axis]), int(hi[axis]) + 1


class ScatterNDBoxPattern(Pattern):
    """ScatterND(x, I, u) -> Concat(Slice(x, :a), u, Slice(x, b:)) along one axis, when I (computed from
    constants, never written to the file) is the full index grid of x's static shape except along that axis,
    where it runs over a..b-1: `x[:, :, a:b] = u` as PyTorch exports it. A grid over all of x gives u itself."""

    op_types = ("ScatterND",)
    priority = SIMPLIFY

    def __init__(self) -> None:
        self._boxes: dict[Node, tuple[int, int, int, int]] = {}

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        if g.attribute(node, "reduction", "none") != "none" or g.opset() < 10:
            return None
        dims = g.static_shape(node.input[0])
        if dims is None:
            return self.decline(g, node, "the data's shape is not static")
        indices = computed(g, node.input[1], [SCATTER_CONE_NODES])
        if indices is None:
            return self.decline(g, node, "the indices are not computed from constants")
        found = box(indices, dims)
        if found is None:
            return self.decline(g, node, "the indices are not a box of whole rows")
        self._boxes[node] = (*found, dims[found[0]])
        self.because(g, node, f"the indices cover {node.input[0]} {list(dims)} along axis {found[0]} "
                              f"from {found[1]} to {found[2]}, every index of the other axes")
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        axis, start, stop, size = self._boxes.pop(node)
        x, updates = node.input[0], node.input[2]
        if start == 0 and stop == size:
            return [identity(g, updates, node.output[0])]
        made: list[Built] = []
        parts: list[str | None] = []
        for begin, end in ((0, start), (stop, size)):
            if begin == end:
                parts.append(None)
                continue
            names = []
            for value in (begin, end, axis):
                names.append(g.make_weight(np.array([value], np.int64), "slice"))
            piece = g.unique_name(f"{x}_rows")
            made.append(g.make_node("Slice", [x, *names], [piece]))
            parts.append(piece)
        pieces = [p for p in (parts[0], updates, parts[1]) if p is not None]
        made.append(g.make_node("Concat", pieces, [node.output[0]], axis=axis))
        return made
