"""onnxruntime's DynamicQuantizeLSTM (explorer/executor/rnn/quantized.py)."""
from __future__ import annotations

import numpy as np

from .contrib_support import DOMAIN
from .gen import rng, values
from .harness import Case

SEQ, BATCH, INPUT, HIDDEN = 4, 2, 3, 5
TOL = (1e-4, 1e-5)


def _quantized(r: np.random.Generator, directions: int, rows: int, dtype: type, per_column: bool,
               small: bool = False) -> list:
    """Weights [directions, rows, 4 hidden] of `dtype` with their scale and zero point."""
    shape = (directions, 4 * HIDDEN) if per_column else (directions,)
    scale = values(r, shape, np.float32, 0.005, 0.02)
    if dtype is np.int8:
        zero = np.zeros(shape, np.int8)  # onnxruntime wants signed zero points at 0
    else:
        zero = np.full(shape, 128 if per_column else r.integers(100, 150), np.uint8)
    low, high = (-64, 63) if small else (-128, 255)  # small: within 2 · 255 · 64, onnxruntime exact on any CPU
    return [values(r, (directions, rows, 4 * HIDDEN), dtype, low, high), scale, zero]


def _lstm(r: np.random.Generator, direction: str = "forward", dtype: type = np.uint8, per_column: bool = False,
          bias: bool = True, states: bool = False, peepholes: bool = False, lengths: np.ndarray | None = None,
          small: bool = False, **attrs) -> Case:
    directions = 2 if direction == "bidirectional" else 1
    w, w_scale, w_zero = _quantized(r, directions, INPUT, dtype, per_column, small)
    rr, r_scale, r_zero = _quantized(r, directions, HIDDEN, dtype, per_column, small)
    state = (directions, BATCH, HIDDEN)
    inputs = [values(r, (SEQ, BATCH, INPUT), np.float32, -2, 2), w, rr,
              values(r, (directions, 8 * HIDDEN), np.float32, -0.5, 0.5) if bias else None, lengths,
              values(r, state, np.float32, -1, 1) if states else None,
              values(r, state, np.float32, -1, 1) if states else None,
              values(r, (directions, 3 * HIDDEN), np.float32, -0.5, 0.5) if peepholes else None,
              w_scale, w_zero, r_scale, r_zero]
    return Case("DynamicQuantizeLSTM", 1, inputs, {"hidden_size": HIDDEN, "direction": direction, **attrs},
                outputs=3, domain=DOMAIN, tol=TOL)


def cases() -> list[Case]:
    r = rng("DynamicQuantizeLSTM")
    found = []
    for direction in ("forward", "reverse", "bidirectional"):
        for dtype, per_column in ((np.uint8, False), (np.int8, False), (np.int8, True), (np.uint8, True)):
            found.append(_lstm(r, direction, dtype, per_column))
    lengths = np.array([4, 2], np.int32)
    found += [
        _lstm(r, "bidirectional", states=True, peepholes=True),
        _lstm(r, "forward", bias=False),
        _lstm(r, "bidirectional", lengths=lengths, states=True),
        _lstm(r, "reverse", lengths=lengths),
        _lstm(r, "forward", clip=0.5, input_forget=1),
        _lstm(r, "forward", activations=["HardSigmoid", "Tanh", "Softsign"], activation_alpha=[0.3],
              activation_beta=[0.4]),
        _lstm(r, "bidirectional", activations=["Sigmoid", "Tanh", "Tanh", "Sigmoid", "Relu", "Tanh"]),
        _lstm(r, "bidirectional", np.int8, per_column=True, small=True, states=True),
    ]
    bad = _lstm(r)
    bad.inputs[8] = np.ones((3,), np.float32)
    bad.error, bad.tol = "need a scale and zero point of shape", None
    found.append(bad)
    return found
