"""Reshape rules: Reshape∘Reshape collapsed, Reshape to the same shape removed, a computed target shape replaced
by the constant the result's known shape gives."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir import Built, Node
from ..pattern import CLEANUP, FUSION, SIMPLIFY, MatchResult, Pattern
from ..state import GraphState
from .common import ChainPattern, dims_text, identity, int_constant, rewired, same_dim, shape_fact


class ReshapeReshapePattern(ChainPattern):
    """Reshape(Reshape(x, s1), s2) -> Reshape(x, s2) when s2 is constant and copies no dim from the intermediate
    (no 0 in s2, unless allowzero=1 makes 0 a real size); likewise when the inner node is a Squeeze, Unsqueeze or
    Flatten (each keeps the elements in order). The inner node stays when something else reads it."""

    op_types = ("Reshape",)
    inner_ops = ("Reshape", "Squeeze", "Unsqueeze", "Flatten")
    priority = SIMPLIFY

    def check(self, g: GraphState, inner: Node, node: Node) -> str | None:
        if len(node.input) < 2:
            return "shape given as an attribute (opset < 5)"
        shape = int_constant(g, node.input[1])
        if shape is None:
            return "the outer shape is not constant"
        if 0 in shape.tolist() and not g.attribute(node, "allowzero", 0):
            return "the outer shape copies a dim (0) from the intermediate"
        return None

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        return [rewired(node, inner.input[0])]


class NoOpReshapePattern(Pattern):
    """Reshape(x, s) -> x when s gives x's own shape: every entry is the same known dim, a 0 copying it, or a
    single -1 standing for the only remaining dim (x must have no zero-sized dim); s is a constant or a computed
    shape whose entries the shape propagation knows (such as [batch, 16] built from x.size(0))."""

    op_types = ("Reshape",)
    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        if len(node.input) < 2:
            return None
        constant = int_constant(g, node.input[1])
        shape = g.known_value(node.input[1]) if constant is None else constant
        if shape is None or any(d is None for d in shape.reshape(-1)):
            return None
        dims = g.shape(node.input[0])
        if dims is None:
            return self.decline(g, node, "the input's shape is unknown")
        target = shape.reshape(-1).tolist()
        if len(target) != len(dims) or any(d == 0 for d in dims) or target.count(-1) > 1:
            return None
        allowzero = g.attribute(node, "allowzero", 0)
        for want, have in zip(target, dims):
            ok = want == -1 or (want == 0 and not allowzero) or same_dim(want, have)
            if not ok:
                return None
        self.because(g, node, shape_fact(g, node.input[0]))
        if constant is None:
            self.because(g, node, f"{node.input[1]} = {dims_text(target)}")
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        return [identity(g, node.input[0], node.output[0])]


class ComputedReshapePattern(Pattern):
    """Reshape(x, s) -> Reshape(x, c) when s is computed (Shape -> Gather -> Concat ...) but the result's shape is
    known but for copies of x's own dims and at most one other dim: c is that shape with 0 for a dim that is x's
    dim at the same position (copied, as allowzero=0 reads 0) and -1 for the one not known, which x's element count
    fixes as it fixed s's entry on every run where the original runs (-1 only when nothing is copied, as a copied
    dim may be 0). Needs every known dim > 0, and s computed in this graph and read only as the target of Reshapes
    (its producer goes once each has its constant, so do the nodes computing it that nothing else reads)."""

    op_types = ("Reshape",)
    priority = FUSION  # after FlatMatMul, which drops a restore Reshape whose target tells x's leading dims

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        source = g.producer(node.input[1]) if len(node.input) > 1 else None
        if source is None or g.is_constant(node.input[1]):
            return None
        shape = node.input[1]
        if g.is_output(shape) or g.is_captured(shape) or any(
                not reader.is_onnx("Reshape") or list(reader.input[1:2]) != [shape] or shape in reader.input[:1]
                for reader in g.consumers(shape)):
            return self.decline(g, node, "the computed shape is also read elsewhere")
        out = g.shape(node.output[0])
        if out is None:
            return self.decline(g, node, "the result's rank is unknown")
        target = self._target(g, node, out)
        if target.count(-1) > 1:
            return self.decline(g, node, f"the result {dims_text(out)} has more than one dim not known")
        if -1 in target and 0 in target:
            return self.decline(g, node, f"the result {dims_text(out)} has a dim not known beside copied dims")
        if any(isinstance(d, int) and d <= 0 for d in out):
            return self.decline(g, node, f"the result {dims_text(out)} has an empty dim")
        self.because(g, node, shape_fact(g, node.output[0]))
        if 0 in target:
            self.because(g, node, shape_fact(g, node.input[0]))
        return self.result([node])

    @staticmethod
    def _target(g: GraphState, node: Node, out: tuple) -> list[int]:
        """The constant target: known dims, 0 for x's own dim at the same position, -1 for the others."""
        source = g.shape(node.input[0]) or ()
        copies = not g.attribute(node, "allowzero", 0)
        return [d if isinstance(d, int) else 0 if copies and k < len(source) and same_dim(d, source[k]) else -1
                for k, d in enumerate(out)]

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        out = g.shape(node.output[0])
        assert out is not None  # match declined otherwise
        constant, target = g.make_constant(np.array(self._target(g, node, out), np.int64), "shape")
        new = node.copy()
        new.input[1] = target
        return [constant, new]
