"""Kernels that pass values through: values are never mutated in place, so Identity returns its input (no copy).
Optionals are in optional.py."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import KernelFactory, OpNode, PlainKernel


def identity_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (args[0],)

    return run


KERNELS: dict[str, KernelFactory] = {"Identity": identity_kernel}
