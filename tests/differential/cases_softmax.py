"""Softmax, LogSoftmax, Hardmax (explorer/executor/ops/softmax.py): 2-D coercion before 13, one axis from 13."""
from __future__ import annotations

import numpy as np

from .gen import NARROWED, rng, schema_types, shape, since_versions, values
from .harness import Case, Cast

ONE_HOT = Cast(np.float32, "random float64 values rounded to float32 keep their row's maximum (none within float32's "
                           "rounding of another): the same one-hot rows")


def cases() -> list[Case]:
    found = []
    for op in ("Softmax", "LogSoftmax", "Hardmax"):
        for version in since_versions(op):
            for dtype in schema_types(op, version):
                r = rng(op, version, str(dtype))
                extra = {}
                if version == 1 and dtype == np.float16:
                    extra = {"judge_version": 11, "reason": "onnxruntime rejects float16 at opset 1; 11 computes alike"}
                if dtype == np.float64:
                    extra["cast"] = ONE_HOT if op == "Hardmax" else NARROWED
                for rank in (1, 2, 3, 4):
                    x = values(r, shape(r, rank, 1, 5), dtype, -5, 5)
                    if rank > 1 or version >= 13:
                        found.append(Case(op, version, [x], dtype_sweep=True, **extra))  # the default axis
                    for axis in range(-rank if version > 1 else 0, rank):
                        found.append(Case(op, version, [x], {"axis": axis}, dtype_sweep=True, **extra))
                if op != "Hardmax" and dtype != np.float64:  # float64: see the case below
                    x = values(r, (2, 3, 4), dtype, special=True)
                    found.append(Case(op, version, [x], {"axis": 1}, dtype_sweep=True, **extra))
                found.append(Case(op, version, [values(r, (2, 0, 3), dtype)], {"axis": 1}, dtype_sweep=True, **extra))
            ties = np.array([[1, 3, 3, 0], [2, 2, 2, 2]], np.float32)
            found.append(Case(op, version, [ties], {"axis": -1}))
        found.append(Case(op, 13, [np.zeros((2, 3), np.float32)], {"axis": 2}, error="out of range"))
        if op != "Hardmax":
            x = np.array([[1, np.inf, 2], [np.nan, 1, 2], [-np.inf, 1, 2], [-np.inf, -np.inf, 0]], np.float64)
            shifted = x - x.max(axis=1, keepdims=True)
            total = np.exp(shifted).sum(axis=1, keepdims=True)
            spec = np.exp(shifted) / total if op == "Softmax" else shifted - np.log(total)
            found.append(Case(op, 13, [x], {"axis": 1}, expected=[spec],
                              reason="onnxruntime's float64 kernel gives finite values next to NaN/Inf"))
        found.append(Case(op, 11, [np.zeros(3, np.float32)], error="out of range"))  # default axis 1, rank 1
    return found
