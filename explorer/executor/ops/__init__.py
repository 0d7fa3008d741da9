"""explorer's own operator kernels: one module per operator family, gathered here in one explicit table.

Each family module defines `KERNELS: dict[str, KernelFactory]` (op_type of the default domain -> factory
`factory(node, program) -> fn(args: list) -> tuple of outputs`). Nothing registers itself by being imported:
a family missing from `FAMILIES` is a failing test, not a silent fallback to onnx.reference.
"""
from __future__ import annotations

from . import conv, detection, linalg, normalization, pool, quantize, resize

FAMILIES = (conv, detection, linalg, normalization, pool, quantize, resize)
