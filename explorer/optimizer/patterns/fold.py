"""Constant folding: a node whose inputs are all constants is replaced by its result, computed by the kernel
explorer's executor builds for it (at the model's opset), within a byte budget that keeps the file small."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx

from ...budgets import FOLD_INPUT_BYTES, FOLD_OUTPUT_BYTES
from ...spec.random_ops import NONDETERMINISTIC  # never folded, merged or moved
from ..evaluate import NotFoldable, evaluate
from ..ir import Built, Node
from ..pattern import SIMPLIFY, MatchResult, Pattern
from ..state import GraphState


class ConstantFoldingPattern(Pattern):
    """op(c1, c2, ...) -> Constant, for an ONNX-domain node without bodies whose inputs are all constants. The
    value is computed by explorer's own kernel for the node at the model's opset (what a run computes). Random
    operators are never folded; a fold that would grow the model past its size budget (a few percent of the
    original file: results bigger than the constants and node they replace) is declined."""

    priority = SIMPLIFY

    def __init__(self) -> None:
        self._results: dict[Node, tuple[list[np.ndarray], int]] = {}

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        if (not node.is_onnx() or node.op_type == "Constant" or node.op_type in NONDETERMINISTIC
                or not any(node.input) or node.has_body()):
            return None
        args: list[np.ndarray | None] = []
        for name in node.input:
            value = g.constant(name) if name else None
            if name and value is None:
                return None
            args.append(value)
        if sum(a.nbytes for a in args if a is not None) > FOLD_INPUT_BYTES:
            return self.decline(g, node, f"inputs exceed {FOLD_INPUT_BYTES} bytes")
        try:
            arrays = evaluate(node.proto, g.ctx.opsets, args, g.value_type, FOLD_OUTPUT_BYTES)
        except NotFoldable as exc:
            return self.decline(g, node, str(exc))
        growth = sum(_bytes(a) for a in arrays) - _freed_bytes(g, node) - node.proto.ByteSize()
        if growth > g.ctx.size_budget:
            return self.decline(g, node, f"its result would grow the model by {growth} bytes, which would "
                                         f"exceed the size budget left ({g.ctx.size_budget} bytes)")
        self._results[node] = (arrays, growth)
        return self.result([node])

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        arrays, growth = self._results.pop(node)
        g.ctx.size_budget -= growth
        made: list[Built] = []
        for name, value in zip(node.output, arrays):
            if not name:
                continue
            declared = g.elem_type(name)
            if declared is not None and declared != onnx.TensorProto.STRING:  # keep the declared element type
                value = value.astype(onnx.helper.tensor_dtype_to_np_dtype(declared), copy=False)
            constant, _ = g.make_constant(value, name=name)
            made.append(constant)
        return made


def _bytes(value: np.ndarray) -> int:
    if value.dtype == object:
        return sum(len(str(s)) for s in value.reshape(-1))
    return int(value.nbytes)


def _freed_bytes(g: GraphState, node: Node) -> int:
    """Bytes of constants this node reads that folding is expected to free: a constant defined here whose
    readers all read only constants (so they fold too) counts, shared evenly between them."""
    freed = 0
    for name in dict.fromkeys(n for n in node.input if n):
        value = g.constant(name)
        if value is None or not g.defines(name) or g.is_output(name):
            continue
        users = g.consumers(name)
        if all(_foldable_inputs(g, u) for u in users):
            freed += _bytes(value) // len(users)
    return freed


def _foldable_inputs(g: GraphState, node: Node) -> bool:
    return not node.captures and all(not n or g.is_constant(n) for n in node.input)
