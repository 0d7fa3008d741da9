"""Which kernel runs a node, decided once per node from explicit tables (`SPECIAL` here, the others in
explorer/executor/ops/__init__.py):

1. a call of a model-local function runs the function's body (executor/functions.py);
2. a special kernel (control flow, recurrent cells) from `SPECIAL`;
3. explorer's own kernel from `ops.KERNELS` (one module per operator family);
4. onnx.reference for the rare operators listed in `ops.REFERENCE_FALLBACK`;
5. anything else is an UnsupportedOperatorError naming the node and the operator.

Plain kernels are `fn(args: Sequence[Any]) -> tuple of outputs`; special kernels are `fn(args, call) -> (outputs, info)`.
Every node is checked against its operator version first (ops.base.OpNode): attributes and input counts the
version does not define are refused with an error naming the node.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import UnsupportedOperatorError
from . import control_flow, ops, rnn
from .functions import calls_function, function_kernel
from .ops.base import KernelFactory
from .reference import reference_kernel

if TYPE_CHECKING:
    from ..proto.graph import NodeRef
    from .program import Program

SPECIAL: dict[tuple[str, str], KernelFactory] = {
    ("", "If"): control_flow.if_kernel,
    ("", "Loop"): control_flow.loop_kernel,
    ("", "Scan"): control_flow.scan_kernel,
    ("", "SequenceMap"): control_flow.sequence_map_kernel,
    ("", "GRU"): rnn.rnn_kernel,
    ("", "LSTM"): rnn.rnn_kernel,
    ("", "RNN"): rnn.rnn_kernel,
    ("com.microsoft", "DynamicQuantizeLSTM"): rnn.dynamic_quantize_lstm_kernel,
}
"""Kernels that run bodies or record more than values: `fn(args, call) -> (outputs, info)`, by (domain, op_type).
Calls of model-local functions are special too; they are found in the model (executor/functions.py), not here."""


def build_kernel(node: NodeRef, program: Program) -> tuple[Callable[..., Any], bool]:
    """(kernel, is_special) for one node."""
    if calls_function(node, program):
        return function_kernel(node, program), True
    op = program.op_node(node)
    key = (op.domain, op.op_type)
    special = SPECIAL.get(key)
    if special is not None:
        return special(node, program), True
    own = ops.KERNELS.get(key)
    if own is not None:
        return own(node, program), False
    if key in ops.REFERENCE_FALLBACK:
        return reference_kernel(node, program), False
    known = "" if op.schema is not None else (", which onnxruntime does not define" if op.domain == "com.microsoft"
                                              else ", which onnx does not define")
    raise UnsupportedOperatorError(
        f"node {node.path!r}: operator {op.op_type!r} (domain {op.domain or 'ai.onnx'!r}, opset {op.opset}{known}) "
        "has no kernel in explorer", node=node.path, op_type=op.op_type)
