"""The time loops of the GRU, LSTM and RNN cells over stacked directions ("lanes"), in processing order
(lanes.py).

Every per-step value is laid out [gate, lane, batch, hidden], the layout of the spec's states, so each step's
elementwise operations run on contiguous arrays (numpy's strided loops cost two to three times more on small
arrays). The recurrent product of a step is one matrix product per lane over all its gates (H [lane, batch,
hidden] · Rᵀ [lane, hidden, gates·hidden]), or for batches of 4 or more one per gate, batched in one call; it is
added to the gates through a [gate, lane] view of its result. An LSTM whose input is small beside its hidden state
computes its gates in one product per step instead (step_rows.py). A step costs a fixed number of NumPy calls
whatever the number of directions: on the small cells of real models (hidden sizes of 4 to 64) the calls, not the
arithmetic, are the time."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...spec.rnn import RnnConfig
from ..aligned import aligned_copy, aligned_empty
from ..ops.activation import ONE, constant
from .activations import ActivationFn, relu, sigmoid_of_negated
from .lanes import Schedule
from .step_rows import StepRows

_HALF = constant(0.5)


@dataclass
class Lanes:
    """The buffers of every direction, batch-major, in processing order."""

    rt: np.ndarray  # Rᵀ: [lanes, hidden, gates * hidden], or per gate [lanes, gates, hidden, hidden] (KeptWeights)
    rb: np.ndarray | None  # [lanes, batch, hidden]: Rbh, added each step (GRU with linear_before_reset only)
    gates: np.ndarray  # [seq, gates, lanes, batch, hidden]: X·Wᵀ (+ biases) on entry, each step's gates on exit
    y: np.ndarray  # [seq, lanes, batch, hidden]: H per step
    h0: np.ndarray  # [lanes, batch, hidden]
    acts: tuple[ActivationFn, ...]  # f, g[, h], applied to every lane
    steps: Schedule
    # what the recurrent product reads of H (LSTM only): H itself, or H rounded as onnxruntime's quantized LSTM
    # quantizes it at every step
    recurrent_state: Callable[[np.ndarray], np.ndarray] | None = None
    # LSTM: each step's gates as one product of [Xt, Ht-1, 1] with `rt` = [Wᵀ; Rᵀ; biases] ([gates, lanes,
    # width, hidden]); `gates` then holds nothing on entry (step_rows.py)
    rows: StepRows | None = None


def _gate_view(products: np.ndarray, n_gates: int) -> np.ndarray:
    """[lanes, batch, gates * hidden] seen as [gate, lanes, batch, hidden]."""
    lanes, batch, width = products.shape
    view: np.ndarray = products.reshape(lanes, batch, n_gates, width // n_gates).transpose(2, 0, 1, 3)
    return view


def _recurrent_product(rt: np.ndarray, n_gates: int, batch: int
                       ) -> tuple[Callable[[np.ndarray], object], np.ndarray]:
    """(h -> writes H·Rᵀ, its [gate, lane, batch, hidden] view). Rᵀ per gate ([lanes, gates, hidden, hidden], for
    a batch of 4 or more: kernel.KeptWeights) gives one product per gate, batched in one call, landing gate-major,
    so adding it to the gates reads it contiguously; Rᵀ over all gates ([lanes, hidden, gates * hidden]) gives one
    product, faster with smaller batches (the add's strided read costs little there)."""
    if rt.ndim == 4:
        lanes, _, _, size = rt.shape
        gate_major = aligned_empty((lanes, n_gates, batch, size), rt.dtype)
        view: np.ndarray = gate_major.transpose(1, 0, 2, 3)
        return (lambda h: np.matmul(h[:, None], rt, out=gate_major)), view
    lanes, _, width = rt.shape
    products = aligned_empty((lanes, batch, width), rt.dtype)
    return (lambda h: np.matmul(h, rt, out=products)), _gate_view(products, n_gates)


def gru(d: Lanes, config: RnnConfig) -> np.ndarray:
    """Runs the steps; returns the last H of each lane ([lanes, batch, hidden]).

    With the negated sigmoid gates (kernel._gate_scales) z and r are kept through the steps as
    1 + exp(-x) = 1 / sigmoid(x): r (.) q and z (.) (Ht-1 - h) are then divisions by them, a step saves the
    reciprocal, and one reciprocal over every step's z and r after the loop records the sigmoids."""
    matmul, add, multiply, subtract = np.matmul, np.add, np.multiply, np.subtract
    f, g = d.acts[0], d.acts[1]
    inverted = f is sigmoid_of_negated
    gated: Callable[..., object] = np.divide if inverted else multiply  # gated(x, gate): x (.) gate

    def activate_zr(zr: np.ndarray) -> None:
        if inverted:  # 1 / sigmoid(x) from u = -x
            np.exp(zr, out=zr)
            add(zr, ONE, out=zr)
        else:
            f(zr, zr)

    clip = config.clip
    lanes, batch, hidden = shape = d.h0.shape
    tmp = aligned_empty(shape, d.h0.dtype)
    if config.linear_before_reset:
        product, rec = _recurrent_product(d.rt, 3, batch)  # H·Rᵀ per lane
        rec_zr, rec_h = rec[:2], rec[2]
    else:
        rt_zr = aligned_copy(d.rt[:, :, :2 * hidden])
        rt_h = aligned_copy(d.rt[:, :, 2 * hidden:])
        products_zr = aligned_empty((lanes, batch, 2 * hidden), d.h0.dtype)
        rec_zr = _gate_view(products_zr, 2)
        rec_h = aligned_empty(shape, d.h0.dtype)
    h_prev = d.h0
    for s, keep in d.steps:
        gt, h_out = d.gates[s], d.y[s]
        zr, z, r, hh = gt[:2], gt[0], gt[1], gt[2]
        if config.linear_before_reset:
            product(h_prev)
            add(zr, rec_zr, out=zr)
            if clip is not None:
                np.clip(zr, -clip, clip, out=zr)
            activate_zr(zr)
            if d.rb is not None:
                add(rec_h, d.rb, out=rec_h)
            gated(rec_h, r, out=rec_h)  # r (.) (Rh·Ht-1 + Rbh)
        else:
            matmul(h_prev, rt_zr, out=products_zr)
            add(zr, rec_zr, out=zr)
            if clip is not None:
                np.clip(zr, -clip, clip, out=zr)
            activate_zr(zr)
            gated(h_prev, r, out=tmp)
            matmul(tmp, rt_h, out=rec_h)  # Rh·(r (.) Ht-1)
        add(hh, rec_h, out=hh)
        if clip is not None:
            np.clip(hh, -clip, clip, out=hh)
        g(hh, hh)
        subtract(h_prev, hh, out=tmp)  # Ht = (1 - z) h + z Ht-1 = h + z (Ht-1 - h)
        gated(tmp, z, out=tmp)
        add(hh, tmp, out=h_out)
        if keep is not None:
            np.copyto(h_out, h_prev, where=keep)
        h_prev = h_out
    if inverted:
        zr_steps = d.gates[:, :2]
        np.reciprocal(zr_steps, out=zr_steps)
    return h_prev


def lstm(d: Lanes, config: RnnConfig, c0: np.ndarray, cells: np.ndarray,  # noqa: C901 - one loop over the steps:
         peephole: np.ndarray | None, halved: bool = False) -> tuple[np.ndarray, np.ndarray]:  # a call a step costs
    """Runs the steps, writing Ct into `cells` ([seq, lanes, batch, hidden]); returns the last H and C. `halved`:
    the gates hold x/2 for i, o and f (kernel._gate_scales), whose sigmoid is (1 + tanh(x/2)) / 2, and every
    activation is the default; one tanh over all four gates then activates them all."""
    add, multiply = np.add, np.multiply
    f, g, h = d.acts
    clip, forget_is_input = config.clip, config.input_forget
    lanes, batch, hidden = d.h0.shape
    rows = d.rows
    if rows is None:
        product, rec = _recurrent_product(d.rt, 4, batch)  # H·Rᵀ per lane
    tmp = aligned_empty((lanes, batch, hidden), d.h0.dtype)
    if peephole is not None:  # [lanes, 3 * hidden] -> P_i, P_o, P_f, each [lanes, batch, hidden]
        per_item = np.broadcast_to(peephole.reshape(lanes, 1, 3, hidden), (lanes, batch, 3, hidden))
        p_i, p_o, p_f = np.ascontiguousarray(per_item.transpose(2, 0, 1, 3))
    h_prev, c_prev = d.h0, c0
    sigmoid_block = slice(0, 2) if forget_is_input else slice(0, 3)  # i, o[, f] when o needs no Ct
    for s, keep in d.steps:
        gt, h_out, c_out = d.gates[s], d.y[s], cells[s]
        i, o, fg, c = gt[0], gt[1], gt[2], gt[3]
        if rows is None:
            product(h_prev if d.recurrent_state is None else d.recurrent_state(h_prev))
            add(gt, rec, out=gt)
        else:  # [Xt, Ht-1, 1] · [Wᵀ; Rᵀ; biases], per gate
            if s == rows.end:
                rows.next_chunk()
            row = s - rows.start
            np.matmul(rows.rows[row], d.rt, out=gt)
        if halved:
            np.tanh(gt, out=gt)
            sigmoids = gt[:3]
            multiply(sigmoids, _HALF, out=sigmoids)
            add(sigmoids, _HALF, out=sigmoids)
        elif peephole is None:
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
        if not halved:
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
        if rows is not None:
            np.copyto(rows.h[row + 1], h_out)
        h_prev, c_prev = h_out, c_out
    return h_prev, c_prev


def rnn(d: Lanes, config: RnnConfig) -> np.ndarray:
    """Runs the steps; returns the last H of each lane."""
    f = d.acts[0]
    clip = config.clip
    rt = d.rt
    matmul, add, maximum = np.matmul, np.add, np.maximum
    plain_relu = f is relu and clip is None
    rec = aligned_empty(d.h0.shape, d.h0.dtype)
    pre, y = d.gates[:, 0], d.y
    h_prev = d.h0
    for s, keep in d.steps:
        a, h_out = pre[s], y[s]
        matmul(h_prev, rt, out=rec)
        add(a, rec, out=a)
        if plain_relu:
            maximum(a, 0.0, out=h_out)
        elif clip is not None:
            np.clip(a, -clip, clip, out=rec)  # `a` records the pre-activation before the clip
            f(rec, h_out)
        else:
            f(a, h_out)
        if keep is not None:
            np.copyto(h_out, h_prev, where=keep)
        h_prev = h_out
    return h_prev
