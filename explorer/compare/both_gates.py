"""The gates of one recurrent execution on both sides of a comparison, for looking at them together: side A's
as its run recorded them, side B's recorded by its run or recomputed (the spec's equations started at each
step from onnxruntime's H; PyTorch's equations from the weights)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cells import find_cell
from ..model.model import Model
from ..proto.graph import attribute
from .cell_sides import theirs_of
from .framework import check_gates
from .report import Comparison

Gates = dict[str, np.ndarray]  # gate -> [seq, num_directions, batch, hidden]


@dataclass(frozen=True)
class BothGates:
    ours: Gates
    theirs: Gates
    source: str  # where B's gates come from


def layout0(model: Model, node: str, y: np.ndarray) -> np.ndarray:
    """A recurrent node's Y in layout 0 ([seq, directions, batch, hidden])."""
    return y.transpose(1, 0, 2, 3) if attribute(model.node(node).proto, "layout", 0) else y


def gates_of_both(comparison: Comparison, node: str, iteration: tuple[int, ...] = ()) -> BothGates:
    """The gates of one recurrent execution (`node`: an operator's path or a cell's) on both sides."""
    a, b = comparison.a, comparison.b
    if a is None or a.trace is None or a.model is None or b is None:
        raise KeyError("side A is not a recorded run of a model: no gates")
    if node in a.trace.cells:
        cell = find_cell(a.model, node)
        found = theirs_of(a, b, cell, iteration, comparison.rtol, comparison.atol)
        if found is None:
            raise KeyError(f"B has no gates of {node!r}")
        ours = {k: v for k, v in a.trace.gates(node, iteration).items() if k != "mask"}
        return BothGates(ours, found[0], found[1])
    ours = {k: v for k, v in a.trace.gates(node, iteration).items() if k != "mask"}
    v = next((v for v in comparison.values if v.node == node and v.name == _y_name(a.model, node)), None)
    if b.kind == "explorer" and b.trace is not None and v is not None:
        theirs = {k: g for k, g in b.trace.gates(v.b_node, iteration).items() if k != "mask"}
        return BothGates(ours, theirs, f"recorded by B's run of {v.b_node!r}")
    produced = b.produced.get((v.b_node, v.b_name)) if v is not None else None
    if b.kind == "onnxruntime" and produced is not None and iteration in produced.values:
        y = layout0(a.model, node, np.asarray(produced.values[iteration]))
        check = check_gates(a.model, a.trace, node, iteration, against="onnxruntime", teacher_h=y,
                            rtol=comparison.rtol, atol=comparison.atol)
        return BothGates(ours, check.theirs, "the spec's equations, each step started from onnxruntime's H")
    check = check_gates(a.model, a.trace, node, iteration, reference=b.given, rtol=comparison.rtol,
                        atol=comparison.atol)
    return BothGates(ours, check.theirs, f"PyTorch's equations from {check.weights_from}")


def _y_name(model: Model, node: str) -> str:
    outputs = list(model.node(node).proto.output)
    return outputs[0] if outputs else ""
