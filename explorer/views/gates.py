"""What the Gates page computes from a GRU/LSTM/RNN's recorded gates: the bounded range of each gate's
activation, saturation over time (fraction of units near a bound), the norm of H over time, and the weight
table of the exported-RNN report."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..cells import RecurrentCell, find_cell, recurrent_cells
from ..model.model import Model
from ..reports.rnn_report import RnnReport
from ..spec.rnn import CELLS, rnn_config
from ..trace.trace import Event, Trace
from .names import short_name

# An RNN records the pre-activation `a` (unbounded) and H = f(a): its saturation is measured on H.
_MEASURED_ON = {"a": "H"}
SATURATION_MARGIN = 0.05  # a unit within 5 % of the activation's range from a bound counts as saturated


def recurrent_nodes(model: Model) -> dict[str, str]:
    """path -> label of every recurrent cell, whatever its form: `GRU · path` for an operator, the cell's
    description and its loop's name for one written as a loop, scan or unrolled graph."""
    return {cell.path: cell_label(cell) for cell in recurrent_cells(model)}


def cell_label(cell: RecurrentCell) -> str:
    if cell.form == "op":
        return f"{cell.op_type or cell.kind} · {cell.path}"
    return f"{cell.describe()} · {short_name(cell.path)}"


def executions(trace: Trace, cell: RecurrentCell) -> list[Event]:
    """The events at whose iteration tuples the cell ran: the operator's or its (forward) loop's executions;
    for an unrolled cell its first step's."""
    if cell.form == "op":
        return [e for e in trace.events_of(cell.path) if "gates" in e.info]
    anchor = cell.loops[0] if cell.loops else cell.gate_nodes[0].get("H", "")
    return trace.events_of(anchor)


def cell_ran(model: Model, trace: Trace, path: str) -> bool:
    return bool(executions(trace, find_cell(model, path)))


def direction_names(model: Model, path: str, count: int) -> list[str]:
    cell = find_cell(model, path)
    if cell.form != "op":
        return list(cell.directions)
    direction = next((a.s.decode() for a in model.node(path).proto.attribute if a.name == "direction"), "forward")
    return ["forward", "reverse"] if count == 2 else [direction]


def _bounds(name: str, alpha: float | None) -> tuple[float, float] | None:
    if name in ("Sigmoid", "HardSigmoid"):
        return 0.0, 1.0
    if name in ("Tanh", "Softsign"):
        return -1.0, 1.0
    if name == "ScaledTanh":
        scale = abs(1.0 if alpha is None else alpha)
        return -scale, scale
    return None  # Relu, Affine, Elu...: unbounded, no saturation to speak of


def gate_bounds(model: Model, path: str, direction: int) -> dict[str, tuple[float, float] | None]:
    """recorded series -> (low, high) of the activation that produced it in that direction, None when unbounded
    (an RNN's is its H, the activation of the recorded pre-activation `a`)."""
    cell = find_cell(model, path)
    if cell.form != "op":
        return _cell_bounds(cell)
    node = model.node(path)
    config = rnn_config(node, model.opsets.get("", 1))
    activations = config.activations[direction]
    spec = config.cell
    return {_MEASURED_ON.get(gate, gate): _bounds(activations[which].name, activations[which].alpha)
            for gate, which in zip(spec.recorded, spec.gate_activation)}


def _cell_bounds(cell: RecurrentCell) -> dict[str, tuple[float, float] | None]:
    """The bounds of a loop-form cell's series, from the activations its graph applies."""
    if cell.kind not in CELLS:
        return {}
    spec = CELLS[cell.kind]
    names = (cell.gate_activation, cell.activation)
    alpha = 1.0 if cell.activation == "ScaledTanh" else None
    return {_MEASURED_ON.get(gate, gate): _bounds(names[which] if cell.kind != "RNN" else cell.activation, alpha)
            for gate, which in zip(spec.recorded, spec.gate_activation)}


def saturation(values: np.ndarray, bounds: tuple[float, float], margin: float = SATURATION_MARGIN) -> np.ndarray:
    """Per time step, the fraction of units within `margin` × range of either bound. `values` is [seq, units];
    steps past a sequence length (NaN) give NaN."""
    low, high = bounds
    width = (high - low) * margin
    near = (values <= low + width) | (values >= high - width)
    fraction = near.mean(axis=1)
    fraction[np.isnan(values).all(axis=1)] = np.nan
    return fraction


LEFT, RIGHT = 0.1, 0.9  # a gate value is left (right) saturated below 10 % (above 90 %) of its range


def saturation_sides(values: np.ndarray, bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Per unit, the fraction of valid time steps it spends left saturated (below LEFT of the activation's range)
    and right saturated (above RIGHT): `values` is [seq, units], padded steps are NaN."""
    low, high = bounds
    share = (values.astype(np.float64) - low) / (high - low)
    valid = ~np.isnan(share)
    steps = np.maximum(valid.sum(axis=0), 1)
    with np.errstate(invalid="ignore"):
        left = ((share < LEFT) & valid).sum(axis=0) / steps
        right = ((share > RIGHT) & valid).sum(axis=0) / steps
    return left, right


def units_on(values: np.ndarray, start: int, stop: int, threshold: float) -> list[int]:
    """The units that stay at or above `threshold` at every valid step from `start` to `stop` (inclusive), as
    LSTMVis selects them: best first, those that are least on outside that range leading."""
    inside = values[start:stop + 1]
    rows = ~np.isnan(inside).all(axis=1)
    if not rows.any():
        return []
    on = np.where((inside[rows] >= threshold).all(axis=0))[0]
    outside = np.concatenate([values[:start], values[stop + 1:]])
    outside = outside[~np.isnan(outside).all(axis=1)]
    off_outside = (outside[:, on] < threshold).mean(axis=0) if len(outside) else np.ones(len(on))
    return [int(unit) for _, unit in sorted(zip(-off_outside, on))]


def hidden_norm(h: np.ndarray) -> np.ndarray:
    """L2 norm of H per time step ([seq, hidden] -> [seq]); NaN for padded steps."""
    norm = np.sqrt(np.sum(h.astype(np.float64) ** 2, axis=1))
    norm[np.isnan(h).all(axis=1)] = np.nan
    return norm


def weight_rows(report: RnnReport) -> list[dict[str, Any]]:
    """One row per gate block of W, R, B, P: its ONNX name, where it sits, its PyTorch and Keras names."""
    return [{"ONNX": b.onnx, "slice": b.where,
             "PyTorch": b.pytorch, "Keras": b.keras,
             "mean |x|": None if b.values is None else float(np.abs(b.values).mean())} for b in report.blocks]
