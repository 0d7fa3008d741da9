"""Reductions and ArgMax/ArgMin (explorer/executor/ops/reduction.py)."""
from __future__ import annotations

import numpy as np
import onnx

from explorer.executor.ops.reduction import REDUCTIONS

from .gen import float16_at_opset1, rng, schema_types, shape, since_versions, values
from .harness import Case, Cast

# onnxruntime lacks the unsigned 32- and 64-bit reductions and the int16 and unsigned ArgMax/ArgMin: the same values
# as int64 (0 to 3 here), the result cast back
WRAPS = Cast(np.int64, "unsigned values below 2**63 in int64, cast back: integer sums and products agree modulo "
                       "2**32 and 2**64, maxima and minima keep their order, the roots and logs of the same sums "
                       "truncate alike")
ORDERED = Cast(np.int64, "the values (0 to 4) keep their order and their ties in int64: the same indices")


def _cast(dtype: np.dtype, cast: Cast) -> dict:
    return {"cast": cast} if dtype.kind in "iu" else {}


def _axes_choices(r: np.random.Generator, rank: int) -> list[list[int] | None]:
    choices: list[list[int] | None] = [None]
    if rank:
        choices += [[int(r.integers(0, rank))], [-1], sorted({0, rank - 1})]
    return choices


def _reduce(op: str, version: int, dtype: np.dtype) -> list[Case]:
    found = []
    extra = float16_at_opset1(op, version, dtype) | _cast(dtype, WRAPS)
    by_input = "axes" not in onnx.defs.get_schema(op, version).attributes
    r = rng(op, version, str(dtype))
    low = 0 if op in ("ReduceLogSum", "ReduceL2") else -3  # log of a negative sum is NaN in both; keep it rare
    if op == "ReduceLogSum" and dtype.kind in "iu":
        low = 1  # an integer log of 0 is undefined
    for rank in (1, 2, 3, 4):
        # onnxruntime's LogSumExp drops NaN next to Inf (the spec's case below); its Max/Min keep or drop NaN
        # depending on version and type (explorer keeps it, as numpy does)
        special = rank == 3 and op not in ("ReduceLogSumExp", "ReduceMax", "ReduceMin")
        x = values(r, shape(r, rank, 1, 4), dtype, low, 3, special=special)
        for axes in _axes_choices(r, rank):
            for keep in (0, 1):
                attrs: dict = {"keepdims": keep}
                if by_input:
                    inputs = [x] if axes is None else [x, np.array(axes, np.int64)]
                    found.append(Case(op, version, inputs, attrs, dtype_sweep=True, **extra))
                else:
                    found.append(Case(op, version, [x], attrs | ({} if axes is None else {"axes": axes}),
                                      dtype_sweep=True, **extra))
    x = values(r, (2, 3), dtype, low, 3)
    if by_input:
        for noop in (0, 1):
            found.append(Case(op, version, [x, np.array([], np.int64)], {"noop_with_empty_axes": noop},
                              dtype_sweep=True, **extra))
            found.append(Case(op, version, [x], {"noop_with_empty_axes": noop}, dtype_sweep=True, **extra))
    empty = values(r, (2, 0, 3), dtype)
    if dtype == np.bool_:  # onnxruntime fails on empty bool reductions; the spec gives False (Max) or True (Min)
        spec = np.full((2, 1, 3), op == "ReduceMin")
        found.append(Case(op, version, [empty, np.array([1], np.int64)], expected=[spec],
                          reason="onnxruntime fails on an empty bool reduction; the spec's identity is the result"))
        return found
    inputs, attrs = ([empty, np.array([1], np.int64)], {}) if by_input else ([empty], {"axes": [1]})
    if dtype.kind == "u" and op in ("ReduceMean", "ReduceLogSum"):
        return found  # the spec leaves an empty integer mean or log sum undefined
    if dtype.kind == "u" and op in ("ReduceMax", "ReduceMin") and dtype.itemsize >= 4:  # int64's bounds are not
        identity = np.iinfo(dtype).min if op == "ReduceMax" else np.iinfo(dtype).max  # the unsigned type's
        found.append(Case(op, version, inputs, attrs, expected=[np.full((2, 1, 3), identity, dtype)],
                          reason="onnxruntime lacks the type; the spec: an empty max (min) is the type's lowest "
                                 "(highest) value", **float16_at_opset1(op, version, dtype)))
        return found
    found.append(Case(op, version, inputs, attrs, dtype_sweep=True, **extra))
    return found


def _arg(op: str, version: int, dtype: np.dtype) -> list[Case]:
    found = []
    extra = float16_at_opset1(op, version, dtype) | _cast(dtype, ORDERED)
    r = rng(op, version, str(dtype))
    for rank in (1, 2, 3):
        x = values(r, shape(r, rank, 1, 5), dtype, 0, 3)  # few distinct values: ties
        axes = range(-rank if version >= 11 else 0, rank)
        for axis in axes:
            for keep in (0, 1):
                attrs = {"axis": axis, "keepdims": keep}
                found.append(Case(op, version, [x], attrs, dtype_sweep=True, **extra))
                if version >= 12:
                    found.append(Case(op, version, [x], attrs | {"select_last_index": 1}, dtype_sweep=True, **extra))
    found.append(Case(op, version, [values(r, (3, 4), dtype)], dtype_sweep=True, **extra))  # default axis 0, keepdims 1
    return found


def cases() -> list[Case]:
    found = []
    for op in REDUCTIONS:
        for version in since_versions(op):
            for dtype in schema_types(op, version):
                if op == "ReduceLogSumExp" and dtype.kind in "iu":
                    continue  # onnxruntime truncates its intermediates: the spec's case below
                if op == "ReduceLogSum" and version >= 18 and dtype.kind in "iu":
                    continue  # onnxruntime's ReduceLogSum-18 (a function) rejects integers; earlier versions cover them
                found += _reduce(op, version, dtype)
    x = np.array([[0, 1], [2, 3]], np.int32)
    found.append(Case("ReduceLogSumExp", 18, [x, np.array([1], np.int64)], {"keepdims": 0},
                      expected=[np.array([1, 3], np.int32)],  # log(1 + e) = 1.31, log(e^2 + e^3) = 3.31
                      reason="onnxruntime truncates exp() to integers first; the spec's log(sum(exp(x))) does not"))
    for op in ("ArgMax", "ArgMin"):
        for version in since_versions(op):
            for dtype in schema_types(op, version):
                found += _arg(op, version, dtype)
    x = np.array([[1, np.inf, np.nan], [1, np.inf, 2], [-np.inf, -np.inf, -np.inf], [1, 2, 3]], np.float32)
    with np.errstate(all="ignore"):
        spec = np.log(np.sum(np.exp(x.astype(np.float64)), axis=1)).astype(np.float32)
    found.append(Case("ReduceLogSumExp", 18, [x, np.array([1], np.int64)], {"keepdims": 0}, expected=[spec],
                      reason="onnxruntime gives Inf for a row holding Inf and NaN; log(sum(exp(x))) is NaN"))
    big = np.array([[2**32 - 1, 2**32 - 2, 7], [1, 2, 3]], np.uint32)  # sums past 2**32 wrap
    for version in (1, 13):
        axes = ([np.array([1], np.int64)], {}) if version == 13 else ([], {"axes": [1]})
        found.append(Case("ReduceSum", version, [big, *axes[0]], axes[1] | {"keepdims": 0}, cast=Cast(
            np.int64, "sums of three values below 2**32 are exact in int64; cast back, they wrap modulo 2**32")))
    found.append(Case("ReduceSum", 13, [np.zeros((2, 3), np.float32), np.array([2], np.int64)],
                      error="out of range"))
    found.append(Case("ReduceMax", 18, [np.zeros((2, 3), np.float32), np.array([1, -1], np.int64)],
                      error="repeat an axis"))
    return found
