"""Small kernels explorer keeps for itself: values are never mutated in place, so Identity passes its input
through (no copy), and an optional is the value itself or None when empty (onnx.reference wraps it in a list,
which OptionalHasElement / OptionalGetElement then misread)."""
from __future__ import annotations

from .kernels import register_plain


@register_plain("Optional")
def optional_kernel(node, program):
    def run(args: list) -> tuple:
        return (args[0] if args else None,)

    return run


@register_plain("Identity")
def identity_kernel(node, program):
    def run(args: list) -> tuple:
        return (args[0],)

    return run
