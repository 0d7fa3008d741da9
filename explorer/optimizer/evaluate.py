"""Running one node on constant inputs with the kernel explorer's executor would build for it (same operator
version, same results as a run), for constant folding."""
from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import numpy as np
import onnx

from ..errors import cause_text
from ..executor.compiled import guarded_evaluate
from ..executor.float_errors import floating_errors_ignored
from ..executor.kernels import BODIES, op_kernel
from ..executor.ops.base import OpNode
from ..executor.program import step_of
from ..proto.graph import GraphRef, NodeRef

_NO_GRAPH = GraphRef(path="", proto=onnx.GraphProto())


class NotFoldable(Exception):
    """The node cannot be evaluated ahead of a run (the message says why)."""


def evaluate(proto: onnx.NodeProto, opsets: dict[str, int], args: list[np.ndarray | None],
             types: Callable[[str], onnx.TypeProto | None], max_bytes: int) -> list[np.ndarray]:
    """The outputs of `proto` on `args` (None for an omitted optional input). Raises NotFoldable when the node
    has no plain kernel, would allocate more than `max_bytes`, fails, or returns something other than tensors."""
    ref = NodeRef(path=proto.name, proto=proto, graph=_NO_GRAPH, index=0)
    imported = dict(opsets)
    imported.setdefault("", 1)
    try:
        op = OpNode(ref, imported, types)  # a folded node never calls a model-local function
        special = (op.domain, op.op_type) in BODIES
        if not special:
            fn, special = op_kernel(op)
    except Exception as exc:  # noqa: BLE001 - whatever stops the kernel from being built: no folding
        raise NotFoldable(f"no kernel: {cause_text(exc)}") from None
    if special:
        raise NotFoldable("its kernel runs bodies or recurrent cells")

    def refuse(size: int) -> NoReturn:
        raise NotFoldable(f"its result would take {size} bytes (limit {max_bytes})")

    try:
        with floating_errors_ignored():  # as in a run: NaN and Inf are values, not warnings
            outputs = guarded_evaluate(step_of(ref, fn, False), args, max_bytes, refuse)
    except NotFoldable:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the kernel refuses, the node stays
        raise NotFoldable(f"evaluation failed: {type(exc).__name__}: {cause_text(exc)}") from None
    arrays = []
    for value in outputs:
        if not isinstance(value, np.ndarray) and not np.isscalar(value):
            raise NotFoldable("a result is not a tensor")
        arrays.append(np.asarray(value))
    return arrays
