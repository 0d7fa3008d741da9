"""Shapes known before running: Shape of a static tensor, and Gather of its known dims, become constants."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx

from ...spec.random_ops import NONDETERMINISTIC  # never folded, merged or moved
from ..ir import Built, Node
from ..pattern import SIMPLIFY, MatchResult, Pattern
from ..state import GraphState
from .common import ChainPattern, dims_text, int_constant, shape_fact


def shape_dims(g: GraphState, node: Node) -> tuple | None:
    """The dims a Shape node returns (its start/end attributes applied), None if the input's rank is unknown."""
    dims = g.shape(node.input[0])
    if dims is None:
        return None
    start, end = g.attribute(node, "start", 0), g.attribute(node, "end")
    return tuple(dims[slice(start, end)])


class StaticShapePattern(Pattern):
    """Shape(x) -> constant, when every dim it returns is known (inside a Loop/Scan body: known on every
    iteration, see body_facts)."""

    op_types = ("Shape",)
    priority = SIMPLIFY

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        dims = shape_dims(g, node)
        if dims is None or not all(isinstance(d, int) for d in dims):
            return None
        self.because(g, node, shape_fact(g, node.input[0]))
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
        if self._selected(g, shape, node) is None:
            return "a selected dim is not known"
        self.because(g, node, shape_fact(g, shape.input[0]))
        return None

    def rewrite(self, g: GraphState, shape: Node, node: Node) -> Sequence[Built]:
        selected = self._selected(g, shape, node)
        assert selected is not None  # check() declined otherwise
        constant, _ = g.make_constant(selected, name=node.output[0])
        return [constant]


class KnownValuePattern(Pattern):
    """op(...) -> Constant when symbolic propagation proves every output's contents (shape arithmetic such as
    Shape -> Gather -> Unsqueeze -> Concat on dims that are known, even when the tensors they come from are not
    constant). ONNX-domain nodes without bodies; random operators stay."""

    priority = SIMPLIFY

    def _values(self, g: GraphState, node: Node) -> list[np.ndarray] | None:
        found = []
        for name in node.output:
            value = g.known_value(name) if name else None
            if value is None or not all(isinstance(v, (int, np.integer, bool, np.bool_)) for v in value.reshape(-1)):
                return None
            found.append(value)
        return found

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        if (not node.is_onnx() or node.op_type in ("Constant", *NONDETERMINISTIC) or not node.output
                or node.has_body() or all(g.is_constant(n) for n in node.input if n)):
            return None  # nodes reading only constants are constant folding's
        values = self._values(g, node)
        if values is None:
            return None
        for name in node.input:
            if not name or g.is_constant(name):
                continue
            value, shape = g.known_value(name), g.shape(name)
            if value is not None:
                self.because(g, node, f"{name} = {dims_text(value.reshape(-1).tolist())}")
            elif shape is not None:
                self.because(g, node, shape_fact(g, name))
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        made = []
        for name, value in zip(node.output, self._values(g, node) or []):
            elem = g.elem_type(name) or onnx.TensorProto.INT64
            array = np.array([int(v) for v in value.reshape(-1)], dtype=onnx.helper.tensor_dtype_to_np_dtype(elem))
            constant, _ = g.make_constant(array.reshape(value.shape), name=name)
            made.append(constant)
        return made

