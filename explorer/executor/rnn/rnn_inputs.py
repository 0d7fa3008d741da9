"""A GRU/LSTM/RNN node's inputs checked against its config (types, shapes, sequence lengths) and made ready for
the time loop: the computation dtype, X in layout 0."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ...errors import ExecutionError
from ...spec.rnn import INPUTS, RnnConfig

FLOAT_TYPES = ("float16", "float32", "float64", "bfloat16")
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


@dataclass
class RnnInputs:
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


def read_inputs(args: Sequence[Any], config: RnnConfig, fail: Callable[[str], ExecutionError]) -> RnnInputs:
    """The node's inputs (by position, omitted ones None) checked; `fail(message)` makes the error to raise."""
    cell, nd = config.cell, config.num_directions
    given = (*args, *_OMITTED[len(args):]) if len(args) < len(INPUTS) else tuple(args)
    x, w, r, b, lens_given, h0, c0, p = given[:len(INPUTS)]
    for name, value in (("X", x), ("W", w), ("R", r)):
        if not isinstance(value, np.ndarray):
            raise fail(f"input {name} is missing" if value is None else f"input {name} is not a tensor")
    if not _is_float(x.dtype):
        raise fail(f"X is {x.dtype.name}; {cell.op_type} takes {', '.join(FLOAT_TYPES)}")
    dtype = x.dtype
    for name, value in zip(INPUTS[1:], given[1:len(INPUTS)]):
        if name != "sequence_lens" and value is not None \
                and (not isinstance(value, np.ndarray) or value.dtype != dtype):
            kind = value.dtype.name if isinstance(value, np.ndarray) else type(value).__name__
            raise fail(f"input {name} is {kind} but X is {dtype.name}; they must share one type")
    if x.ndim != 3:
        raise fail(f"X must be 3-D ({'[batch, seq, input]' if config.layout else '[seq, batch, input]'}), "
                   f"got shape {x.shape}")
    if config.layout:
        x = x.transpose(1, 0, 2)
    seq, batch, input_size = x.shape
    hidden = config.hidden_size if config.hidden_size is not None else (r.shape[-1] if r.ndim == 3 else 0)
    g = len(cell.gates)
    state_shape = (batch, nd, hidden) if config.layout else (nd, batch, hidden)
    is_lstm = cell.op_type == "LSTM"
    if not is_lstm:
        c0 = p = None
    for name, value, want in (("W", w, (nd, g * hidden, input_size)), ("R", r, (nd, g * hidden, hidden)),
                              ("B", b, (nd, 2 * g * hidden)), ("initial_h", h0, state_shape),
                              ("initial_c", c0, state_shape), ("P", p, (nd, 3 * hidden))):
        if value is not None and value.shape != want:
            raise fail(f"input {name} has shape {value.shape}; with hidden_size {hidden}, input_size "
                       f"{input_size}, batch_size {batch} and {nd} direction(s) it must be {want}")
    if config.layout:
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    lens = _sequence_lens(lens_given, seq, batch, fail)
    compute = _F64 if dtype == _F64 else _F32
    return RnnInputs(_dense(x, compute), _dense(w, compute), _dense(r, compute), _dense(b, compute), lens,
                     _dense(h0, compute), _dense(c0, compute), _dense(p, compute), hidden, dtype)


_OMITTED = (None,) * len(INPUTS)


def _dense(value: Any, compute: np.dtype) -> Any:
    """`value` C-contiguous in the computation type (None stays None)."""
    if value is None or (value.dtype is compute and value.flags.c_contiguous):  # the usual case: no call
        return value
    return np.ascontiguousarray(value, dtype=compute)


@cache
def _is_float(dtype: np.dtype) -> bool:
    return dtype.name in FLOAT_TYPES  # numpy computes a dtype's name in Python: asked once per dtype


def _sequence_lens(lens: Any, seq: int, batch: int, fail: Callable[[str], ExecutionError]) -> np.ndarray | None:
    """The lengths as int64 when some sequence is shorter than seq_length, else None."""
    if lens is None:
        return np.zeros(batch, np.int64) if seq == 0 else None  # no step at all: every sequence is empty
    if not isinstance(lens, np.ndarray) or lens.dtype.kind not in "iu":
        raise fail("sequence_lens must be an int32 tensor")
    if lens.shape != (batch,):
        raise fail(f"sequence_lens has shape {lens.shape}; it must be [batch_size] = ({batch},)")
    bad = (lens < 0) | (lens > seq)
    if bad.any():
        b = int(np.argmax(bad))
        raise fail(f"sequence_lens[{b}] = {int(lens[b])} is outside [0, seq_length={seq}]")
    return lens.astype(np.int64) if (lens < seq).any() or seq == 0 else None
