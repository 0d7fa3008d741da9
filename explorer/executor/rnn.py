"""GRU, LSTM and RNN kernels that record every gate at every time step (every opset version of the spec).

The input projections X·Wᵀ of all steps are one (stacked) matrix product per direction before the loop,
written into the array that records the gates; each step then adds one recurrent product (two for GRU with
linear_before_reset=0) in place and applies the activations there. `info["gates"]` holds arrays [seq_length,
num_directions, batch_size, hidden_size] indexed by position in the input sequence (as Y is), whatever
`layout` is; steps past a batch item's sequence length are NaN and `info["gates"]["mask"]` ([seq_length,
num_directions, batch_size]) marks the valid ones.

Where the spec is silent, onnxruntime's behaviour is followed: activation_alpha/beta are consumed in order by
the activations that take them; `clip` bounds every gate's pre-activation (LSTM's cell state is not clipped
before h); a batch item of sequence length 0 gives zeros in Y_h and Y_c.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ExecutionError, where
from ..spec.rnn import INPUTS, Activation, RnnConfig, rnn_config
from .ops.base import Call, SpecialKernel

if TYPE_CHECKING:
    from ..graph import NodeRef
    from ..trace import EventInfo
    from .program import Program

ActivationFn = Callable[[np.ndarray, np.ndarray], object]  # fn(x, out) writes out; `out` may be `x`


def _sigmoid(x: np.ndarray, out: np.ndarray) -> None:
    np.multiply(x, -1.0, out=out)  # not np.negative: numpy 2.4 miscomputes it in place at some strides
    np.exp(out, out=out)  # overflows to inf for x << 0, giving exactly 0 below
    np.add(out, 1.0, out=out)
    np.reciprocal(out, out=out)


def _activation_fn(activation: Activation) -> ActivationFn:
    """The in-place implementation of one spec activation with its alpha/beta bound."""
    a = 0.0 if activation.alpha is None else activation.alpha
    b = 0.0 if activation.beta is None else activation.beta

    def affine(x: np.ndarray, out: np.ndarray) -> None:
        np.multiply(x, a, out=out)
        np.add(out, b, out=out)

    def scaled_tanh(x: np.ndarray, out: np.ndarray) -> None:
        np.multiply(x, b, out=out)
        np.tanh(out, out=out)
        np.multiply(out, a, out=out)

    def hard_sigmoid(x: np.ndarray, out: np.ndarray) -> None:
        np.multiply(x, a, out=out)
        np.add(out, b, out=out)
        np.clip(out, 0.0, 1.0, out=out)

    def softsign(x: np.ndarray, out: np.ndarray) -> None:
        np.copyto(out, x / (1.0 + np.abs(x)))

    table: dict[str, ActivationFn] = {
        "Sigmoid": _sigmoid,
        "Tanh": lambda x, out: np.tanh(x, out=out),
        "Relu": lambda x, out: np.maximum(x, 0.0, out=out),
        "Affine": affine,
        "LeakyRelu": lambda x, out: np.copyto(out, np.where(x >= 0, x, x * a)),
        "ThresholdedRelu": lambda x, out: np.copyto(out, np.where(x >= a, x, 0.0)),
        "ScaledTanh": scaled_tanh,
        "HardSigmoid": hard_sigmoid,
        "Elu": lambda x, out: np.copyto(out, np.where(x >= 0, x, a * np.expm1(np.minimum(x, 0.0)))),
        "Softsign": softsign,
        "Softplus": lambda x, out: np.logaddexp(0.0, x, out=out),
    }
    return table[activation.name]


# ---- inputs --------------------------------------------------------------------------------------
@dataclass
class _Inputs:
    """Validated inputs in the computation dtype, X in layout 0."""

    x: np.ndarray  # [seq, batch, input]
    w: np.ndarray  # [num_dir, gates*hidden, input]
    r: np.ndarray  # [num_dir, gates*hidden, hidden]
    b: np.ndarray | None  # [num_dir, 2*gates*hidden]
    lens: np.ndarray | None  # [batch] int64, only when some sequence is shorter than seq_length
    h0: np.ndarray | None  # [num_dir, batch, hidden]
    c0: np.ndarray | None
    p: np.ndarray | None  # [num_dir, 3*hidden]
    hidden: int
    out_dtype: np.dtype


_FLOAT_TYPES = ("float16", "float32", "float64", "bfloat16")


def _inputs(args: list[Any], config: RnnConfig, call: Call) -> _Inputs:
    cell, nd = config.cell, config.num_directions
    args = list(args) + [None] * (len(INPUTS) - len(args))
    given = dict(zip(INPUTS, args))

    def fail(message: str) -> ExecutionError:
        return ExecutionError(f"{where(call.path, call.op_type, call.iteration)}: {message}", node=call.path,
                              op_type=call.op_type, iteration=call.iteration)

    for name in ("X", "W", "R"):
        if not isinstance(given[name], np.ndarray):
            raise fail(f"input {name} is missing" if given[name] is None else f"input {name} is not a tensor")
    x = given["X"]
    if x.dtype.name not in _FLOAT_TYPES:
        raise fail(f"X is {x.dtype.name}; {cell.op_type} takes {', '.join(_FLOAT_TYPES)}")
    for name in ("W", "R", "B", "initial_h", "initial_c", "P"):
        value = given[name]
        if value is not None and (not isinstance(value, np.ndarray) or value.dtype != x.dtype):
            kind = value.dtype.name if isinstance(value, np.ndarray) else type(value).__name__
            raise fail(f"input {name} is {kind} but X is {x.dtype.name}; they must share one type")
    if x.ndim != 3:
        raise fail(f"X must be 3-D ({'[batch, seq, input]' if config.layout else '[seq, batch, input]'}), "
                   f"got shape {x.shape}")
    if config.layout:
        x = x.transpose(1, 0, 2)
    seq, batch, input_size = x.shape
    r = given["R"]
    hidden = config.hidden_size if config.hidden_size is not None else (r.shape[-1] if r.ndim == 3 else 0)
    g = len(cell.gates)

    def check_shape(name: str, want: tuple[int, ...]) -> np.ndarray | None:
        value: np.ndarray | None = given[name]
        if value is not None and value.shape != want:
            raise fail(f"input {name} has shape {value.shape}; with hidden_size {hidden}, input_size "
                       f"{input_size}, batch_size {batch} and {nd} direction(s) it must be {want}")
        return value

    check_shape("W", (nd, g * hidden, input_size))
    check_shape("R", (nd, g * hidden, hidden))
    check_shape("B", (nd, 2 * g * hidden))
    state_shape = (batch, nd, hidden) if config.layout else (nd, batch, hidden)
    h0 = check_shape("initial_h", state_shape)
    c0 = check_shape("initial_c", state_shape) if cell.op_type == "LSTM" else None
    p = check_shape("P", (nd, 3 * hidden)) if cell.op_type == "LSTM" else None
    if config.layout:
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)

    lens = given["sequence_lens"]
    if lens is not None:
        if not isinstance(lens, np.ndarray) or lens.dtype.kind not in "iu":
            raise fail("sequence_lens must be an int32 tensor")
        if lens.shape != (batch,):
            raise fail(f"sequence_lens has shape {lens.shape}; it must be [batch_size] = ({batch},)")
        bad = (lens < 0) | (lens > seq)
        if bad.any():
            b = int(np.argmax(bad))
            raise fail(f"sequence_lens[{b}] = {int(lens[b])} is outside [0, seq_length={seq}]")
        lens = lens.astype(np.int64) if (lens < seq).any() or seq == 0 else None
    elif seq == 0:
        lens = np.zeros(batch, np.int64)  # no step at all: every sequence is empty

    compute = np.float64 if x.dtype == np.float64 else np.float32

    def dense(value: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(value, dtype=compute)

    def cast(value: np.ndarray | None) -> np.ndarray | None:
        return None if value is None else dense(value)

    return _Inputs(dense(x), dense(given["W"]), dense(r), cast(given["B"]), lens, cast(h0), cast(c0), cast(p),
                   hidden, x.dtype)


# ---- the time loops ------------------------------------------------------------------------------
# Inside the loops every per-step value is laid out [gate, hidden, batch]: the recurrent products R·Hᵀ write
# all gates of a step as one contiguous block, and every elementwise operation runs on contiguous arrays
# (numpy's fast loops; strided views cost two to three times more). The recurrent product is one stacked
# matmul over the gates: each gate's product stays below the size at which OpenBLAS splits work across
# threads, whose hand-offs cost far more than such small products once other processes share the cores.
def _schedule(seq: int, lens: np.ndarray | None, reverse: bool) -> list[tuple[int, np.ndarray | None]]:
    """(time step, batch columns to keep from the previous state or None when all are valid), in processing
    order. Steps where no sequence is valid are left out; a reverse direction starts at each one's end."""
    steps: list[tuple[int, np.ndarray | None]]
    if lens is None:
        steps = [(t, None) for t in range(seq)]
    else:
        shortest = int(lens.min())
        steps = [(t, None if t < shortest else (t >= lens)[None, :]) for t in range(int(lens.max()))]
    return steps[::-1] if reverse else steps


@dataclass
class _Direction:
    """One direction's view of the shared buffers, hidden-major."""

    r: np.ndarray  # [gates, hidden, hidden]
    rb: np.ndarray | None  # [hidden, batch]: Rbh, added each step (GRU with linear_before_reset only)
    gates: np.ndarray  # [seq, gates, hidden, batch]: X·Wᵀ (+ biases) on entry, each step's gates on exit
    y: np.ndarray  # [seq, hidden, batch]: H per step
    h0: np.ndarray  # [hidden, batch]
    acts: tuple[ActivationFn, ...]  # f, g[, h] of this direction
    steps: list[tuple[int, np.ndarray | None]]


def _columns(vector: np.ndarray, batch: int) -> np.ndarray:
    """A [..., hidden, 1] vector repeated over the batch columns (contiguous operands beat broadcasting)."""
    return np.ascontiguousarray(np.broadcast_to(vector, vector.shape[:-1] + (batch,)))


def _gru(d: _Direction, config: RnnConfig) -> tuple[np.ndarray, None]:
    matmul, add, multiply, subtract = np.matmul, np.add, np.multiply, np.subtract
    f, g = d.acts[0], d.acts[1]
    clip = config.clip
    hidden, batch = d.h0.shape
    rec = np.empty((3, hidden, batch), d.h0.dtype)
    tmp = np.empty((hidden, batch), d.h0.dtype)
    h_prev = d.h0
    for t, keep in d.steps:
        gt, h_out = d.gates[t], d.y[t]
        zr, z, r, hh = gt[:2], gt[0], gt[1], gt[2]
        if config.linear_before_reset:
            matmul(d.r, h_prev, out=rec)
            add(zr, rec[:2], out=zr)
            if clip is not None:
                np.clip(zr, -clip, clip, out=zr)
            f(zr, zr)
            if d.rb is not None:
                add(rec[2], d.rb, out=rec[2])
            multiply(rec[2], r, out=rec[2])  # r (.) (Rh·Ht-1 + Rbh)
        else:
            matmul(d.r[:2], h_prev, out=rec[:2])
            add(zr, rec[:2], out=zr)
            if clip is not None:
                np.clip(zr, -clip, clip, out=zr)
            f(zr, zr)
            multiply(r, h_prev, out=tmp)
            matmul(d.r[2], tmp, out=rec[2])  # Rh·(r (.) Ht-1)
        add(hh, rec[2], out=hh)
        if clip is not None:
            np.clip(hh, -clip, clip, out=hh)
        g(hh, hh)
        subtract(h_prev, hh, out=tmp)  # Ht = (1 - z) h + z Ht-1 = h + z (Ht-1 - h)
        multiply(tmp, z, out=tmp)
        add(hh, tmp, out=h_out)
        if keep is not None:
            np.copyto(h_out, h_prev, where=keep)
        h_prev = h_out
    return h_prev, None


def _lstm(d: _Direction, config: RnnConfig, c0: np.ndarray, cells: np.ndarray,
          peephole: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    matmul, add, multiply = np.matmul, np.add, np.multiply
    f, g, h = d.acts
    clip, forget_is_input = config.clip, config.input_forget
    hidden, batch = d.h0.shape
    rec = np.empty((4, hidden, batch), d.h0.dtype)
    tmp = np.empty((hidden, batch), d.h0.dtype)
    peep = np.zeros((3, hidden, 1), d.h0.dtype) if peephole is None else peephole.reshape(3, hidden, 1)
    p_i, p_o, p_f = _columns(peep, batch)  # unused zeros without peepholes
    h_prev, c_prev = d.h0, c0
    sigmoid_block = slice(0, 2) if forget_is_input else slice(0, 3)  # i, o[, f] when o needs no Ct
    for t, keep in d.steps:
        gt, h_out, c_out = d.gates[t], d.y[t], cells[t]
        i, o, fg, c = gt[0], gt[1], gt[2], gt[3]
        matmul(d.r, h_prev, out=rec)
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


def _rnn(d: _Direction, config: RnnConfig) -> tuple[np.ndarray, None]:
    f = d.acts[0]
    clip = config.clip
    rec = np.empty(d.h0.shape, d.h0.dtype)
    h_prev = d.h0
    for t, keep in d.steps:
        a, h_out = d.gates[t][0], d.y[t]
        np.matmul(d.r[0], h_prev, out=rec)
        np.add(a, rec, out=a)
        if clip is not None:
            np.clip(a, -clip, clip, out=rec)  # `a` records the pre-activation before the clip
            f(rec, h_out)
        else:
            f(a, h_out)
        if keep is not None:
            np.copyto(h_out, h_prev, where=keep)
        h_prev = h_out
    return h_prev, None


# ---- the kernel ----------------------------------------------------------------------------------
def _project_inputs(inp: _Inputs, config: RnnConfig, gates: np.ndarray) -> None:
    """Writes X·Wᵀ of every step into `gates` ([seq, direction, gate, hidden, batch], the loops' layout) as
    one stacked matrix product per direction, plus the biases that need no per-step work; each step then adds
    its recurrent product in place."""
    x, hidden, nd = inp.x, inp.hidden, config.num_directions
    seq, batch, _ = x.shape
    n_gates = len(config.cell.gates)
    for k in range(nd):  # per direction, each step's product stays below OpenBLAS's threading threshold
        np.matmul(inp.w[k], x.transpose(0, 2, 1), out=gates[:, k].reshape(seq, n_gates * hidden, batch))
    if inp.b is not None:
        folded = inp.b[:, :n_gates * hidden] + inp.b[:, n_gates * hidden:]
        if config.cell.op_type == "GRU" and config.linear_before_reset:
            wbh = slice(*config.cell.block(2, hidden))
            folded[:, wbh] = inp.b[:, wbh]  # Rbh goes inside r (.) (...)
        gates += folded.reshape(nd, n_gates, hidden, 1)


def _run(config: RnnConfig, activations: tuple[tuple[ActivationFn, ...], ...], args: list[Any], call: Call,
         n_outputs: int) -> tuple[list[Any], EventInfo]:
    cell = config.cell
    is_lstm = cell.op_type == "LSTM"
    lbr_bias = cell.op_type == "GRU" and config.linear_before_reset
    inp = _inputs(args, config, call)
    hidden, nd = inp.hidden, config.num_directions
    seq, batch, _ = inp.x.shape
    n_gates = len(cell.gates)
    dtype = inp.x.dtype
    step_bytes = seq * nd * batch * hidden * dtype.itemsize
    call.engine.check_bytes((n_gates + 2 + is_lstm) * step_bytes, "recording its gates", call.path,
                            call.op_type, call.iteration)

    gates = np.empty((seq, nd, n_gates, hidden, batch), dtype)
    _project_inputs(inp, config, gates)
    y = np.empty((seq, nd, hidden, batch), dtype)
    cells = np.empty((seq, nd, hidden, batch), dtype) if is_lstm else None
    y_h = np.empty((nd, hidden, batch), dtype)
    y_c = np.empty((nd, hidden, batch), dtype) if is_lstm else None
    zeros = np.zeros((hidden, batch), dtype)

    def state(initial: np.ndarray | None, k: int) -> np.ndarray:
        return zeros if initial is None else np.ascontiguousarray(initial[k].T)

    with np.errstate(over="ignore"):
        for k in range(nd):
            reverse = config.direction == "reverse" or k == 1
            rb = None
            if lbr_bias and inp.b is not None:
                rbh = slice(*cell.block(2, hidden, half=1))
                rb = _columns(inp.b[k, rbh, None], batch)
            r = inp.r[k].reshape(n_gates, hidden, hidden)
            d = _Direction(r, rb, gates[:, k], y[:, k], state(inp.h0, k), activations[k],
                           _schedule(seq, inp.lens, reverse))
            if cell.op_type == "GRU":
                y_h[k], _ = _gru(d, config)
            elif cells is not None and y_c is not None:
                peephole = None if inp.p is None else inp.p[k]
                y_h[k], y_c[k] = _lstm(d, config, state(inp.c0, k), cells[:, k], peephole)
            else:
                y_h[k], _ = _rnn(d, config)

    batch_major = (0, 1, 3, 2)  # [seq, dir, hidden, batch] -> [seq, dir, batch, hidden]
    recorded = {name: gates[:, :, j].transpose(batch_major) for j, name in enumerate(cell.recorded)}
    if cells is not None:
        recorded["C"] = cells.transpose(batch_major)
    if inp.lens is None:
        mask = np.ones((seq, nd, batch), bool)
    else:
        mask = np.repeat((np.arange(seq)[:, None] < inp.lens[None, :])[:, None, :], nd, axis=1)
        padded = ~mask[:, :, None, :]
        np.copyto(gates, np.nan, where=padded[:, :, None])
        if cells is not None:
            np.copyto(cells, np.nan, where=padded)
        np.copyto(y, 0, where=padded)
        empty = inp.lens == 0  # no step at all: onnxruntime gives zeros, not the initial state
        y_h[:, :, empty] = 0
        if y_c is not None:
            y_c[:, :, empty] = 0
    y_out = np.ascontiguousarray(y.transpose(batch_major))
    recorded["H"] = y_out if inp.lens is None else np.where(mask[..., None], y_out, np.nan)
    recorded["mask"] = mask

    def output(value: np.ndarray, perm: tuple[int, ...]) -> np.ndarray:
        value = np.ascontiguousarray(value.transpose(perm))
        return value if value.dtype == inp.out_dtype else value.astype(inp.out_dtype)

    # y_out is [seq, dir, batch, hidden]; states are [dir, hidden, batch]
    produced = [output(y_out, (2, 0, 1, 3) if config.layout else (0, 1, 2, 3)),
                output(y_h, (2, 0, 1) if config.layout else (0, 2, 1))]
    if y_c is not None:
        produced.append(output(y_c, (2, 0, 1) if config.layout else (0, 2, 1)))
    return produced[:n_outputs], {"gates": recorded}


def rnn_kernel(node: NodeRef, program: Program) -> SpecialKernel:
    config = rnn_config(node, program.opsets.get("", 1))
    activations = tuple(tuple(_activation_fn(a) for a in direction) for direction in config.activations)
    n_outputs = len(node.proto.output)

    def kernel(args: list[Any], call: Call) -> tuple[list[Any], EventInfo]:
        return _run(config, activations, args, call, n_outputs)

    return kernel

