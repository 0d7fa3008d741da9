"""Activations (explorer/executor/ops/activation.py)."""
from __future__ import annotations

import numpy as np
import onnx

from .gen import narrowed, rng, schema_types, shape, since_versions, values
from .harness import Case, Cast

# attribute settings tried besides the defaults, per op
SETTINGS: dict[str, list[dict]] = {
    "LeakyRelu": [{"alpha": 0.3}, {"alpha": -1.5}],
    "ThresholdedRelu": [{"alpha": 0.5}, {"alpha": -2.0}],
    "HardSigmoid": [{"alpha": 0.5, "beta": 0.1}],
    "Elu": [{"alpha": 0.5}],
    "Selu": [{"alpha": 1.5, "gamma": 2.0}],
    "Celu": [{"alpha": 2.0}],
    "Gelu": [{"approximate": "tanh"}, {"approximate": "none"}],
    "Swish": [{"alpha": 0.5}],
    "Shrink": [{"bias": 1.5, "lambd": 1.0}, {"bias": -1.0, "lambd": 0.0}],
}
TOLERANCE = {("Shrink", np.dtype(np.float64)): (1e-6, 1e-7)}  # onnxruntime's double Shrink rounds through float
SMALL_INTS = Cast(np.float32, "integers of at most 6 in size are exact in float32, as are their products by the "
                             "slopes and their comparisons with the bounds")
SIMPLE = ["Relu", "Sigmoid", "HardSwish", "Softplus", "Softsign", "Mish", "Tanh", *SETTINGS]


def _cast(dtype: np.dtype) -> dict:
    return {"cast": SMALL_INTS} if dtype.kind in "iu" else narrowed(dtype)


def _legacy(op: str, version: int, dtype: object = None) -> dict:
    if version == 1 and op in ("Softplus", "Softsign") and dtype == np.float16:
        return {"judge_version": 22, "reason": f"onnxruntime rejects float16 {op} at opset 1; 22 adds only bfloat16"}
    attrs = onnx.defs.get_schema(op, version).attributes
    if "consumed_inputs" not in attrs:
        return {}
    return {"judge_version": 6, "reason": f"onnxruntime implements {op} from 6; 1 adds only consumed_inputs"}


def _with_consumed(op: str, version: int, attrs: dict) -> dict:
    if "consumed_inputs" in onnx.defs.get_schema(op, version).attributes:
        return {**attrs, "consumed_inputs": [0]}
    return attrs


def cases() -> list[Case]:
    found = []
    for op in SIMPLE:
        for version in since_versions(op):
            for dtype in schema_types(op, version):
                for attrs in [{}, *SETTINGS.get(op, [])]:
                    r = rng(op, version, str(dtype), sorted(attrs.items()))
                    x = values(r, shape(r), dtype, -6, 6, special=True)
                    found.append(Case(op, version, [x], _with_consumed(op, version, attrs), dtype_sweep=True,
                                      tol=TOLERANCE.get((op, dtype)), **_legacy(op, version, dtype), **_cast(dtype)))
            r = rng(op, version, "empty")
            found.append(Case(op, version, [values(r, (0, 2), np.float32)], **_legacy(op, version)))
    found += _prelu() + _clip()
    return found


def _prelu() -> list[Case]:
    found = []
    for version in since_versions("PRelu"):
        for dtype in schema_types("PRelu", version):
            r = rng("PRelu", version, str(dtype))
            x = values(r, (2, 3, 4), dtype, special=True)
            legacy = {}
            if version < 7:
                legacy = {"judge_version": 7, "attrs": _with_consumed("PRelu", version, {}),
                          "reason": "onnxruntime implements PRelu from 7; a same-shaped or one-element slope is alike"}
            for slope in (values(r, (2, 3, 4), dtype), values(r, (1,), dtype)):
                found.append(Case("PRelu", version, [x, slope], dtype_sweep=True, **legacy, **_cast(dtype)))
            if version < 7:  # a slope per channel: (C,) over (N, C, ...), as PyTorch's opset-6 exports meant it
                per_channel = values(r, (3,), dtype)
                found.append(Case("PRelu", version, [x, per_channel], dtype_sweep=True, **{
                    **legacy, "judge_version": None, "expected": [np.where(x < 0, x * per_channel[:, None], x)],
                    "reason": "onnxruntime implements PRelu from 7; the per-channel slope by hand"}))
            if version >= 7:
                for slope_shape in ((4,), (3, 1), (1, 3, 1)):
                    found.append(Case("PRelu", version, [x, values(r, slope_shape, dtype)], dtype_sweep=True,
                                      **_cast(dtype)))
    r = rng("PRelu", "bad")
    found.append(Case("PRelu", 16, [values(r, (2, 3), np.float32), values(r, (4,), np.float32)],
                      error="does not broadcast"))
    return found


def _clip() -> list[Case]:
    found = []
    for version in since_versions("Clip"):
        for dtype in schema_types("Clip", version):
            r = rng("Clip", version, str(dtype))
            # onnxruntime leaves float16 infinities unclipped (the case below)
            x = values(r, shape(r), dtype, -6, 6, special=version < 11 or dtype != np.float16)
            if version < 11:
                extra = {"judge_version": 6, "reason": "onnxruntime implements Clip from 6; 1 adds consumed_inputs"} \
                    if version == 1 else {}
                for attrs in ({}, {"min": -1.5}, {"max": 2.0}, {"min": -1.0, "max": 1.0}):
                    found.append(Case("Clip", version, [x], _with_consumed("Clip", version, attrs), dtype_sweep=True,
                                      **extra, **_cast(dtype)))
                continue
            low, high = np.array(1 if dtype.kind == "u" else -1.5).astype(dtype), np.array(2, dtype)
            for bounds in ([low, high], [low], [None, high], [], [high, low]):
                found.append(Case("Clip", version, [x, *bounds], dtype_sweep=True, **_cast(dtype)))
    x = np.array([-np.inf, -70000, 1, np.inf, np.nan], np.float32).astype(np.float16)
    found.append(Case("Clip", 13, [x], expected=[np.array([-65504, -65504, 1, 65504, np.nan], np.float16)],
                      reason="the spec clips to float16's lowest and highest; onnxruntime leaves infinities"))
    r = rng("Clip", "bad")
    found.append(Case("Clip", 13, [values(r, (3,), np.float32), np.zeros(2, np.float32)], error="must be a scalar"))
    return found
