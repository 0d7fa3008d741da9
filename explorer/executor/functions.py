"""Calls of model-local functions: the function's body (its call's attributes bound) runs as a child frame, so
every node inside is recorded and control flow inside uses explorer's own kernels."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import UnsupportedOperatorError
from ..proto.graph_index import FUNCTION_BODY
from .ops.base import Call, SpecialKernel

if TYPE_CHECKING:
    from ..proto.graph import NodeRef
    from ..trace.trace import EventInfo
    from .compiled import Bodies


def calls_function(node: NodeRef, functions: Mapping[tuple[str, str], Any]) -> bool:
    """Whether the node calls one of `functions` (the model's, by (domain, name))."""
    return (node.domain, node.op_type) in functions


def function_kernel(node: NodeRef, bodies: Bodies) -> SpecialKernel:
    """The kernel of one call: binds actual inputs (missing optional ones as None) to the formal inputs."""
    body_path = f"{node.path}/{FUNCTION_BODY}"
    if not any(g.path == body_path for g in node.subgraphs):
        raise UnsupportedOperatorError(
            f"node {node.path!r} calls function {node.domain}.{node.op_type} recursively; explorer does not run "
            "recursive functions", node=node.path, op_type=node.op_type)
    name = f"{node.domain}.{node.op_type}" if node.domain else node.op_type

    def run(args: Sequence[Any], call: Call) -> tuple[list[Any], EventInfo]:
        body = bodies.graph(body_path)
        inputs = list(args) + [None] * (len(body.input_names) - len(args))
        base = call.engine.body_frame(body, call.env, call.path, call.op_type, call.iteration)
        return call.engine.run_body(body, base, inputs, call.iteration), {"function": name}

    return run
