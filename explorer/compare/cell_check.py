"""A recurrent cell written as a loop, a scan or an unrolled graph against the equations of the framework that
exported it: the framework's tensors (Keras's kernel, recurrent_kernel and bias; PyTorch's weight_ih, weight_hh,
bias_ih and bias_hh) are read off the products the graph applies, the cell is recomputed step by step from the
recorded inputs with the framework's own gate order, and each step starts from the graph's own previous H. A
graph that cuts the fused projection in another gate order, splits the biases wrongly or applies the reset gate
on the wrong side of the recurrent product departs at its first step."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..cells import RecurrentCell, find_cell
from ..cells.cell_gates import gather_gates
from ..model.model import Model
from ..trace.cell_layout import CellLayout, DirectionSteps, Source
from ..trace.trace import Trace
from .equations import GATE_FUNCTIONS, CellWeights, run_cell
from .framework import GateCheck, torch_weights
from .gate_departures import first_departure
from .stats import ATOL, RTOL

# the gate letters (as recorded) in the order each framework stacks their blocks in a fused kernel
FRAMEWORK_ORDER = {"Keras": {"GRU": "zrh", "LSTM": "ifco", "RNN": "a"},
                   "PyTorch": {"GRU": "rzh", "LSTM": "ifco", "RNN": "a"}}


def check_cell(model: Model, trace: Trace, path: str, iteration: tuple[int, ...] = (), *,
               framework: str | None = None, reference: dict[str, Any] | None = None, rtol: float = RTOL,
               atol: float = ATOL) -> GateCheck:
    """The cell's recorded gates against its framework's equations (`framework`: "Keras", "PyTorch", default the
    exporter's; an unknown exporter's cell is recomputed with the gate order its own graph uses)."""
    cell = find_cell(model, path)
    chosen = framework or cell.framework
    against = chosen if chosen in FRAMEWORK_ORDER else "the cell's own equations"
    check = GateCheck(path, cell.kind, tuple(iteration), against, "the graph's weights")
    reason = _not_recomputable(cell)
    if reason:
        check.notes.append(f"not recomputed: {reason}")
        return check
    ours = {k: v for k, v in trace.gates(path, iteration).items()}
    mask = ours.pop("mask")
    try:
        weights = [_framework_weights(trace, cell, d, iteration, chosen) for d in range(cell.num_directions)]
        for d in range(cell.num_directions):
            _step_inputs(trace, cell, d, iteration)
    except KeyError as exc:
        check.notes.append(f"not recomputed: {exc.args[0] if exc.args else exc}")
        return check
    if reference:
        from_torch = torch_weights(reference, path, cell.kind, cell.num_directions)
        from_keras = keras_weights(reference, cell, [w.w.shape for w in weights])
        if from_torch is not None:
            weights, check.weights_from = from_torch, "the PyTorch module's parameters"
        elif from_keras is not None:
            weights, check.weights_from = from_keras, "the Keras layer's weights"
    reverse = [s.reverse for s in cell.layout.directions] if cell.layout else [False]
    lbr = True if chosen == "PyTorch" or cell.reset_after is None else cell.reset_after
    gate = GATE_FUNCTIONS.get(cell.gate_activation, GATE_FUNCTIONS["Sigmoid"])
    directions = []
    for d, cell_weights in enumerate(weights):
        x, h0, c0 = _step_inputs(trace, cell, d, iteration)
        if x.shape[-1] != cell_weights.w.shape[-1]:
            raise KeyError(f"the step input holds {x.shape[-1]} values, the kernel takes {cell_weights.w.shape[-1]}")
        directions.append(run_cell(cell.kind, [cell_weights], x, h0, c0, reverse=[reverse[d]], lbr=lbr,
                                   relu=cell.activation == "Relu", teacher_h=ours["H"][:, d:d + 1], gate=gate,
                                   mask=mask[:, d:d + 1]))
    theirs = {name: np.concatenate([s[name] for s in directions], axis=1) for name in directions[0]}
    check.theirs = theirs
    check.divergence = first_departure(cell.kind, path, tuple(iteration), ours, theirs, reverse, against, rtol, atol)
    return check


def keras_weights(reference: dict[str, Any], cell: RecurrentCell,
                  shapes: list[tuple[int, ...]]) -> list[CellWeights] | None:
    """A Keras layer's `kernel`, `recurrent_kernel` and `bias` among reference values (`<layer>/kernel`...), the
    layer found by its kernel's shape (a backward layer's name holds "backward"); None when none fits."""
    layers = [key[:-len("recurrent_kernel")] for key in reference if key.endswith("recurrent_kernel")]
    found = []
    for d, shape in enumerate(shapes):
        fitting = [p for p in layers if f"{p}kernel" in reference and np.shape(reference[f"{p}kernel"])[::-1] == shape]
        fitting.sort(key=lambda p: ("backward" in p) != bool(d))
        if not fitting:
            return None
        prefix = fitting[0]
        bias = np.asarray(reference.get(f"{prefix}bias", np.zeros(shape[0])), np.float64)
        b_ih, b_hh = (bias[0], bias[1]) if bias.ndim == 2 else (bias, np.zeros_like(bias))
        found.append(CellWeights(np.asarray(reference[f"{prefix}kernel"], np.float64).T,
                                 np.asarray(reference[f"{prefix}recurrent_kernel"], np.float64).T, b_ih, b_hh,
                                 FRAMEWORK_ORDER["Keras"].get(cell.kind, "a")))
    return found


def _not_recomputable(cell: RecurrentCell) -> str:
    if cell.kind not in ("GRU", "LSTM", "RNN"):
        return "a recurrence of no known kind has no framework equations"
    if cell.form == "op":
        return "an operator's gates are checked against its weights by check_gates"
    if cell.operator:
        return f"a {cell.kind} operator over one step computes it: check_gates checks {cell.operator!r} at each step"
    if cell.normalized:
        return ("its gates or its cell state are layer-normalized (as torchaudio's RNN-T predictor writes its LSTM): "
                "no framework's built-in equations include that; its gates are recorded as the graph computes them")
    if cell.conv:
        return "its gates are convolutions (ConvLSTM, ConvGRU): the equations here are matrix products"
    if cell.form == "unrolled" and not cell.step_inputs:
        return "the input each step reads is not found"
    if cell.kind != "RNN" and cell.gate_activation not in GATE_FUNCTIONS:
        return f"its gates use {cell.gate_activation}"
    if cell.activation not in ("Tanh", "Relu"):
        return f"its activation is {cell.activation}"
    return ""


def _read(trace: Trace, cell: RecurrentCell, direction: int, source: Source | None,
          iteration: tuple[int, ...]) -> np.ndarray | None:
    """The value a node of the cell read at its first step (weights do not change from step to step)."""
    if source is None:
        return None
    if cell.loops:
        loop = trace.event(cell.loops[direction], iteration)
        depth = len(iteration) + 1
        event = next((e for e in trace.children(loop) if e.node == source.node and len(e.iteration) == depth), None)
    else:
        event = trace.event(source.node, iteration)
    value = None if event is None else event.inputs.get(source.value)
    if value is not None and not isinstance(value, np.ndarray):
        raise KeyError(f"{source.value!r} was kept as a summary only (the trace memory budget was spent)")
    return None if value is None else np.asarray(value, np.float64)


def _rows(value: np.ndarray, transposed: bool) -> np.ndarray:
    """A kernel as [gates * hidden, in] rows (the equations' layout) from the way the graph applies it."""
    return value if transposed else value.T


def _framework_weights(trace: Trace, cell: RecurrentCell, direction: int, iteration: tuple[int, ...],
                       framework: str) -> CellWeights:
    w = cell.weights[direction]
    recurrent = _read(trace, cell, direction, w.recurrent, iteration)
    if recurrent is None or recurrent.ndim != 2:
        raise KeyError("the recurrent kernel is not a matrix the graph multiplies by")
    recurrent_rows = _rows(recurrent, w.recurrent_transposed)
    if w.kernel is None and cell.step_inputs:  # each step reads its slice of x.W + b: the identity applies it
        rows = np.eye(recurrent_rows.shape[0])
    else:
        kernel = _read(trace, cell, direction, w.kernel, iteration)
        if kernel is None or kernel.ndim != 2:
            raise KeyError("the kernel is not a matrix the graph multiplies by")
        rows = _rows(kernel, w.transposed)
    if w.candidate is not None:  # reset before the product: the candidate's block is a product of its own
        candidate = _read(trace, cell, direction, w.candidate, iteration)
        if candidate is None:
            raise KeyError("the candidate's recurrent kernel is not read by the graph")
        recurrent_rows = np.concatenate([recurrent_rows, _rows(candidate, w.recurrent_transposed)])
    size = rows.shape[0]
    zeros = np.zeros(size)
    b_ih = _read(trace, cell, direction, w.kernel_bias, iteration)
    b_hh = _read(trace, cell, direction, w.recurrent_bias, iteration)
    order = FRAMEWORK_ORDER.get(framework, {}).get(cell.kind) or "".join(w.order) or "a"
    if recurrent_rows.shape[0] != size or b_ih is not None and b_ih.size != size:
        raise KeyError(f"the kernels hold {size} and {recurrent_rows.shape[0]} rows for {len(order)} gates")
    if b_hh is not None and b_hh.size != size:
        raise KeyError(f"the recurrent bias holds {b_hh.size} values for {size} rows")
    return CellWeights(rows, recurrent_rows, zeros if b_ih is None else b_ih.reshape(-1),
                       zeros if b_hh is None else b_hh.reshape(-1), order)


def _step_inputs(trace: Trace, cell: RecurrentCell, direction: int,
                 iteration: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """One direction's step inputs x [seq, batch, in] in input order, and its initial states [1, batch, hidden]
    (None: zeros)."""
    assert cell.layout is not None
    steps = cell.layout.directions[direction]
    if cell.step_inputs:
        reads = DirectionSteps(None, steps.reverse, {}, tuple({"x": s} for s in cell.step_inputs[direction]))
    else:
        reads = DirectionSteps(steps.loop, steps.reverse, {"x": cell.inputs[direction]})
    x = gather_gates(trace, CellLayout(cell.kind, cell.form, (reads,)), iteration)["x"][:, 0]
    states: dict[str, np.ndarray | None] = {"H": None, "C": None}
    event = trace.event(cell.loops[direction], iteration) if cell.loops else None
    for letter in states:
        name = cell.initial[direction].get(letter) if cell.initial else None
        if not name:
            continue
        if event is not None:
            value = event.inputs.get(name)
        else:  # an unrolled cell's first state: a feed, an initializer or a value some node made
            try:
                value = trace.value(name, iteration=iteration)
            except KeyError:
                value = None
        if isinstance(value, np.ndarray):
            states[letter] = value.reshape(1, x.shape[1], -1).astype(np.float64)
    return x, states["H"], states["C"]
