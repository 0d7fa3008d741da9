"""Optional: an optional value is the value itself, or None when empty (onnx.reference wraps it in a list,
which OptionalHasElement / OptionalGetElement then misread)."""
from __future__ import annotations

from .kernels import register_plain


@register_plain("Optional")
def optional_kernel(node, program):
    def run(args: list) -> tuple:
        return (args[0] if args else None,)

    return run
