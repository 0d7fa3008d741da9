"""Each value's precision on one side: the narrowest float type it was computed through (its own type, or the
precision one of its float inputs carries), one step of its scale for a quantized value, by (node path, value
name); read from an explorer trace's events in execution order."""
from __future__ import annotations

from typing import Any

import numpy as np

from .precision import FLOAT32, QUANTIZING, Tolerance, is_float, of_dtype, quantized, widest
from .recording import Key, Recording


def precisions(recording: Recording) -> dict[Key, Tolerance]:
    """The precision of every value a recording's trace produced (empty without a trace)."""
    found: dict[Key, Tolerance] = {}
    if recording.trace is None:
        return found
    carried: dict[str, Tolerance] = {}  # value name -> its precision (the latest producer of that name)
    for event in recording.trace.events:
        inputs = [carried.get(name) or of_dtype(value.dtype)
                  for name, value in zip(event.site.inputs, event.input_values) if is_float(value)]
        for name, value in zip(event.site.outputs, event.output_values):
            tolerance = _own(event.op_type, value, event.input_values)
            if tolerance is None:
                continue
            if tolerance.precision != "quantized" and inputs:
                tolerance = widest([tolerance, *inputs])
                carried[name] = tolerance
            found[(event.node, name)] = tolerance
    return found


def _own(op_type: str, value: Any, inputs: tuple[Any, ...]) -> Tolerance | None:
    if op_type in QUANTIZING and isinstance(value, np.ndarray) and value.dtype.kind in "iu":
        return quantized(1.0)
    if op_type == "DequantizeLinear" and len(inputs) > 1 and is_float(value):
        scale = np.asarray(inputs[1], dtype=np.float64)
        step = float(np.max(np.abs(scale))) if scale.size else 0.0
        own = of_dtype(value.dtype)
        return Tolerance(own.rtol, own.atol + step, "quantized", own.eps)
    if is_float(value):
        return of_dtype(value.dtype)
    return None


def pair_tolerance(a: Key, b: Key, ours: dict[Key, Tolerance], theirs: dict[Key, Tolerance],
                   b_value: Any = None) -> Tolerance:
    """A pair's tolerance: the wider of its two sides' precisions (B's from its value's type when B has no
    trace)."""
    found = [t for t in (ours.get(a), theirs.get(b)) if t is not None]
    if b not in theirs and is_float(b_value):
        found.append(of_dtype(b_value.dtype))
    return widest(found) if found else FLOAT32
