"""Cast rules: Cast to the type a value already has removed, lossless Cast∘Cast collapsed."""
from __future__ import annotations

from collections.abc import Sequence

from onnx import TensorProto as T

from ..ir import Built, Node
from ..pattern import CLEANUP, SIMPLIFY, MatchResult, Pattern
from ..state import GraphState
from .common import ChainPattern, identity, rewired

# source type -> types that hold every value of it exactly
LOSSLESS: dict[int, frozenset[int]] = {
    T.BOOL: frozenset({T.INT8, T.UINT8, T.INT16, T.UINT16, T.INT32, T.UINT32, T.INT64, T.UINT64, T.FLOAT16,
                       T.FLOAT, T.DOUBLE, T.BFLOAT16}),
    T.UINT8: frozenset({T.INT16, T.UINT16, T.INT32, T.UINT32, T.INT64, T.UINT64, T.FLOAT16, T.FLOAT, T.DOUBLE}),
    T.INT8: frozenset({T.INT16, T.INT32, T.INT64, T.FLOAT16, T.FLOAT, T.DOUBLE}),
    T.UINT16: frozenset({T.INT32, T.UINT32, T.INT64, T.UINT64, T.FLOAT, T.DOUBLE}),
    T.INT16: frozenset({T.INT32, T.INT64, T.FLOAT, T.DOUBLE}),
    T.UINT32: frozenset({T.INT64, T.UINT64, T.DOUBLE}),
    T.INT32: frozenset({T.INT64, T.DOUBLE}),
    T.FLOAT16: frozenset({T.FLOAT, T.DOUBLE}),
    T.BFLOAT16: frozenset({T.FLOAT, T.DOUBLE}),
    T.FLOAT: frozenset({T.DOUBLE}),
}


class CastSameTypePattern(Pattern):
    """Cast(x, to=T) -> x when x already has element type T."""

    op_types = ("Cast",)
    priority = CLEANUP

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        source = g.elem_type(node.input[0])
        if source is None or source != g.attribute(node, "to"):
            return None
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        return [identity(g, node.input[0], node.output[0])]


class CastCastPattern(ChainPattern):
    """Cast(Cast(x, to=M), to=D) -> Cast(x, to=D) when M holds every value of x's type exactly (e.g. int32 ->
    int64, float -> double), so the first Cast loses nothing, and D is not a string (whose text depends on the
    type it is printed from). The inner Cast stays when something else reads it."""

    op_types = inner_ops = ("Cast",)
    priority = SIMPLIFY

    def check(self, g: GraphState, inner: Node, node: Node) -> str | None:
        source = g.elem_type(inner.input[0])
        if source is None:
            return "the element type of the first Cast's input is unknown"
        middle = g.attribute(inner, "to")
        if g.attribute(node, "to") == T.STRING:
            return "a string's text depends on the type it is printed from"
        if middle != source and middle not in LOSSLESS.get(source, ()):
            return f"{T.DataType.Name(source)} -> {T.DataType.Name(middle)} may lose values"
        return None

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        return [rewired(node, inner.input[0])]
