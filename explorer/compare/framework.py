"""Gates against a framework or another runtime, recomputed from a recurrent node's weights: PyTorch's own
equations (from the node's weights read by the standard export mapping, or from the PyTorch module's own
parameters in a reference .npz), or the spec's equations started at each step from onnxruntime's H. This is how
a wrong linear_before_reset, swapped gate blocks or a misplaced bias show: the gate that departs first, and when."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model.model import Model
from ..spec.rnn import CELLS, RnnConfig, rnn_config
from ..trace.trace import Event, Trace
from .equations import ONNX_ORDER, TORCH_ORDER, CellWeights, preactivation_magnitudes, run_cell
from .gate_departures import GateDivergence, first_departure, reverse_directions
from .rounding import ROUNDINGS
from .stats import ATOL, RTOL

TORCH_NAMES = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


@dataclass
class NodeInputs:
    """A recurrent node's inputs at one execution, in layout 0: x [seq, batch, input], w/r/b per the spec."""

    config: RnnConfig
    x: np.ndarray
    w: np.ndarray
    r: np.ndarray
    b: np.ndarray | None
    lens: np.ndarray | None
    h0: np.ndarray | None
    c0: np.ndarray | None
    has_peephole: bool


def node_inputs(model: Model, event: Event) -> NodeInputs:
    node = model.node(event.node)
    config = rnn_config(node, model.opsets.get("", 1))
    names = list(node.proto.input) + [""] * 8

    def get(k: int) -> np.ndarray | None:
        value = event.inputs.get(names[k]) if names[k] else None
        return None if value is None else np.asarray(value)

    def required(k: int) -> np.ndarray:
        value = get(k)
        if value is None:
            raise KeyError(f"the recorded execution of {event.node!r} lacks its input {k}")
        return value

    x, h0, c0 = required(0), get(5), get(6)
    if config.layout:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    return NodeInputs(config, x, required(1), required(2), get(3), get(4), h0, c0, get(7) is not None)


def spec_weights(inputs: NodeInputs) -> list[CellWeights]:
    """The node's own weights per direction, in the spec's order, Wb as b_ih and Rb as b_hh."""
    op, hidden = inputs.config.cell.op_type, inputs.r.shape[-1]
    size = len(ONNX_ORDER[op]) * hidden
    out = []
    for d in range(inputs.w.shape[0]):
        b = np.zeros(2 * size) if inputs.b is None else inputs.b[d].astype(np.float64)
        out.append(CellWeights(inputs.w[d].astype(np.float64), inputs.r[d].astype(np.float64), b[:size], b[size:],
                               ONNX_ORDER[op]))
    return out


def torch_weights(values: dict[str, Any], node: str, op: str, directions: int) -> list[CellWeights] | None:
    """A PyTorch module's parameters from reference values: `<node>.weight_ih_l0`, `<node>.weight_hh_l0`,
    `<node>.bias_ih_l0`, `<node>.bias_hh_l0` (`_reverse` appended for the second direction), where <node> is
    the ONNX node's path or name. None when they are not there."""
    out = []
    for d in range(directions):
        suffix = "_l0_reverse" if d else "_l0"
        w, r, b_ih, b_hh = (values.get(f"{node}.{name}{suffix}") for name in TORCH_NAMES)
        if w is None or r is None:
            return None
        zeros = np.zeros(np.shape(w)[0])
        out.append(CellWeights(np.asarray(w, np.float64), np.asarray(r, np.float64),
                               zeros if b_ih is None else np.asarray(b_ih, np.float64),
                               zeros if b_hh is None else np.asarray(b_hh, np.float64), TORCH_ORDER[op]))
    return out


@dataclass
class GateCheck:
    """One recurrent execution's gates against a judge; `divergence` None when every gate agrees."""

    node: str
    op_type: str
    iteration: tuple[int, ...]
    against: str
    weights_from: str
    divergence: GateDivergence | None = None
    notes: list[str] = field(default_factory=list)
    theirs: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    slack: dict[str, np.ndarray] | None = field(default=None, repr=False)  # what rounding explains, per series


def _unsupported(config: RnnConfig, has_peephole: bool) -> list[str]:
    """What the plain equations (PyTorch's features) do not cover in this node."""
    defaults = CELLS[config.cell.op_type].activations
    names = [a.name for direction in config.activations for a in direction]
    found = []
    if any(n not in (*defaults, "Relu") for n in names) or \
            (config.cell.op_type != "RNN" and any(n not in defaults for n in names)):
        found.append(f"activations {', '.join(names)}")
    if config.clip is not None:
        found.append("clip")
    if has_peephole:
        found.append("peepholes (P)")
    if config.input_forget:
        found.append("input_forget")
    return found


def check_gates(model: Model, trace: Trace, path: str, iteration: tuple[int, ...] = (), *, against: str = "PyTorch",
                reference: dict[str, Any] | None = None, teacher_h: np.ndarray | None = None,
                rtol: float = RTOL, atol: float = ATOL, rounding: float = 0.0) -> GateCheck:
    """explorer's recorded gates of one execution against PyTorch's equations (`against='PyTorch'`: weights from
    `reference` when it holds the module's parameters, else the node's own by the export mapping) or the spec's
    equations started from another runtime's H at each step (`teacher_h`, its Y in layout 0; an LSTM's C is
    carried by the equations themselves, since onnxruntime returns no C per step). `rounding` (a type's epsilon,
    with `teacher_h`) widens each gate's tolerance by the rounding of its pre-activation's sums, and C's and H's
    by what their gates' rounding carries (C over the steps: onnxruntime's C is not given per step)."""
    event = trace.event(path, iteration)
    if "error" in event.info:  # the node failed: there are no gates to recompute
        check = GateCheck(path, event.op_type, tuple(iteration), against, "")
        check.notes.append(f"not recomputed: the node did not run ({event.info['error']})")
        return check
    inputs = node_inputs(model, event)
    op = inputs.config.cell.op_type
    directions = inputs.w.shape[0]
    weights, source = spec_weights(inputs), "the node's weights"
    if against == "PyTorch":
        found = None
        for key in (path, model.node(path).name):
            found = found or (torch_weights(reference, key, op, directions) if reference and key else None)
        if found is not None:
            weights, source = found, "the PyTorch module's parameters"
        else:
            source = "the node's weights read as PyTorch's (export mapping)"
    check = GateCheck(path, op, tuple(iteration), against, source)
    missing = _unsupported(inputs.config, inputs.has_peephole)
    if missing:
        check.notes.append(f"not recomputed: the node uses {', '.join(missing)}, which the plain equations lack")
        return check
    relu = any(a.name == "Relu" for a in inputs.config.activations[0])
    lbr = True if against == "PyTorch" else inputs.config.linear_before_reset
    theirs = run_cell(op, weights, inputs.x, inputs.h0, inputs.c0, lbr=lbr, relu=relu, lens=inputs.lens,
                      reverse=reverse_directions(inputs.config.direction, directions), teacher_h=teacher_h)
    ours = {k: v for k, v in trace.gates(path, iteration).items() if k != "mask"}
    check.theirs = theirs
    reverse = reverse_directions(inputs.config.direction, directions)
    slack = None
    if rounding and teacher_h is not None:
        slack = _recurrence_slack(op, preactivation_magnitudes(op, weights, inputs.x, inputs.h0, teacher_h,
                                                               reverse=reverse), rounding, reverse, theirs)
    check.slack = slack
    check.divergence = first_departure(op, path, tuple(iteration), ours, theirs, reverse, against, rtol, atol, slack)
    return check


def _recurrence_slack(op: str, magnitudes: dict[str, np.ndarray], rounding: float, reverse: list[bool],
                      theirs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What rounding explains of each series: a gate, 2·epsilon times the magnitudes its pre-activation sums (the
    activations' slopes are at most 1); an LSTM's C, its gates' rounding summed over the steps so far (scaled by
    |C| for the forget gate); H, its last gates' and C's."""
    slack = {g: ROUNDINGS * rounding * np.nan_to_num(m) for g, m in magnitudes.items()}
    if op == "LSTM":
        cell = np.abs(np.nan_to_num(np.asarray(theirs["C"], np.float64))) if "C" in theirs else 1.0
        step = slack["i"] + slack["c"] + slack["f"] * np.maximum(cell, 1.0)
        slack["C"] = _summed(step, reverse)
        slack["H"] = slack["o"] + slack["C"]
    elif op == "GRU":
        slack["H"] = 2.0 * slack["z"] + slack["h"]
    elif "a" in slack:
        slack["H"] = slack["a"]
    return slack


def _summed(step: np.ndarray, reverse: list[bool]) -> np.ndarray:
    """[seq, directions, ...] summed over the steps each direction has processed so far."""
    out = np.empty_like(step)
    for d, backwards in enumerate(reverse):
        out[:, d] = np.cumsum(step[::-1, d], axis=0)[::-1] if backwards else np.cumsum(step[:, d], axis=0)
    return out
