"""Optionals: an optional is the value itself (tensor or sequence), or None when empty."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel


def optional(op: OpNode) -> PlainKernel:
    """Optional: wraps its input, or makes an empty optional (of the `type` attribute) without one."""
    if op.input_count() == 0 and not op.has("type"):
        raise op.error("an empty Optional needs its 'type' attribute")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (args[0] if args else None,)

    return run


def optional_has_element(op: OpNode) -> PlainKernel:
    """OptionalHasElement-15 (input required), 18 (input may be omitted, or a plain tensor or sequence)."""

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        value = args[0] if args else None
        return (np.array(value is not None),)

    return run


def optional_get_element(op: OpNode) -> PlainKernel:
    """OptionalGetElement: the optional's value; an empty optional is an error. From 18 a plain tensor or
    sequence passes through (explorer holds optionals unwrapped, so 15 accepts them too)."""

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        if args[0] is None:
            raise ValueError("the optional is empty: it has no element to get")
        return (args[0],)

    return run


KERNELS: dict[str, KernelFactory] = {
    "Optional": optional,
    "OptionalHasElement": optional_has_element,
    "OptionalGetElement": optional_get_element,
}
