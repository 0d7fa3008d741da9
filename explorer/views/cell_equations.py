"""A recurrent cell's equations as its loop computes them, each filled in with the value one iteration gave it
(first batch item), for the Loops page beside the spec's pseudo-code."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..cells import RecurrentCell
from ..trace.cell_layout import Source
from ..trace.trace import Trace
from .pseudocode import format_value

GATE_NAMES = {"Sigmoid": "sigmoid", "HardSigmoid": "hard_sigmoid", "Tanh": "tanh", "Relu": "relu"}


def _equations(cell: RecurrentCell) -> list[tuple[str, str]]:
    """(series letter, its equation) in the order a step computes them."""
    gate = GATE_NAMES.get(cell.gate_activation, cell.gate_activation.lower())
    act = GATE_NAMES.get(cell.activation, cell.activation.lower())
    if cell.kind == "GRU":
        candidate = "x·W_h + b_h + r ⊙ (H_prev·R_h + rb_h)" if cell.reset_after else "x·W_h + b_h + (r ⊙ H_prev)·R_h"
        return [("z", f"z  = {gate}(x·W_z + b_z + H_prev·R_z + rb_z)"),
                ("r", f"r  = {gate}(x·W_r + b_r + H_prev·R_r + rb_r)"),
                ("h", f"h~ = {act}({candidate})"),
                ("H", "H  = (1 - z) ⊙ h~ + z ⊙ H_prev")]
    if cell.kind == "LSTM":
        return [("i", f"i  = {gate}(x·W_i + H_prev·R_i + b_i)"), ("f", f"f  = {gate}(x·W_f + H_prev·R_f + b_f)"),
                ("c", f"c~ = {act}(x·W_c + H_prev·R_c + b_c)"), ("o", f"o  = {gate}(x·W_o + H_prev·R_o + b_o)"),
                ("C", "C  = f ⊙ C_prev + i ⊙ c~"), ("H", f"H  = o ⊙ {act}(C)")]
    if cell.kind == "RNN":
        return [("a", "a  = x·W + b + H_prev·R"), ("H", f"H  = {act}(a)")]
    return [("H", "H  = a function of x and H_prev through learned products")]


def _first_item(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.ndim >= 2:
        return value[0]
    return value


def _value(trace: Trace, source: Source, loop: str, index: tuple[int, ...]) -> Any:
    """The value a body node (or, for a body input, the iteration itself) held at one iteration."""
    if source.node == loop:
        record = next((it for it in trace.iterations(loop) if it.index == index), None)
        return None if record is None else record.inputs.get(source.value)
    try:
        return trace.event(source.node, index).outputs.get(source.value)
    except KeyError:
        return None


def cell_equations(cell: RecurrentCell, trace: Trace, loop: str, index: tuple[int, ...]) -> str:
    """The cell's equations with the values of the iteration `index` of its loop `loop` as comments."""
    direction = cell.loops.index(loop)
    assert cell.layout is not None
    steps = cell.layout.directions[direction]
    record = next((it for it in trace.iterations(loop) if it.index == index), None)
    lines = [f"// {cell.kind} cell, iteration {index[-1]}, batch item 0"]
    x = _value(trace, cell.inputs[direction], loop, index)
    lines.append(f"x      // {format_value(_first_item(x))}")
    for letter, carried in cell.states[direction].items():
        if record is not None:
            lines.append(f"{letter}_prev // {format_value(_first_item(record.inputs.get(carried)))}")
    for letter, equation in _equations(cell):
        source = steps.series.get(letter)
        value = None if source is None else _value(trace, source, loop, index)
        lines.append(f"{equation}\n    // {format_value(_first_item(value))}")
    if steps.mask is not None:
        mask = _value(trace, steps.mask, loop, index)
        lines.append(f"H = mask ? H : H_prev   // the state is kept where the mask is off: "
                     f"{format_value(_first_item(mask))}")
    return "\n".join(lines)

