"""Kernels that pass values through: values are never mutated in place, so Identity returns its input (no copy),
and an optional is the value itself, or None when empty (onnx.reference wraps it in a list, which
OptionalHasElement / OptionalGetElement then misread)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .base import KernelFactory, PlainKernel

if TYPE_CHECKING:
    from ...graph import NodeRef
    from ..program import Program


def optional_kernel(node: NodeRef, program: Program) -> PlainKernel:
    def run(args: list) -> tuple:
        return (args[0] if args else None,)

    return run


def identity_kernel(node: NodeRef, program: Program) -> PlainKernel:
    def run(args: list) -> tuple:
        return (args[0],)

    return run


KERNELS: dict[str, KernelFactory] = {"Identity": identity_kernel, "Optional": optional_kernel}
