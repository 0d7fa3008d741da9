"""Recurrent cells: an initial state that is all zeros is what GRU/LSTM/RNN assume when it is omitted."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...budgets import RNN_PATTERN_DEPTH
from ..ir import Built, Node
from ..pattern import SIMPLIFY, MatchResult, Pattern
from ..state import GraphState

STATE_INPUTS = {"GRU": (5,), "RNN": (5,), "LSTM": (5, 6)}  # initial_h (and initial_c)


# operators whose result holds only elements of their first input (Concat: of all its inputs), so zeros in give
# zeros out, whatever their other inputs (shapes, axes, starts) are
ZERO_KEEPING = frozenset({"Expand", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Transpose", "Identity", "Tile",
                          "Slice", "Gather", "Cast", "CastLike", "Concat"})


def is_zeros(g: GraphState, name: str, depth: int = 0) -> str | None:
    """How `name` is known to hold only zeros (a zero constant, ConstantOfShape of zero, or those through
    operators that only move, repeat or convert elements: Expand, Unsqueeze, Slice, Concat, Cast, ...), else
    None."""
    value = g.constant(name)
    if value is not None:
        return "a constant of zeros" if value.dtype.kind in "biuf" and not value.any() else None
    producer = g.producer(name)
    if producer is None or not producer.is_onnx() or depth >= RNN_PATTERN_DEPTH:
        return None
    if producer.op_type == "ConstantOfShape":
        fill = g.attribute(producer, "value")
        zero = fill is None or not np.asarray(fill).any()
        return "ConstantOfShape of zero" if zero else None
    if producer.op_type not in ZERO_KEEPING:
        return None
    sources = producer.input if producer.op_type == "Concat" else producer.input[:1]
    found = [is_zeros(g, source, depth + 1) for source in sources if source]
    if not found or None in found:
        return None
    return f"{producer.op_type} of {' and '.join(dict.fromkeys(found))}"  # type: ignore[arg-type]


class RnnZeroStatePattern(Pattern):
    """GRU/LSTM/RNN(..., initial_h=0[, initial_c=0]) -> the same cell with those inputs omitted (the spec's
    default initial state is zeros), when the state is known to be zeros (see is_zeros: a zero constant or a
    ConstantOfShape of zero, however they are then expanded, sliced, unsqueezed or concatenated; the
    Shape -> Gather -> Unsqueeze -> Concat chains computing their shapes go away with them)."""

    op_types = ("GRU", "LSTM", "RNN")
    priority = SIMPLIFY

    def _zero_positions(self, g: GraphState, node: Node) -> list[int]:
        found = []
        for k in STATE_INPUTS[node.op_type]:
            if len(node.input) > k and node.input[k]:
                how = is_zeros(g, node.input[k])
                if how is not None:
                    found.append(k)
                    self.because(g, node, f"{node.input[k]} is {how}")
        return found

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        if not node.is_onnx():
            return None
        return self.result([node]) if self._zero_positions(g, node) else None

    def apply(self, g: GraphState, node: Node) -> Sequence[Built]:
        cell = node.copy()
        for k in self._zero_positions(g, node):
            cell.input[k] = ""
        while cell.input and not cell.input[-1]:
            cell.input.pop()
        return [cell]
