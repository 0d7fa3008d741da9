"""Checks made before a kernel allocates: for operators whose output can be much bigger than their inputs, the
output's size computed from the inputs (and attributes) alone, so Limits.max_tensor_bytes stops the node before
any memory is taken. Generic and separate from the kernels: a guard only reads shapes and small shape tensors; a
guard that cannot read malformed inputs lets the kernel report them."""
from __future__ import annotations

from collections.abc import Callable

import onnx

from . import layer_bounds as layers
from . import shapes
from .shapes import Guard, product_bound2

_BY_INPUTS: dict[str, Guard] = {**shapes.BY_INPUTS, **layers.BY_INPUTS}
_BY_NODE: dict[str, Callable[[onnx.NodeProto], Guard]] = {**shapes.BY_NODE, **layers.BY_NODE}


def guard_for(node: onnx.NodeProto) -> Guard | None:
    """A function estimating the output bytes of a node from its inputs, for ops that may allocate a lot."""
    if node.domain not in ("", "ai.onnx"):
        return None
    make = _BY_NODE.get(node.op_type)
    return make(node) if make is not None else _BY_INPUTS.get(node.op_type)


def quick_guard_for(node: onnx.NodeProto) -> Guard | None:
    """A cheap upper bound of the node's output bytes, checked before `guard_for`'s estimate (which then runs only
    when the bound is over the limit), for ops whose estimate costs more than their usual execution: the
    broadcasting elementwise ops, which are most nodes of many models. None when the estimate is cheap itself."""
    if node.domain not in ("", "ai.onnx"):
        return None
    make = shapes.QUICK_BY_NODE.get(node.op_type)
    return make(node) if make is not None else None


__all__ = ["Guard", "guard_for", "product_bound2", "quick_guard_for"]
