"""Fusions: MatMul followed by Add becomes one Gemm."""
from __future__ import annotations

from collections.abc import Sequence

from onnx import TensorProto

from ..ir import Built, Node
from ..pattern import FUSION, MatchResult, Pattern
from ..state import GraphState
from .common import same_dim, shape_fact

GEMM_TYPES = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE})


class MatMulAddPattern(Pattern):
    """Add(MatMul(A, B), C) -> Gemm(A, B, C) when A and B are known to be 2-D float/double matrices, the MatMul
    result is read only by the Add, and C (rank <= 2, known shape) broadcasts to the (M, N) result without
    growing it. Opset >= 7 (unidirectional broadcasting of C)."""

    op_types = ("Add",)
    priority = FUSION

    def _split(self, g: GraphState, node: Node) -> tuple[Node, str] | None:
        for k in (0, 1):
            matmul = g.producer_op(node.input[k], "MatMul")
            if matmul is not None:
                return matmul, node.input[1 - k]
        return None

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        found = self._split(g, node)
        if found is None:
            return None
        matmul, c = found
        if g.opset() < 7:
            return self.decline(g, node, "opset < 7")
        if g.is_used_more_than_once(matmul.output[0]):
            return self.decline(g, node, "the MatMul result is also read elsewhere")
        if g.elem_type(matmul.output[0]) not in GEMM_TYPES:
            return self.decline(g, node, "element type is not float or double")
        a, b = g.shape(matmul.input[0]), g.shape(matmul.input[1])
        if a is None or b is None or len(a) != 2 or len(b) != 2:
            return self.decline(g, node, "MatMul inputs are not known to be 2-D")
        bias = g.shape(c)
        if bias is None or len(bias) > 2:
            return self.decline(g, node, "the added tensor's shape is unknown or has more than 2 dims")
        for want, have in zip((a[0], b[1])[2 - len(bias):], bias):
            if have != 1 and not same_dim(want, have):
                return self.decline(g, node, f"the added tensor {bias} may not broadcast to ({a[0]}, {b[1]})")
        for name in (*matmul.input, c):
            self.because(g, node, shape_fact(g, name))
        return self.result([matmul, node])

    def apply(self, g: GraphState, matmul: Node, node: Node) -> Sequence[Built]:
        found = self._split(g, node)
        assert found is not None  # match() declined otherwise
        _, c = found
        return [g.make_node("Gemm", [matmul.input[0], matmul.input[1], c], [node.output[0]])]
