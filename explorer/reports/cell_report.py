"""The exported-RNN report of a cell written as a loop, a scan or an unrolled graph: where each gate's block of
the kernels and biases sits in the tensors the graph multiplies by, named as the exporting framework names it
(Keras's kernel, recurrent_kernel and bias; PyTorch's weight_ih, weight_hh, bias_ih and bias_hh), whether the
graph cuts its fused products in the framework's gate order, and, given a run, the framework's equations
recomputed on it."""
from __future__ import annotations

import numpy as np

from ..cells import RecurrentCell, Weights, find_cell
from ..cells.dataflow import Flows
from ..compare.cell_check import FRAMEWORK_ORDER, check_cell
from ..model.model import Model
from ..trace.cell_layout import Source
from ..trace.trace import Trace
from .rnn_report_types import Finding, RnnReport, WeightBlock, origin_of

TORCH_NAMES = {"kernel": "weight_ih", "recurrent": "weight_hh", "kernel_bias": "bias_ih", "recurrent_bias": "bias_hh"}
KERAS_NAMES = {"kernel": "kernel", "recurrent": "recurrent_kernel", "kernel_bias": "bias", "recurrent_bias": "bias"}
ONNX_NAMES = {"kernel": "W", "recurrent": "R", "kernel_bias": "Wb", "recurrent_bias": "Rb"}


def cell_report(model: Model, path: str, trace: Trace | None = None) -> RnnReport:
    """The report of the cell at `path` (see `explorer.recurrent_cells`)."""
    cell = find_cell(model, path)
    report = RnnReport(path, cell.kind, origin_of(model.proto.producer_name), None, cell.hidden_size, None)
    report.findings.append(Finding("note", f"{cell.describe()}: a {cell.form} the exporter wrote, recognized by "
                                           f"its dataflow; its gates are gathered step by step from the nodes that "
                                           f"compute them"))
    if cell.kind == "recurrence":
        report.findings.append(Finding("note", "a state updated through a learned product of itself that is no "
                                               "GRU, LSTM or RNN: its H is shown over time, with no gates"))
        return report
    flows = Flows(model.index)
    for d, weights in enumerate(cell.weights):
        report.blocks.extend(_blocks(cell, d, weights, flows, trace))
    report.findings.extend(_order_findings(cell))
    if cell.kind == "GRU" and cell.framework == "PyTorch" and cell.reset_after is False:
        report.findings.append(Finding("warning", "the reset gate multiplies H before the recurrent product: "
                                                  "PyTorch applies it after (r * (W_hn h + b_hn))"))
    if cell.masked:
        report.findings.append(Finding("note", "a mask keeps the state at some steps (Keras's masking): those "
                                               "steps are blank in the gates and marked in `mask`"))
    if trace is not None and cell.kind in FRAMEWORK_ORDER.get(cell.framework, {}):
        report.findings.extend(_equations(model, trace, cell))
    return report


def _value(flows: Flows, weights: Weights, source: Source | None, trace: Trace | None) -> np.ndarray | None:
    """A weight's value: a constant of the model, else as the graph's first step read it in `trace`."""
    if source is None:
        return None
    constant = flows.of(weights.graph).constant(source.value)
    if constant is not None:
        return constant
    if trace is None:
        return None
    for event in trace.events_of(source.node):
        value = event.inputs.get(source.value)
        if isinstance(value, np.ndarray):
            return value
    return None


def _blocks(cell: RecurrentCell, direction: int, weights: Weights, flows: Flows,
            trace: Trace | None) -> list[WeightBlock]:
    hidden = cell.hidden_size
    order = weights.order or ("a",)
    framework_order = FRAMEWORK_ORDER.get(cell.framework, {}).get(cell.kind, "")
    side = ("backward_layer." if direction else "forward_layer.") if cell.num_directions == 2 else ""
    blocks = []
    for field, source in (("kernel", weights.kernel), ("recurrent", weights.recurrent),
                          ("kernel_bias", weights.kernel_bias), ("recurrent_bias", weights.recurrent_bias)):
        if source is None or hidden is None:
            continue
        value = _value(flows, weights, source, trace)
        transposed = weights.transposed if field == "kernel" else weights.recurrent_transposed
        letters = order if field != "recurrent" or not weights.recurrent_order else weights.recurrent_order
        for k, gate in enumerate(letters):
            start, stop = k * hidden, (k + 1) * hidden
            cut = _cut(value, start, stop, transposed, bias=field.endswith("bias"))
            position = f"{source.value}[{start}:{stop}]" if field.endswith("bias") or transposed else \
                f"{source.value}[:, {start}:{stop}]"
            stored = framework_order.index(gate) if gate in framework_order else k
            names = _names(cell, field, stored, hidden, side, direction)
            blocks.append(WeightBlock(direction, source.value, gate, f"{ONNX_NAMES[field]}{'i' if gate == 'a' else gate}", (start, stop),
                                      names[0], names[1], cut, position))
    return blocks


def _cut(value: np.ndarray | None, start: int, stop: int, transposed: bool, bias: bool) -> np.ndarray | None:
    if value is None:
        return None
    if bias or value.ndim == 1:
        flat = value.reshape(-1)
        return flat[start:stop] if flat.size >= stop else None
    if value.ndim != 2:
        return None
    block = value[start:stop] if transposed else value[:, start:stop]
    return block if block.size else None


def _names(cell: RecurrentCell, field: str, stored: int, hidden: int, side: str, direction: int) -> tuple[str, str]:
    """(PyTorch's name, Keras's name) of the block a framework stores gate `stored`-th in the fused tensor."""
    span = f"{stored * hidden}:{(stored + 1) * hidden}"
    suffix = "_reverse" if direction else ""
    torch = f"{TORCH_NAMES[field]}_l0{suffix}[{span}]"
    keras = KERAS_NAMES[field]
    if field in ("kernel", "recurrent"):
        keras = f"{side}{keras}[:, {span}]"
    elif cell.kind == "GRU" and cell.reset_after:
        keras = f"{side}bias[{0 if field == 'kernel_bias' else 1}, {span}]"
    else:
        keras = f"{side}bias[{span}]" if field == "kernel_bias" else ""
    if cell.framework == "Keras":
        return "", keras
    return (torch, "") if cell.framework == "PyTorch" else (torch, keras)


def _order_findings(cell: RecurrentCell) -> list[Finding]:
    expected = FRAMEWORK_ORDER.get(cell.framework, {}).get(cell.kind)
    found = []
    for d, weights in enumerate(cell.weights):
        for what, order in (("input", weights.order), ("recurrent", weights.recurrent_order)):
            if expected and order and "".join(order) != expected:
                found.append(Finding("error", f"direction {d}: the graph cuts its fused {what} product as "
                                              f"[{', '.join(order)}], but {cell.framework} stores the gates as "
                                              f"[{', '.join(expected)}]: the gates are computed from the wrong "
                                              f"blocks of the weights"))
    return found


def _equations(model: Model, trace: Trace, cell: RecurrentCell) -> list[Finding]:
    runs = trace.events_of(cell.loops[0]) if cell.loops else [None]
    if not runs:
        return [Finding("note", "the cell did not run: no equations to check")]
    iteration = runs[0].iteration if runs[0] is not None else ()
    check = check_cell(model, trace, cell.path, iteration)
    if check.notes:
        return [Finding("note", f"{cell.framework}'s equations: {note}") for note in check.notes]
    if check.divergence is not None:
        return [Finding("error", f"{cell.framework}'s equations: {check.divergence.describe()}")]
    return [Finding("note", f"{cell.framework}'s equations, recomputed from the recorded inputs with the graph's "
                            f"weights, agree with every recorded gate at every step")]
