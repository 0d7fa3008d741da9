"""Elementwise binary operators (explorer/executor/ops/binary.py)."""
from __future__ import annotations

import numpy as np

from explorer.executor.ops.binary import ARITHMETIC, BITWISE, COMPARISON, LOGICAL

from .gen import broadcast_pair, rng, schema_types, since_versions, values
from .harness import Case, Cast

SMALL_EXPONENTS = Cast(np.int64, "exponents 0 to 3 are the same numbers in int64", params=("T1",))
LEGACY_REASON = "onnxruntime implements {op} from 7; with equal or trailing shapes {version} computes the same"


def _operands(op: str, version: int, dtype: np.dtype, r: np.random.Generator) -> list[np.ndarray]:
    sa, sb = broadcast_pair(r)
    a = values(r, sa, dtype, special=True)
    if op in ("Div", "Mod") and dtype.kind in "iu":
        b = values(r, sb, dtype, 1, 4) * np.asarray(r.choice([1, -1] if dtype.kind == "i" else [1], size=sb),
                                                    dtype=dtype)
    elif op == "BitShift" or op == "Pow" and dtype.kind in "iu":
        b = values(r, sb, dtype, 0, 3)
    else:
        b = values(r, sb, dtype, special=True)
    return [a, b]


def _sweep(op: str, attrs: dict | None = None, param: str = "T") -> list[Case]:
    found = []
    for version in since_versions(op):
        for dtype in schema_types(op, version, param):
            r = rng(op, version, str(dtype), sorted((attrs or {}).items()))
            legacy = {}
            if "broadcast" in _attributes(op, version):
                consumed = {"consumed_inputs": [0]} if "consumed_inputs" in _attributes(op, version) else {}
                legacy = {"attrs": {"broadcast": 1, **consumed},
                          "judge_version": 7, "reason": LEGACY_REASON.format(op=op, version=version)}
                sa, sb = broadcast_pair(r)
                a = values(r, sa if len(sa) >= len(sb) else sb, dtype, special=True)
                b = values(r, a.shape[len(a.shape) - min(len(sa), len(sb)):], dtype, 1, 4)
                found.append(Case(op, version, [a, b], dtype_sweep=True, **legacy))
                continue
            found.append(Case(op, version, _operands(op, version, dtype, r), dict(attrs or {}), dtype_sweep=True))
            empty = values(r, (0, 3), dtype)
            found.append(Case(op, version, [empty, values(r, (1, 3), dtype, 1, 3)], dict(attrs or {}),
                              dtype_sweep=True))
    return found


def _attributes(op: str, version: int) -> set[str]:
    import onnx

    return set(onnx.defs.get_schema(op, version).attributes)


def _legacy_axis_cases(op: str, fn, dtype: type = np.float32) -> list[Case]:
    """broadcast=1 with axis: B lines up with A's axes from `axis` (the spec's own examples), dims of 1 in B
    expanded as the opset-6 exporters meant them (PyTorch's outputs and onnx.reference agree)."""
    found = []
    for version in (v for v in since_versions(op) if v < 7):
        allowed = schema_types(op, version)
        dtype = next((t for t in (dtype, np.float32, np.int32) if np.dtype(t) in allowed), allowed[0])
        r = rng(op, version, "axis")
        a = values(r, (2, 3, 4, 5), dtype, 1, 4)
        b = values(r, (3, 4), dtype, 1, 4)
        c = values(r, (2,), dtype, 1, 4)
        found.append(Case(op, version, [a, b], {"broadcast": 1, "axis": 1}, expected=[fn(a, b.reshape(3, 4, 1))],
                          reason=f"onnxruntime implements {op} from 7, which has no axis"))
        found.append(Case(op, version, [a, c], {"broadcast": 1, "axis": 0},
                          expected=[fn(a, c.reshape(2, 1, 1, 1))],
                          reason=f"onnxruntime implements {op} from 7, which has no axis"))
        for attrs, dims, shaped in (({"axis": 0}, (2, 1), (2, 1, 1, 1)), ({"axis": 1}, (1, 4, 1), (1, 4, 1)),
                                    ({}, (4, 1), (4, 1)), ({"axis": -2}, (1, 5), (1, 5))):
            d = values(r, dims, dtype, 1, 4)
            found.append(Case(op, version, [a, d], {"broadcast": 1, **attrs}, expected=[fn(a, d.reshape(shaped))],
                              reason=f"onnxruntime implements {op} from 7; the spec's size-1 expansion by hand"))
        found.append(Case(op, version, [a, values(r, (3, 2), dtype)], {"broadcast": 1, "axis": 1},
                          error="does not match A"))
        found.append(Case(op, version, [a, a], {"broadcast": 0}, judge_version=7,
                          reason="equal shapes without broadcast compute the same at 7"))
        found.append(Case(op, version, [a, b], {"broadcast": 0}, error="broadcast is 0"))
    return found


def cases() -> list[Case]:
    found = []
    for op in ARITHMETIC:
        found += _sweep(op)
    found += _legacy_axis_cases("Add", np.add) + _legacy_axis_cases("Mul", np.multiply)
    found += _legacy_axis_cases("Sub", np.subtract) + _legacy_axis_cases("Div", np.divide)
    for op in COMPARISON:
        found += _sweep(op)
    found += _legacy_axis_cases("Equal", np.equal) + _legacy_axis_cases("Greater", np.greater)
    found += _legacy_axis_cases("Less", np.less)
    for op, fn in LOGICAL.items():
        found += _sweep(op, param="T") + _legacy_axis_cases(op, fn, np.bool_)
    for op in BITWISE:
        found += _sweep(op)
    found += _sweep("Mod", {"fmod": 1})
    found += [c for c in _sweep("Mod", {"fmod": 0}) if c.inputs[0].dtype.kind in "iu" or c.version >= 28]
    found.append(Case("Mod", 13, [np.ones(2, np.float32), np.ones(2, np.float32)], {"fmod": 0},
                      error="fmod must be 1"))
    found += _sweep("BitShift", {"direction": "LEFT"}) + _sweep("BitShift", {"direction": "RIGHT"})
    found += _sweep("Pow") + _legacy_axis_cases("Pow", np.power)
    found += _pow_mixed()
    r = rng("Div", "trunc")
    found.append(Case("Div", 14, [np.array([7, -7, 7, -7, 0], np.int32), np.array([2, 2, -2, -2, 3], np.int32)]))
    found.append(Case("Add", 14, [values(r, (2,), np.int32), values(r, (2,), np.int64)],
                      error="wants one type for both (T)"))
    found.append(Case("Equal", 19, [np.array(["a", "b", ""], dtype=object), np.array(["a", "c", ""], dtype=object)]))
    return found


def _pow_mixed() -> list[Case]:
    """Pow from 12 on: the exponent's type (T1) may differ from the base's (T)."""
    found = []
    for version in (v for v in since_versions("Pow") if v >= 12):
        for base in schema_types("Pow", version, "T"):
            for exponent in schema_types("Pow", version, "T1"):
                if base == exponent:
                    continue
                r = rng("Pow", version, str(base), str(exponent))
                a = values(r, (3, 4), base, 1, 3)
                b = values(r, (4,), exponent, 0, 3)
                found.append(Case("Pow", version, [a, b], dtype_sweep=True,
                                  **({"cast": SMALL_EXPONENTS} if exponent.kind in "iu" else {})))
    return found
