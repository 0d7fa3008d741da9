"""What the conv, pool, resize, normalization, quantize, linalg and detection families share: a node's attributes
as one table read once when its kernel is built (the checks against the version are ops.base.OpNode's), and
the dtype their arithmetic runs in."""
from __future__ import annotations

from typing import Any

import numpy as np

from .base import OpNode


def node_attributes(op: OpNode) -> tuple[int, dict[str, Any]]:
    """(since_version, {attribute: value}) for a node: the node's value, else its version's default, else None."""
    names = op.schema.attributes if op.schema is not None else {}
    return op.version, {name: op.attr(name) for name in names}


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype to compute in: float32 and float64 as they are, narrower floats (float16, bfloat16) in float32,
    integers in float64 (exact for the sums these kernels make)."""
    if dtype in (np.float32, np.float64):
        return dtype
    if dtype.kind in "iub":
        return np.dtype(np.float64)
    return np.dtype(np.float32)
