"""Attributes of a node as one table: every attribute its operator version defines, set or defaulted, read once
when a kernel is built (the checks against the version are ops.base.OpNode's)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import OpNode, node_error

if TYPE_CHECKING:
    from ...graph import NodeRef
    from ..program import Program

refuse = node_error


def node_attributes(node: NodeRef, program: Program) -> tuple[int, dict[str, Any]]:
    """(since_version, {attribute: value}) for a node: the node's value, else its version's default, else None."""
    op = OpNode(node, program)
    names = op.schema.attributes if op.schema is not None else {}
    return op.version, {name: op.attr(name) for name in names}
