"""The time loops of the GRU, LSTM and RNN cells over stacked directions ("lanes"), in processing order
(lanes.py).

Every per-step value is laid out [gate, lane, hidden, batch], so every elementwise operation runs on a
contiguous array (for small arrays numpy's strided loops cost two to three times more). The recurrent product of
a step is one matrix product per lane over all its gates (R [lane, gates·hidden, hidden] · Hᵀ), one BLAS call
of gates·hidden rows instead of one per gate, added to the gates through a [gate, lane] view of its result. A step costs a fixed number of NumPy calls whatever the
number of directions: on the small cells of real models (hidden sizes of 4 to 64) the calls, not the
arithmetic, are the time."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...spec.rnn import RnnConfig
from .activations import ActivationFn
from .lanes import Schedule


@dataclass
class Lanes:
    """The buffers of every direction, hidden-major, in processing order."""

    r: np.ndarray  # [lanes, gates * hidden, hidden]
    rb: np.ndarray | None  # [lanes, hidden, batch]: Rbh, added each step (GRU with linear_before_reset only)
    gates: np.ndarray  # [seq, gates, lanes, hidden, batch]: X·Wᵀ (+ biases) on entry, each step's gates on exit
    y: np.ndarray  # [seq, lanes, hidden, batch]: H per step
    h0: np.ndarray  # [lanes, hidden, batch]
    acts: tuple[ActivationFn, ...]  # f, g[, h], applied to every lane
    steps: Schedule
    # what the recurrent product reads of H (LSTM only): H itself, or H rounded as onnxruntime's quantized LSTM
    # quantizes it at every step
    recurrent_state: Callable[[np.ndarray], np.ndarray] | None = None


def gru(d: Lanes, config: RnnConfig) -> np.ndarray:
    """Runs the steps; returns the last H of each lane ([lanes, hidden, batch])."""
    matmul, add, multiply, subtract = np.matmul, np.add, np.multiply, np.subtract
    f, g = d.acts[0], d.acts[1]
    clip = config.clip
    lanes, hidden, batch = shape = d.h0.shape
    tmp = np.empty(shape, d.h0.dtype)
    products = np.empty((lanes, 3 * hidden, batch), d.h0.dtype)  # R·Hᵀ per lane
    rec = products.reshape(lanes, 3, hidden, batch).transpose(1, 0, 2, 3)  # [gate, lane, hidden, batch] view
    rec_zr, rec_h = rec[:2], rec[2]
    r_zr, r_h = d.r[:, :2 * hidden], d.r[:, 2 * hidden:]
    products_zr, products_h = products[:, :2 * hidden], products[:, 2 * hidden:]
    h_prev = d.h0
    for s, keep in d.steps:
        gt, h_out = d.gates[s], d.y[s]
        zr, z, r, hh = gt[:2], gt[0], gt[1], gt[2]
        if config.linear_before_reset:
            matmul(d.r, h_prev, out=products)
            add(zr, rec_zr, out=zr)
            if clip is not None:
                np.clip(zr, -clip, clip, out=zr)
            f(zr, zr)
            if d.rb is not None:
                add(rec_h, d.rb, out=rec_h)
            multiply(rec_h, r, out=rec_h)  # r (.) (Rh·Ht-1 + Rbh)
        else:
            matmul(r_zr, h_prev, out=products_zr)
            add(zr, rec_zr, out=zr)
            if clip is not None:
                np.clip(zr, -clip, clip, out=zr)
            f(zr, zr)
            multiply(r, h_prev, out=tmp)
            matmul(r_h, tmp, out=products_h)  # Rh·(r (.) Ht-1)
        add(hh, rec_h, out=hh)
        if clip is not None:
            np.clip(hh, -clip, clip, out=hh)
        g(hh, hh)
        subtract(h_prev, hh, out=tmp)  # Ht = (1 - z) h + z Ht-1 = h + z (Ht-1 - h)
        multiply(tmp, z, out=tmp)
        add(hh, tmp, out=h_out)
        if keep is not None:
            np.copyto(h_out, h_prev, where=keep)
        h_prev = h_out
    return h_prev


def lstm(d: Lanes, config: RnnConfig, c0: np.ndarray, cells: np.ndarray,
         peephole: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Runs the steps, writing Ct into `cells` ([seq, lanes, hidden, batch]); returns the last H and C."""
    matmul, add, multiply = np.matmul, np.add, np.multiply
    f, g, h = d.acts
    clip, forget_is_input = config.clip, config.input_forget
    lanes, hidden, batch = d.h0.shape
    products = np.empty((lanes, 4 * hidden, batch), d.h0.dtype)  # R·Hᵀ per lane
    rec = products.reshape(lanes, 4, hidden, batch).transpose(1, 0, 2, 3)  # [gate, lane, hidden, batch] view
    tmp = np.empty((lanes, hidden, batch), d.h0.dtype)
    if peephole is not None:  # [lanes, 3 * hidden] -> P_i, P_o, P_f, each [lanes, hidden, batch]
        columns = np.broadcast_to(peephole.reshape(lanes, 3, hidden, 1), (lanes, 3, hidden, batch))
        p_i, p_o, p_f = np.ascontiguousarray(columns.transpose(1, 0, 2, 3))
    h_prev, c_prev = d.h0, c0
    sigmoid_block = slice(0, 2) if forget_is_input else slice(0, 3)  # i, o[, f] when o needs no Ct
    for s, keep in d.steps:
        gt, h_out, c_out = d.gates[s], d.y[s], cells[s]
        i, o, fg, c = gt[0], gt[1], gt[2], gt[3]
        matmul(d.r, h_prev if d.recurrent_state is None else d.recurrent_state(h_prev), out=products)
        add(gt, rec, out=gt)
        if peephole is None:
            if clip is not None:
                np.clip(gt, -clip, clip, out=gt)
            f(gt[sigmoid_block], gt[sigmoid_block])
        else:
            add(i, multiply(c_prev, p_i, out=tmp), out=i)
            if not forget_is_input:
                add(fg, multiply(c_prev, p_f, out=tmp), out=fg)
            if clip is not None:
                np.clip(i, -clip, clip, out=i)
                np.clip(gt[2:], -clip, clip, out=gt[2:])
            f(i, i)
            if not forget_is_input:
                f(fg, fg)
        if forget_is_input:
            np.subtract(1.0, i, out=fg)
        g(c, c)
        multiply(fg, c_prev, out=c_out)  # Ct = f (.) Ct-1 + i (.) c
        add(c_out, multiply(i, c, out=tmp), out=c_out)
        if peephole is not None:
            add(o, multiply(c_out, p_o, out=tmp), out=o)
            if clip is not None:
                np.clip(o, -clip, clip, out=o)
            f(o, o)
        h(c_out, tmp)
        multiply(o, tmp, out=h_out)
        if keep is not None:
            np.copyto(h_out, h_prev, where=keep)
            np.copyto(c_out, c_prev, where=keep)
        h_prev, c_prev = h_out, c_out
    return h_prev, c_prev


def rnn(d: Lanes, config: RnnConfig) -> np.ndarray:
    """Runs the steps; returns the last H of each lane."""
    f = d.acts[0]
    clip = config.clip
    r = d.r
    rec = np.empty(d.h0.shape, d.h0.dtype)
    h_prev = d.h0
    for s, keep in d.steps:
        a, h_out = d.gates[s][0], d.y[s]
        np.matmul(r, h_prev, out=rec)
        np.add(a, rec, out=a)
        if clip is not None:
            np.clip(a, -clip, clip, out=rec)  # `a` records the pre-activation before the clip
            f(rec, h_out)
        else:
            f(a, h_out)
        if keep is not None:
            np.copyto(h_out, h_prev, where=keep)
        h_prev = h_out
    return h_prev
