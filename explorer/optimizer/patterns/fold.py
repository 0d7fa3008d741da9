"""Constant folding: a small node whose inputs are all constants is replaced by its result."""
from __future__ import annotations

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from ..pattern import SIMPLIFY, MatchResult, Pattern
from ..state import GraphState
from ..tensors import NONDETERMINISTIC

MAX_INPUT_ELEMENTS = 1_000_000
MAX_OUTPUT_ELEMENTS = 65_536


class ConstantFoldingPattern(Pattern):
    """op(c1, c2, ...) -> Constant, for an ONNX-domain node without bodies whose inputs are all constants, when
    the inputs hold at most 1,000,000 elements and the results at most 65,536 (big weights stay as they are).
    Random operators are never folded. The value is computed by onnx.reference."""

    priority = SIMPLIFY

    def __init__(self) -> None:
        self._results: dict[int, tuple[onnx.NodeProto, list[np.ndarray]]] = {}

    def match(self, g: GraphState, node: onnx.NodeProto, matched: list[MatchResult]) -> MatchResult | None:
        if (node.domain not in ("", "ai.onnx") or node.op_type == "Constant" or node.op_type in NONDETERMINISTIC
                or not any(node.input) or any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                                              for a in node.attribute)):
            return None
        values = {}
        for name in node.input:
            if not name:
                continue
            value = g.constant(name)
            if value is None:
                return None
            values[name] = value
        if sum(v.size for v in values.values()) > MAX_INPUT_ELEMENTS:
            return self.decline(g, node, f"inputs exceed {MAX_INPUT_ELEMENTS} elements")
        if self._expected_size(g, node, values) > MAX_OUTPUT_ELEMENTS:
            return self.decline(g, node, f"results would exceed {MAX_OUTPUT_ELEMENTS} elements")
        try:
            results = ReferenceEvaluator(node, opsets={"": g.opset()}).run(None, values)
        except Exception as exc:  # noqa: BLE001 - whatever the kernel refuses, the node stays
            return self.decline(g, node, f"evaluation failed: {type(exc).__name__}: {exc}")
        arrays = [r for r in results]
        if not all(isinstance(r, np.ndarray) or np.isscalar(r) for r in arrays):
            return self.decline(g, node, "a result is not a tensor")
        arrays = [np.asarray(r) for r in arrays]
        if sum(a.size for a in arrays) > MAX_OUTPUT_ELEMENTS:
            return self.decline(g, node, f"results exceed {MAX_OUTPUT_ELEMENTS} elements")
        self._results[id(node)] = (node, arrays)
        return self.result([node])

    @staticmethod
    def _expected_size(g: GraphState, node: onnx.NodeProto, values: dict[str, np.ndarray]) -> int:
        """Elements the results will hold, when that is known before computing them (else 0)."""
        op, args = node.op_type, [values.get(name) for name in node.input]
        try:
            if op == "ConstantOfShape":
                return int(np.prod(args[0]))
            if op == "Expand":
                return int(np.prod(np.broadcast_shapes(args[0].shape, tuple(int(d) for d in args[1]))))
            if op == "Tile":
                return args[0].size * int(np.prod(args[1]))
            if op == "Range":
                return int(np.ceil((float(args[1]) - float(args[0])) / float(args[2])))
        except (ValueError, TypeError, ZeroDivisionError, OverflowError):
            return 0  # malformed: the evaluation reports it
        return sum(int(np.prod(s)) for s in (g.static_shape(o) for o in node.output if o) if s is not None)

    def apply(self, g: GraphState, node: onnx.NodeProto) -> list[onnx.NodeProto]:
        _, arrays = self._results.pop(id(node))
        declared = {k: g.elem_type(o) for k, o in enumerate(node.output) if o}
        made = []
        for k, (name, value) in enumerate(zip(node.output, arrays)):
            if not name:
                continue
            if declared.get(k) is not None:  # keep the declared element type (onnx.reference may widen scalars)
                value = value.astype(onnx.helper.tensor_dtype_to_np_dtype(declared[k]), copy=False)
            constant, _ = g.make_constant(value, name=name)
            made.append(constant)
        return made
