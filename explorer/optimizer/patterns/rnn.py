"""Recurrent cells: an initial state that is all zeros is what GRU/LSTM/RNN assume when it is omitted."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ir import Built, Node
from ..pattern import SIMPLIFY, MatchResult, Pattern
from ..state import GraphState

STATE_INPUTS = {"GRU": (5,), "RNN": (5,), "LSTM": (5, 6)}  # initial_h (and initial_c)


def is_zeros(g: GraphState, name: str) -> str | None:
    """How `name` is known to hold only zeros (a zero constant, ConstantOfShape of zero, Expand of a zero
    constant), else None."""
    value = g.constant(name)
    if value is not None:
        return "a constant of zeros" if value.dtype.kind in "biuf" and not value.any() else None
    producer = g.producer_op(name, "ConstantOfShape", "Expand")
    if producer is None:
        return None
    if producer.op_type == "ConstantOfShape":
        fill = g.attribute(producer, "value")
        zero = fill is None or not np.asarray(fill).any()
        return "ConstantOfShape of zero" if zero else None
    source = g.constant(producer.input[0])
    return "Expand of a zero constant" if source is not None and not source.any() else None


class RnnZeroStatePattern(Pattern):
    """GRU/LSTM/RNN(..., initial_h=0[, initial_c=0]) -> the same cell with those inputs omitted (the spec's
    default initial state is zeros), when the state is a zero constant, a ConstantOfShape of zero (however its
    shape is computed: Shape -> Gather -> Unsqueeze -> Concat chains go away with it) or an Expand of zero."""

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
