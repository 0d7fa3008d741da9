"""Cast (1, 6, 9, 13, 19, 21, 23, 24, 25, 28), CastLike (15, 19, 21, 23, 24, 25) and BitCast (26), at every element
type their schemas allow (the conversions are ops/element_types.py's). Cast-1 names its target type as a string; `saturate`
(19+) and `round_mode` (24+) matter only for the 8-bit float targets. BitCast keeps the bits of each element and
reads them as another type of the same width (little endian)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from .base import KernelFactory, OpNode, PlainKernel
from .element_types import FLOAT4, SMALL_INTS, STRING, bit_width, convert, element_dtype


def _target(op: OpNode) -> np.dtype:
    to = op.attr("to")
    if to is None:
        raise op.error("attribute 'to' is not set")
    if isinstance(to, str):  # Cast-1: the type's name
        code = getattr(onnx.TensorProto, to.upper(), None)
        if not isinstance(code, int):
            raise op.error(f"'to' names no tensor type: {to!r}")
        to = code
    try:
        return element_dtype(int(to))
    except ValueError as exc:
        raise op.error(f"'to' = {to!r}: {exc}") from None


def _converter(op: OpNode) -> tuple[bool, str]:
    """(saturate, round_mode) of the node at its version."""
    return bool(op.get_int("saturate", 1)), op.get_str("round_mode", "up")


def _run_convert(op: OpNode, x: np.ndarray, target: np.dtype, saturate: bool, round_mode: str) -> np.ndarray:
    try:
        return convert(np.asarray(x), target, saturate, round_mode)
    except ValueError as exc:
        raise op.error(f"cannot cast {np.asarray(x).dtype} to {target}: {exc}") from None


def cast_kernel(op: OpNode) -> PlainKernel:
    target = _target(op)
    saturate, round_mode = _converter(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (_run_convert(op, args[0], target, saturate, round_mode),)

    return run


def cast_like_kernel(op: OpNode) -> PlainKernel:
    saturate, round_mode = _converter(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, like = args
        target = STRING if np.asarray(like).dtype.kind in "OUS" else np.asarray(like).dtype
        return (_run_convert(op, x, target, saturate, round_mode),)

    return run


def _bits_of(x: np.ndarray) -> np.ndarray:
    """The bit pattern of each element of a sub-byte type, as uint8 (low bits)."""
    if x.dtype == FLOAT4:
        return x.view(np.uint8) & 0xF
    bits, _ = SMALL_INTS[x.dtype]
    return (x.astype(np.int8).view(np.uint8) & ((1 << bits) - 1)).astype(np.uint8)


def _from_bits(pattern: np.ndarray, target: np.dtype) -> np.ndarray:
    if target == FLOAT4:
        return pattern.view(FLOAT4)
    bits, signed = SMALL_INTS[target]
    values = pattern.astype(np.int16)
    if signed:
        values = np.where(values >= 1 << (bits - 1), values - (1 << bits), values)
    return values.astype(target)


def bit_cast_kernel(op: OpNode) -> PlainKernel:
    target = _target(op)
    if target == STRING:
        raise op.error("BitCast cannot produce strings")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = np.asarray(args[0])
        if x.dtype.kind in "OUS":
            raise op.error("BitCast cannot read strings")
        if bit_width(x.dtype) != bit_width(target):
            raise op.error(f"{x.dtype} ({bit_width(x.dtype)} bits) and {target} ({bit_width(target)} bits) differ "
                           "in width")
        if x.dtype == target:
            return (x,)
        if bit_width(target) < 8:
            return (_from_bits(_bits_of(x), target),)
        data = x if x.flags.c_contiguous else x.copy()
        return (data.view(target).reshape(x.shape),)

    return run


KERNELS: dict[str, KernelFactory] = {"BitCast": bit_cast_kernel, "Cast": cast_kernel, "CastLike": cast_like_kernel}
