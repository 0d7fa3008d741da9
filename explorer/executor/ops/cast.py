"""Cast and CastLike. Numbers convert as numpy's astype does for in-range values (floats to integers truncate);
strings parse as numbers ("INF", "-inf", "NaN" in any case), and numbers print as onnxruntime prints them
(floats with 8 significant digits, "INF", "-INF", "NaN"). Cast-1 names its target type as a string. Casts to or
from the 8-, 4- and 2-bit types (where `saturate` and `round_mode` matter) run onnx.reference's kernel.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import onnx

from ..reference import reference_kernel
from .base import KernelFactory, OpNode, PlainKernel

if TYPE_CHECKING:
    from ...graph import NodeRef
    from ..program import Program

STRING = np.dtype(object)


def _format(value: object) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "NaN"
        if np.isinf(value):
            return "INF" if value > 0 else "-INF"
        return f"{float(value):.8g}"
    return str(value)


def _to_string(x: np.ndarray) -> np.ndarray:
    return np.array([_format(v) for v in x.reshape(-1).tolist()], dtype=object).reshape(x.shape)


def _from_string(x: np.ndarray, target: np.dtype) -> np.ndarray:
    texts = [str(v.decode() if isinstance(v, bytes) else v).strip() for v in x.reshape(-1)]
    if target.kind in "iu":
        parsed: list[int | bool | float] = [int(t) for t in texts]
    elif target.kind == "b":
        parsed = [int(t) != 0 for t in texts]
    else:
        parsed = [float(t) for t in texts]
    return np.array(parsed).astype(target).reshape(x.shape)


def _is_native(dtype: np.dtype) -> bool:
    return dtype.kind in "biufO" and dtype.type.__module__ == "numpy"


def _converter(target: np.dtype, exotic: PlainKernel | None) -> PlainKernel:
    def convert(args: list[Any]) -> tuple[Any, ...]:
        x = args[0]
        if x.dtype == target:
            return (x,)
        if exotic is not None and not _is_native(x.dtype):
            return exotic(args)
        if target == STRING:
            return (_to_string(x),)
        if x.dtype.kind in "OUS":
            return (_from_string(x, target),)
        return (x.astype(target),)

    return convert


def _target(op: OpNode, to: object) -> np.dtype:
    if isinstance(to, str):  # Cast-1: the type's name
        code = getattr(onnx.TensorProto, to.upper(), None)
        if not isinstance(code, int):
            raise op.error(f"'to' names no tensor type: {to!r}")
        to = code
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(to)))  # type: ignore[call-overload]
    except (KeyError, ValueError, TypeError):
        raise op.error(f"'to' = {to!r} is not a tensor type") from None


def _reference(node: NodeRef, program: Program) -> PlainKernel:
    """onnx.reference's kernel for the node, built the first time a cast needs it."""
    built: list[PlainKernel] = []

    def run(args: list[Any]) -> tuple[Any, ...]:
        if not built:
            built.append(reference_kernel(node, program))
        return built[0](args)

    return run


def cast_kernel(node: NodeRef, program: Program) -> PlainKernel:
    op = OpNode(node, program)
    target = _target(op, op.attr("to"))
    if not _is_native(target):
        return reference_kernel(node, program)
    return _converter(target, _reference(node, program))


def cast_like_kernel(node: NodeRef, program: Program) -> PlainKernel:
    OpNode(node, program)
    exotic = _reference(node, program)

    def run(args: list[Any]) -> tuple[Any, ...]:
        target = args[1].dtype
        if not _is_native(target):
            return exotic(args)
        return _converter(target, exotic)(args[:1])

    return run


KERNELS: dict[str, KernelFactory] = {"Cast": cast_kernel, "CastLike": cast_like_kernel}
