"""Kernels that pass values through: values are never mutated in place, so Identity returns its input (no copy).
Optionals are in optional.py."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .base import KernelFactory, PlainKernel

if TYPE_CHECKING:
    from ...proto.graph import NodeRef
    from ..program import Program


def identity_kernel(node: NodeRef, program: Program) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (args[0],)

    return run


KERNELS: dict[str, KernelFactory] = {"Identity": identity_kernel}
