"""Elementwise binary operators: arithmetic, comparisons, logic and bitwise operators, with the spec's type rules.

Since version 7 inputs broadcast both ways (numpy's rule). Versions 1 and 6 broadcast only with `broadcast=1`:
B matches a contiguous run of A's axes starting at `axis` (the trailing ones when `axis` is not set), each of its
dims equal to A's or 1 (as the opset-6 exporters wrote them: Add of (2, 3) and (2, 1) with axis=0); the result
has A's shape.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel, as_array

Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncates toward zero, as C does (numpy's // floors)."""
    if a.dtype.kind not in "iu":
        return np.divide(a, b)
    quotient = np.floor_divide(a, b)
    if a.dtype.kind == "i":
        inexact = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        quotient = quotient + inexact.astype(a.dtype)
    return quotient


def _power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The result has the base's type; integer bases with integer exponents stay exact."""
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and not (b < 0).any():
        return np.power(a, b.astype(a.dtype, copy=False))
    if a.dtype.kind not in "iu" and a.dtype == b.dtype:
        return np.power(a, b)
    return np.power(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)


def _equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "O" or b.dtype.kind == "O":
        return np.asarray(np.equal(a.astype(str), b.astype(str)), dtype=bool)
    return np.equal(a, b)


ARITHMETIC: dict[str, Binary] = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": _divide}
COMPARISON: dict[str, Binary] = {"Equal": _equal, "Greater": np.greater, "Less": np.less,
                                 "GreaterOrEqual": np.greater_equal, "LessOrEqual": np.less_equal}
LOGICAL: dict[str, Binary] = {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}
BITWISE: dict[str, Binary] = {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or,
                              "BitwiseXor": np.bitwise_xor}
ALL = {**ARITHMETIC, **COMPARISON, **LOGICAL, **BITWISE, "Pow": _power}


def _legacy_broadcast(op: OpNode) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
    """How versions 1 and 6 reshape B to A (None from version 7 on, where numpy's rule applies)."""
    if "broadcast" not in (op.schema.attributes if op.schema is not None else {}):
        return None
    broadcast, axis = op.get_int("broadcast", 0), op.attr("axis")

    def reshape(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if not broadcast:
            if a.shape != b.shape:
                raise op.error(f"shapes {a.shape} and {b.shape} differ and broadcast is 0")
            return b
        if b.size == 1:
            return b.reshape(())
        start = a.ndim - b.ndim if axis is None else (axis + a.ndim if axis < 0 else axis)
        matched = a.shape[start:start + b.ndim] if start >= 0 else ()
        if len(matched) != b.ndim or any(db not in (da, 1) for da, db in zip(matched, b.shape)):
            raise op.error(f"B of shape {b.shape} does not match A {a.shape} from axis {start}")
        return b.reshape(b.shape + (1,) * (a.ndim - start - b.ndim))

    return reshape


def binary_kernel(op: OpNode) -> PlainKernel:
    fn = ALL[op.op_type]
    legacy = _legacy_broadcast(op)
    same_types = op.op_type != "Pow" or op.version < 12
    if legacy is None and same_types:
        return _same_typed(op, fn)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b = args
        if same_types and a.dtype != b.dtype:
            raise op.error(f"input types differ ({a.dtype} and {b.dtype})")
        if legacy is not None:
            b = legacy(a, b)
        return (as_array(fn(a, b)),)

    return run


def _same_typed(op: OpNode, fn: Binary) -> PlainKernel:
    """The common case, kept short (it runs for most nodes of many models): numpy's broadcasting, both inputs of
    one type. numpy's own dtypes are singletons, so `is` settles the usual case before `!=` compares."""
    ndarray, asarray = np.ndarray, np.asarray

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b = args
        if a.dtype is not b.dtype and a.dtype != b.dtype:
            raise op.error(f"input types differ ({a.dtype} and {b.dtype})")
        out = fn(a, b)
        return (out if type(out) is ndarray else asarray(out),)

    return run


def mod_kernel(op: OpNode) -> PlainKernel:
    fmod = op.get_int("fmod")
    floor_for_floats = op.version >= 28  # before 28, floating-point inputs need fmod=1

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b = args
        if a.dtype != b.dtype:
            raise op.error(f"input types differ ({a.dtype} and {b.dtype})")
        if a.dtype.kind not in "iu" and not fmod and not floor_for_floats:
            raise op.error("fmod must be 1 for floating-point inputs")
        return (as_array(np.fmod(a, b) if fmod else np.mod(a, b)),)

    return run


def bit_shift_kernel(op: OpNode) -> PlainKernel:
    direction = op.get_str("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise op.error(f"direction must be LEFT or RIGHT, got {direction!r}")
    shift = np.left_shift if direction == "LEFT" else np.right_shift

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b = args
        if a.dtype != b.dtype:
            raise op.error(f"input types differ ({a.dtype} and {b.dtype})")
        return (as_array(shift(a, b)),)

    return run


KERNELS: dict[str, KernelFactory] = {
    **{name: binary_kernel for name in ALL},
    "BitShift": bit_shift_kernel,
    "Mod": mod_kernel,
}
