"""ConstantOfShape, Range, EyeLike, Trilu at every version."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, numpy_helper

from .gen import rng, schema_types, since_versions, values
from .harness import Case
from .tensor_gen import dtype_sweep, i64, same_values, sample


def constant_of_shape_cases() -> list[Case]:
    found = []
    for version in since_versions("ConstantOfShape"):
        found += [Case("ConstantOfShape", version, [i64(2, 3)]), Case("ConstantOfShape", version, [i64()]),
                  Case("ConstantOfShape", version, [i64(0, 3)]),
                  Case("ConstantOfShape", version, [i64(2, -1)], error="negative dimensions")]
        for dtype in schema_types("ConstantOfShape", version, "T2"):
            if dtype.kind not in "biuf":
                continue
            fill = np.array([True]) if dtype == np.bool_ else np.array([3], dtype=dtype)
            found.append(Case("ConstantOfShape", version, [i64(2, 1)], {"value": numpy_helper.from_array(fill)},
                              dtype_sweep=True))
    return found


def range_cases() -> list[Case]:
    found = []
    for version in since_versions("Range"):
        for dtype in (np.float32, np.float64, np.int16, np.int32, np.int64):
            for start, limit, delta in [(0, 10, 3), (10, 4, -2), (1, 1, 1), (5, 1, 1), (-3, 7, 2)]:
                found.append(Case("Range", version, [np.array(v, dtype) for v in (start, limit, delta)]))
        found.append(Case("Range", version, [np.array(v, np.float32) for v in (0.5, 3.3, 0.7)]))
        found.append(Case("Range", version, [np.array(v, np.int64) for v in (0, 5, 0)], error="delta is 0"))
        start, limit, delta = (np.array(v, np.float32) for v in (0, 1000, 0.1))
        found.append(Case("Range", version, [start, limit, delta], reason="onnxruntime adds delta step by step "
                          "and drifts; the spec's start + i * delta gives these values",
                          expected=[start + np.arange(10000, dtype=np.float32) * delta]))
        if version >= 27:
            half = [np.array(v, np.float16) for v in (0, 3000, 1)]
            found.append(Case("Range", version, half, {"stash_type": 1}, reason="computed in float32 "
                              "(stash_type=1), every integer up to 2048 is exact in float16",
                              expected=[np.arange(3000, dtype=np.float32).astype(np.float16)]))
            found.append(Case("Range", version, half, {"stash_type": 11}, reason="computed in float64 "
                              "(stash_type=11)", expected=[np.arange(3000, dtype=np.float64).astype(np.float16)]))
            found.append(Case("Range", version, half, {"stash_type": 10}, error="is not 1 (float) or 11"))
    return found


def eye_like_cases() -> list[Case]:
    found = []
    for version in since_versions("EyeLike"):
        r = rng("EyeLike", version)
        for k in (0, 1, -2, 5, -5):
            found.append(Case("EyeLike", version, [values(r, (3, 4), np.float32)], {"k": k}))
        for code in (TensorProto.INT32, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.FLOAT):
            found.append(Case("EyeLike", version, [values(r, (3, 3), np.float32)], {"dtype": code}))
        found.append(Case("EyeLike", version, [values(r, (0, 3), np.float32)]))
        found.append(Case("EyeLike", version, [values(r, (3,), np.float32)], error="must be 2-D"))
        found += dtype_sweep("EyeLike", version, lambda r, t, v=version: Case("EyeLike", v, [sample(r, (2, 3), t)]),
                             "T1", cast=same_values("reads the shape of", tied=("T2",)))
    return found


def trilu_cases() -> list[Case]:
    found = []
    r = rng("Trilu", 14)
    for upper in (0, 1):
        for k in (None, 0, 1, -1, 5, -5):
            inputs = [values(r, (2, 3, 4), np.float32)] + ([] if k is None else [i64(k)])
            found.append(Case("Trilu", 14, inputs, {"upper": upper}))
        found.append(Case("Trilu", 14, [values(r, (4, 3), np.int64), i64(1)], {"upper": upper}))
    found.append(Case("Trilu", 14, [values(r, (0, 3), np.float32)]))
    found.append(Case("Trilu", 14, [values(r, (3,), np.float32)], error="at least 2 dimensions"))
    found += dtype_sweep("Trilu", 14, lambda r, t: Case("Trilu", 14, [sample(r, (3, 3), t)]),
                         cast=same_values("keeps or zeroes"))
    strings = np.array([["a", "b"], ["c", "d"]], dtype=object)
    found.append(Case("Trilu", 14, [strings], reason="onnxruntime has no string Trilu; the spec zeroes to ''",
                      expected=[np.array([["a", "b"], ["", "d"]], dtype=object)]))
    return found


def cases() -> list[Case]:
    return constant_of_shape_cases() + range_cases() + eye_like_cases() + trilu_cases()

