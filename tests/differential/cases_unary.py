"""Elementwise unary math (explorer/executor/ops/unary.py)."""
from __future__ import annotations

import math

import numpy as np

from explorer.executor.ops.unary import UNARY

from .gen import narrowed, rng, schema_types, shape, since_versions, values
from .harness import Case

TYPE_PARAM = {"IsNaN": "T1", "IsInf": "T1"}
# inputs inside the domain where the function is defined (NaN outside it is checked by the special values)
DOMAIN = {"Acos": (-1, 1), "Asin": (-1, 1), "Atanh": (-1, 1), "Acosh": (1, 5), "Log": (0, 5), "Sqrt": (0, 5)}


ERF_OF_INTS = "onnxruntime has no integer Erf: Python's math.erf of each value, truncated to the integer type"


def _judge(op: str, dtype: np.dtype, x: np.ndarray) -> dict:
    if op == "Erf" and dtype.kind in "iu":  # float32's erf(4) rounds to 1, the exact value truncates to 0
        return {"expected": [np.trunc([math.erf(v) for v in x.ravel()]).astype(dtype).reshape(x.shape)],
                "reason": ERF_OF_INTS}
    return narrowed(dtype)


def _legacy(op: str, version: int) -> dict:
    """Version 1's consumed_inputs changes nothing: onnxruntime at version 6 judges it."""
    if version == 1 and op != "Not":
        return {"attrs": {"consumed_inputs": [0]}, "judge_version": 6,
                "reason": f"onnxruntime implements {op} from 6; 1 adds only the no-op consumed_inputs"}
    return {}


def cases() -> list[Case]:
    found = []
    for op in [*UNARY, "IsInf"]:
        for version in since_versions(op):
            for dtype in schema_types(op, version, TYPE_PARAM.get(op, "T")):
                r = rng(op, version, str(dtype))
                low, high = DOMAIN.get(op, (-4, 4))
                special = not (op == "Sign" and dtype == np.float16)  # see the NaN case below
                x = values(r, shape(r), dtype, low, high, special=special)
                extra = _legacy(op, version)
                if op == "IsInf":
                    for negative, positive in ((1, 1), (0, 1), (1, 0), (0, 0)):
                        found.append(Case(op, version, [x], {"detect_negative": negative,
                                                             "detect_positive": positive}, dtype_sweep=True))
                    continue
                empty = values(r, (2, 0, 3), dtype)
                found.append(Case(op, version, [x], dtype_sweep=True, **extra, **_judge(op, dtype, x)))
                found.append(Case(op, version, [empty], dtype_sweep=True, **extra, **_judge(op, dtype, empty)))
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.0, np.nan, np.inf], np.float32)
    found.append(Case("Round", 22, [halves]))  # half to even
    signs = np.array([np.nan, -np.inf, -2, -0.0, 0, 3, np.inf], np.float16)
    found.append(Case("Sign", 13, [signs], expected=[np.sign(signs)],
                      reason="onnxruntime's float16 Sign gives 0 for NaN (its float32 and float64 Sign give NaN)"))
    x = np.concatenate([np.linspace(-6, 6, 97), [0.0, -0.0, 1e-8, np.nan, np.inf, -np.inf]])
    found.append(Case("Erf", 13, [x], expected=[np.array([math.erf(v) for v in x])],
                      reason="onnxruntime has no float64 Erf; Python's math.erf is the judge"))
    return found
