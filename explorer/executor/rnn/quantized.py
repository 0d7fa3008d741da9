"""onnxruntime's DynamicQuantizeLSTM (com.microsoft): an LSTM whose W and R are uint8/int8, stored transposed
([directions, input or hidden, 4 hidden]) with a scale and zero point per direction or per column. It runs the LSTM
cell loops of this package, so every gate of every step is recorded as LSTM's are.

onnxruntime multiplies integers: X (all of it), and H before every recurrent product (each batch item's row of
each direction), are quantized to uint8 over their own range widened to 0 (scale (max - min) / 255, zero point
-min / scale rounded), as in DynamicQuantizeLinear. explorer dequantizes the weights and rounds X and H to the
same uint8 grid, so its float products are onnxruntime's integer ones up to float rounding."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...spec.rnn import QUANTIZED_INPUTS, dequantized_weights
from ..ops.base import Call, OpNode, SpecialKernel
from .kernel import configured, failure, run_cells
from .rnn_inputs import read_inputs

if TYPE_CHECKING:
    from ...trace.trace import EventInfo


def uint8_grid(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """x rounded to the uint8 grid onnxruntime quantizes it to, the range taken over `axes` (float32 arithmetic,
    round half to even, a range of 0 giving scale 1)."""
    low = np.minimum(x.min(axis=axes, keepdims=True, initial=0.0), np.float32(0))
    high = np.maximum(x.max(axis=axes, keepdims=True, initial=0.0), np.float32(0))
    scale = np.where(high == low, np.float32(1), (high - low) / np.float32(255)).astype(np.float32)
    zero = np.rint(np.clip(np.float32(0) - low / scale, 0, 255)).astype(np.float32)
    quantized = np.clip(np.rint(x / scale) + zero, 0, 255)
    rounded: np.ndarray = ((quantized - zero) * scale).astype(np.float32)
    return rounded


def dynamic_quantize_lstm_kernel(op: OpNode) -> SpecialKernel:
    config, activations, n_outputs = configured(op)  # checked against onnxruntime's schema

    def kernel(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        fail = failure(call)
        given = list(args) + [None] * (12 - len(args))
        for name, value in zip(("X", "W", "R", *QUANTIZED_INPUTS), [*given[:3], *given[8:12]]):
            if not isinstance(value, np.ndarray):
                raise fail(f"input {name} is missing")
        x = given[0]
        if x.dtype != np.float32:
            raise fail(f"X is {x.dtype.name}; DynamicQuantizeLSTM takes float32")
        try:
            w = dequantized_weights(given[1], given[8], given[9])
            r = dequantized_weights(given[2], given[10], given[11])
        except ValueError as exc:
            raise fail(str(exc)) from None
        rounded_x = uint8_grid(x, tuple(range(x.ndim))) if x.size else x
        inputs = read_inputs([rounded_x, w, r, *given[3:8]], config, fail)
        return run_cells(config, activations, inputs, call, n_outputs,
                         lambda h: uint8_grid(h, (2,)))  # H is [direction, batch, hidden]: per row of each

    return kernel
