"""GRU/LSTM/RNN cell equations written out plainly in float64 NumPy, as a judge for gates: PyTorch's own
(gate order r,z,n / i,f,g,o, separate b_ih and b_hh, the reset gate applied to W_hn·h + b_hn) and the ONNX
spec's (order z,r,h / i,o,f,c; with linear_before_reset=0 the reset gate multiplies h before R_h). Gates are
named by the spec's letters whatever the order of the weights: PyTorch's n is h, its g is c.

Only the default activations (sigmoid and tanh; an RNN's tanh or relu), no clip, peepholes or input_forget:
these are what PyTorch has."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..spec.rnn import CELLS, PYTORCH_GATES

# the gate blocks of W, R and B in the spec's order and in PyTorch's, named by the letters gates are recorded under
ONNX_ORDER = {op: "".join(cell.recorded) for op, cell in CELLS.items()}
TORCH_ORDER = {op: "".join(cell.recorded[cell.gates.index(g)]
                           for g in sorted(cell.gates, key=lambda g: PYTORCH_GATES[op][g][0]))
               for op, cell in CELLS.items()}


@dataclass(frozen=True)
class CellWeights:
    """One direction's weights, gate blocks stacked in `order` (spec letters): w [G·hidden, input],
    r [G·hidden, hidden], b_ih and b_hh [G·hidden]."""

    w: np.ndarray
    r: np.ndarray
    b_ih: np.ndarray
    b_hh: np.ndarray
    order: str

    def block(self, tensor: np.ndarray, gate: str) -> np.ndarray:
        hidden = self.r.shape[-1]
        k = self.order.index(gate)
        return tensor[k * hidden:(k + 1) * hidden]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -700.0, 700.0)))


def hard_sigmoid(x: np.ndarray) -> np.ndarray:
    """Keras 3's hard_sigmoid: relu6(x + 3) / 6."""
    return np.clip(x / 6.0 + 0.5, 0.0, 1.0)


GATE_FUNCTIONS = {"Sigmoid": _sigmoid, "HardSigmoid": hard_sigmoid}


def _step(op: str, cw: CellWeights, x: np.ndarray, h: np.ndarray, c: np.ndarray | None, lbr: bool,
          relu: bool, gate: Callable[[np.ndarray], np.ndarray] = _sigmoid) -> dict[str, np.ndarray]:
    """One time step for one direction: x [batch, input], h and c [batch, hidden] -> gates, H (and C)."""
    def lin(gate: str) -> tuple[np.ndarray, np.ndarray]:
        return (x @ cw.block(cw.w, gate).T + cw.block(cw.b_ih, gate),
                h @ cw.block(cw.r, gate).T + cw.block(cw.b_hh, gate))

    if op == "GRU":
        (xz, hz), (xr, hr), (xh, hh) = lin("z"), lin("r"), lin("h")
        z, r = gate(xz + hz), gate(xr + hr)
        if lbr:
            n = np.tanh(xh + r * hh)
        else:
            n = np.tanh(xh + (r * h) @ cw.block(cw.r, "h").T + cw.block(cw.b_hh, "h"))
        return {"z": z, "r": r, "h": n, "H": (1.0 - z) * n + z * h}
    if op == "LSTM":
        pre = {gate: np.add(*lin(gate)) for gate in "ifco"}
        i, f, g, o = gate(pre["i"]), gate(pre["f"]), np.tanh(pre["c"]), gate(pre["o"])
        cell = f * c + i * g
        return {"i": i, "f": f, "c": g, "o": o, "C": cell, "H": o * np.tanh(cell)}
    a = np.add(*lin("a"))
    return {"a": a, "H": np.maximum(a, 0.0) if relu else np.tanh(a)}


def run_cell(op: str, weights: list[CellWeights], x: np.ndarray, h0: np.ndarray | None = None,
             c0: np.ndarray | None = None, *, reverse: list[bool], lbr: bool = True, relu: bool = False,
             lens: np.ndarray | None = None, teacher_h: np.ndarray | None = None,
             gate: Callable[[np.ndarray], np.ndarray] = _sigmoid,
             mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every gate at every step, as explorer records them: [seq, num_directions, batch, hidden], NaN past each
    sequence length. x is [seq, batch, input]; h0/c0 [num_directions, batch, hidden]. With `teacher_h`
    ([seq, num_directions, batch, hidden], e.g. another runtime's Y), each step starts from that H of the
    previous step instead of its own. `mask` ([seq, num_directions, batch], e.g. Keras's masking) marks the steps
    that update the state; the others keep it and are NaN, as steps past a sequence length are."""
    seq, batch, _ = x.shape
    hidden = weights[0].r.shape[-1]
    x = x.astype(np.float64)
    lengths = np.full(batch, seq) if lens is None else np.asarray(lens, np.int64)
    series: dict[str, np.ndarray] = {}
    for d, cw in enumerate(weights):
        h = np.zeros((batch, hidden)) if h0 is None else h0[d].astype(np.float64)
        c = np.zeros((batch, hidden)) if c0 is None else c0[d].astype(np.float64)
        steps = range(seq - 1, -1, -1) if reverse[d] else range(seq)
        previous = None
        for t in steps:
            if teacher_h is not None and previous is not None:
                h = np.where(np.isnan(teacher_h[previous, d]), h, teacher_h[previous, d].astype(np.float64))
            out = _step(op, cw, x[t], h, c, lbr, relu, gate)
            valid = ((t < lengths) if mask is None else (t < lengths) & mask[t, d])[:, None]
            for name, value in out.items():
                series.setdefault(name, np.full((seq, len(weights), batch, hidden), np.nan))[t, d] = \
                    np.where(valid, value, np.nan)
            h = np.where(valid, out["H"], h)
            c = np.where(valid, out.get("C", c), c)
            previous = t
    return series


def preactivation_magnitudes(op: str, weights: list[CellWeights], x: np.ndarray, h0: np.ndarray | None,
                             teacher_h: np.ndarray, *, reverse: list[bool]) -> dict[str, np.ndarray]:
    """Per gate and step, the magnitudes its pre-activation sums: |x|·|W|ᵀ + |h|·|R|ᵀ + |b_ih| + |b_hh|, with h the
    previous step's `teacher_h` (h0, else zeros, at the first): what the rounding of that sum scales with.
    [seq, num_directions, batch, hidden] per recorded gate letter."""
    seq, batch, _ = x.shape
    hidden = weights[0].r.shape[-1]
    ax = np.abs(x.astype(np.float64))
    found: dict[str, np.ndarray] = {}
    for d, cw in enumerate(weights):
        steps = list(range(seq - 1, -1, -1) if reverse[d] else range(seq))
        start = np.zeros((batch, hidden)) if h0 is None else np.abs(h0[d].astype(np.float64))
        previous = [start] + [np.abs(np.nan_to_num(teacher_h[t, d].astype(np.float64))) for t in steps[:-1]]
        h = np.empty((seq, batch, hidden))
        for t, value in zip(steps, previous):
            h[t] = value
        for gate in cw.order:
            total = ax @ np.abs(cw.block(cw.w, gate)).T + h @ np.abs(cw.block(cw.r, gate)).T \
                + np.abs(cw.block(cw.b_ih, gate)) + np.abs(cw.block(cw.b_hh, gate))
            found.setdefault(gate, np.zeros((seq, len(weights), batch, hidden)))[:, d] = total
    return found
