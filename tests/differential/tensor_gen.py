"""Helpers the shape, indexing and sequence case tables share."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .gen import rng, schema_types, since_versions, values
from .harness import Case


def i64(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


def sample(r: np.random.Generator, dims: tuple[int, ...], dtype: object) -> np.ndarray:
    """Random values of any schema type, strings included."""
    if np.dtype(dtype) == object:
        return np.array([f"s{v}" for v in r.integers(0, 9, size=int(np.prod(dims)))], dtype=object).reshape(dims)
    return np.asarray(values(r, dims, dtype))


def dtype_sweep(op: str, version: int, make: Callable[[np.random.Generator, np.dtype], Case],
                param: str = "T") -> list[Case]:
    """One case per type the schema allows (not judged where onnxruntime lacks the type)."""
    found = []
    for dtype in schema_types(op, version, param):
        if dtype.kind not in "biufO":
            continue  # 2-bit integers: onnxruntime cannot take them from Python
        case = make(rng(op, version, str(dtype)), dtype)
        case.dtype_sweep = True
        if version == 1 and dtype == np.float16:
            case.judge_version = since_versions(op)[1]
            case.reason = (f"onnxruntime cannot load float16 {op}-1 (the Cast it inserts is malformed at opset 1); "
                           f"{op}-{case.judge_version} computes the same")
        found.append(case)
    return found
