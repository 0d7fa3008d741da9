"""Helpers the shape, indexing and sequence case tables share."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .gen import NARROWED, rng, schema_types, since_versions, values
from .harness import Case, Cast

Judge = Callable[[np.dtype], Cast | None]


def i64(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


def sample(r: np.random.Generator, dims: tuple[int, ...], dtype: object) -> np.ndarray:
    """Random values of any schema type, strings included."""
    if np.dtype(dtype) == object:
        return np.array([f"s{v}" for v in r.integers(0, 9, size=int(np.prod(dims)))], dtype=object).reshape(dims)
    return np.asarray(values(r, dims, dtype))


def same_values(does: str, to: Any = np.int64, **kwargs: Any) -> Judge:
    """The cast judge of an op that only moves, keeps, compares or zero-fills values (`does` says which): the
    sampled integers (at most 4 in size), bools and strings (relabelled as codes, '' as 0) are the same values in
    `to`; float64 is narrowed to float32."""
    exact = Cast(to, f"small integers, bools and strings (as codes, '' as 0) are the same values in {np.dtype(to)}: "
                     f"the op only {does} them", **kwargs)

    def choose(dtype: np.dtype) -> Cast | None:
        return exact if dtype.kind in "biuO" else NARROWED if dtype == np.float64 else None

    return choose


def dtype_sweep(op: str, version: int, make: Callable[[np.random.Generator, np.dtype], Case],
                param: str = "T", cast: Judge | None = None) -> list[Case]:
    """One case per type the schema allows; where onnxruntime lacks a type, `cast` gives the case's judge."""
    found = []
    for dtype in schema_types(op, version, param):
        if dtype.kind not in "biufO":
            continue  # 2-bit integers: onnxruntime cannot take them from Python
        case = make(rng(op, version, str(dtype)), dtype)
        case.dtype_sweep = True
        if cast is not None and case.cast is None:
            case.cast = cast(dtype)
        if version == 1 and dtype == np.float16:
            case.judge_version = since_versions(op)[1]
            case.reason = (f"onnxruntime cannot load float16 {op}-1 (the Cast it inserts is malformed at opset 1); "
                           f"{op}-{case.judge_version} computes the same")
        found.append(case)
    return found
