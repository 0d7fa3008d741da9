"""Sum/Mean/Max/Min, Where, CumSum/CumProd and Constant (ops/variadic.py, ops/constant.py)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from .gen import broadcast_pair, float16_at_opset1, narrowed, rng, schema_types, since_versions, values
from .harness import Case, Cast

ORDERED = Cast(np.int64, "the values (at most 4 in size) keep their order in int64: the same maxima and minima")
WRAPS = Cast(np.int64, "integers below 2**63 in int64, cast back: sums and products agree modulo 2**bits")
PICKED = Cast(np.int64, "small integers, and bools as 0 and 1, are the same values in int64: Where only picks them",
              params=("T",))


def _cast(dtype: np.dtype, ints: Cast) -> dict:
    return {"cast": ints} if dtype.kind in "iu" else narrowed(dtype)


def _folds() -> list[Case]:
    found = []
    for op in ("Sum", "Mean", "Max", "Min"):
        for version in since_versions(op):
            for dtype in schema_types(op, version):
                r = rng(op, version, str(dtype))
                extra = float16_at_opset1(op, version, dtype)
                if version == 1:
                    extra = extra or {"judge_version": 6, "reason": f"{op}-1 adds only consumed_inputs to 6"}
                    extra = {**extra, "attrs": {"consumed_inputs": [0]}}
                ints = ORDERED if op in ("Max", "Min") else WRAPS
                extra |= _cast(dtype, ints)
                same = values(r, (2, 3), dtype, special=True)
                for count in (1, 2, 3):
                    found.append(Case(op, version, [values(r, (2, 3), dtype, special=True) for _ in range(count)],
                                      dtype_sweep=True, **extra))
                if version >= 8:
                    a, b = broadcast_pair(r)
                    found.append(Case(op, version, [values(r, a, dtype), values(r, b, dtype),
                                                    values(r, b[-1:], dtype)], dtype_sweep=True,
                                      **_cast(dtype, ints)))
                else:
                    found.append(Case(op, version, [same, same[:1]], error="broadcasting starts at version 8"))
    return found


def _where() -> list[Case]:
    found = []
    for version in since_versions("Where"):
        for dtype in schema_types("Where", version):
            r = rng("Where", version, str(dtype))
            x = np.array(["a", "bb", "c"], dtype=object) if dtype.kind == "O" else values(r, (3,), dtype)
            found.append(Case("Where", version, [values(r, (2, 1), np.bool_), x, x[::-1].copy()], dtype_sweep=True,
                              **({"cast": PICKED} if dtype.kind in "biu" else narrowed(dtype))))
    return found


def _cumulative() -> list[Case]:
    found = []
    for op in ("CumSum", "CumProd"):
        for version in since_versions(op):
            for dtype in schema_types(op, version):
                r = rng(op, version, str(dtype))
                x = values(r, (2, 3, 4), dtype, 1, 3)
                for axis in (0, 1, -1):
                    for exclusive in (0, 1):
                        for reverse in (0, 1):
                            found.append(Case(op, version, [x, np.array(axis, np.int32)],
                                              {"exclusive": exclusive, "reverse": reverse}, dtype_sweep=True,
                                              **_cast(dtype, WRAPS)))
                found.append(Case(op, version, [x, np.array([1], np.int64)], dtype_sweep=True, **_cast(dtype, WRAPS)))
    found.append(Case("CumSum", 14, [np.zeros((2, 3), np.float32), np.array(2, np.int64)], error="out of range"))
    return found


def _constant() -> list[Case]:
    found = []
    sparse = helper.make_sparse_tensor(helper.make_tensor("v", TensorProto.FLOAT, [2], [5.0, 7.0]),
                                       helper.make_tensor("i", TensorProto.INT64, [2], [1, 4]), [2, 3])
    settings = [{"value": helper.make_tensor("t", TensorProto.INT32, [2, 2], [1, 2, 3, 4])},
                {"sparse_value": sparse}, {"value_float": 1.5}, {"value_floats": [1.0, 2.5]}, {"value_int": 7},
                {"value_ints": [1, -2, 3]}, {"value_string": "hi"}, {"value_strings": ["a", "bc"]}]
    for version in since_versions("Constant"):
        for attrs in settings:
            name = next(iter(attrs))
            if name in helper.make_node("Constant", [], ["y"]).attribute or not _defined(version, name):
                continue
            if name == "sparse_value":
                found.append(Case("Constant", version, [], attrs, expected=[np.array([[0, 5, 0], [0, 7, 0]],
                                                                                     np.float32)],
                                  reason="onnxruntime hands Python a SparseTensor; the spec's output is dense"))
                continue
            found.append(Case("Constant", version, [], attrs))
    return found


def _defined(version: int, attribute: str) -> bool:
    import onnx

    return attribute in onnx.defs.get_schema("Constant", version).attributes


def cases() -> list[Case]:
    return _folds() + _where() + _cumulative() + _constant()
