"""Which kernel runs a node, decided once per node from explicit tables (`BODIES` and `CELLS` here, the others in
explorer/executor/ops/__init__.py):

1. a call of a model-local function runs the function's body (executor/functions.py);
2. a special kernel: control flow (onnxruntime's generation operators among it) from `BODIES`, recurrent cells
   from `CELLS`;
3. explorer's own kernel from `ops.KERNELS` (one module per operator family);
4. onnx.reference for the rare operators listed in `ops.REFERENCE_FALLBACK`;
5. anything else is an UnsupportedOperatorError naming the node and the operator.

Plain kernels are `fn(args: Sequence[Any]) -> tuple of outputs`; special kernels are `fn(args, call) -> (outputs, info)`.
Every node is checked against its operator version first (ops.base.OpNode): attributes and input counts the
version does not define are refused with an error naming the node. A factory is given that `OpNode`, the node's
static facts; only the kernels that run bodies (control flow, calls of model-local functions) are also given the
`Bodies` the Program compiles.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import onnx

from ..errors import UnsupportedOperatorError
from . import control_flow, ops, rnn
from .compiled import Bodies
from .functions import calls_function, function_kernel
from .ops.base import KernelFactory, OpNode, SpecialKernel
from .reference import reference_kernel
from .search.search_kernels import GENERATION_KERNELS

if TYPE_CHECKING:
    from ..model.model import Model
    from ..proto.graph import NodeRef

BodyKernelFactory = Callable[[OpNode, Bodies], SpecialKernel]
"""factory(op, bodies) -> special kernel: the kernels that run bodies compile them through the Program."""

BODIES: dict[tuple[str, str], BodyKernelFactory] = {
    ("", "If"): control_flow.if_kernel,
    ("", "Loop"): control_flow.loop_kernel,
    ("", "Scan"): control_flow.scan_kernel,
    ("", "SequenceMap"): control_flow.sequence_map_kernel,
    **GENERATION_KERNELS,
}
"""Control flow, onnxruntime's generation operators among it: `factory(op, bodies)`, by (domain, op_type)."""
CELLS: dict[tuple[str, str], KernelFactory] = {
    ("", "GRU"): rnn.rnn_kernel,
    ("", "LSTM"): rnn.rnn_kernel,
    ("", "RNN"): rnn.rnn_kernel,
    ("com.microsoft", "DynamicQuantizeLSTM"): rnn.dynamic_quantize_lstm_kernel,
}
"""Recurrent cells, which record their gates: `factory(op)`, by (domain, op_type)."""
SPECIAL: frozenset[tuple[str, str]] = frozenset(BODIES) | frozenset(CELLS)
"""The operators whose kernels are special: `fn(args, call) -> (outputs, info)`. Calls of model-local functions
are special too; they are found in the model (executor/functions.py), not here."""


class Compiler(Bodies, Protocol):
    """What building a node's kernel reads from the Program compiling it: the model's opsets and local functions,
    and for kernels that run bodies, `Bodies`."""

    @property
    def opsets(self) -> dict[str, int]:
        """The model's opsets by domain, the default domain ("") always among them."""
        ...

    @property
    def functions(self) -> Mapping[tuple[str, str], onnx.FunctionProto]:
        """The model-local functions by (domain, name)."""
        ...


def build_kernel(node: NodeRef, compiler: Compiler) -> tuple[Callable[..., Any], bool]:
    """(kernel, is_special) for one node."""
    if calls_function(node, compiler.functions):
        return function_kernel(node, compiler), True
    op = OpNode(node, compiler.opsets, partial(compiler.value_type, node.graph.path))
    runs_bodies = BODIES.get((op.domain, op.op_type))
    if runs_bodies is not None:
        return runs_bodies(op, compiler), True
    return op_kernel(op)


def op_kernel(op: OpNode) -> tuple[Callable[..., Any], bool]:
    """(kernel, is_special) for a node that runs no body, from its static facts: a recurrent cell's (special),
    explorer's own, or onnx.reference's for the operators listed in `ops.REFERENCE_FALLBACK`."""
    key = (op.domain, op.op_type)
    cell = CELLS.get(key)
    if cell is not None:
        return cell(op), True
    own = ops.KERNELS.get(key)
    if own is not None:
        return own(op), False
    if key in ops.REFERENCE_FALLBACK:
        return reference_kernel(op), False
    known = "" if op.schema is not None else (", which onnxruntime does not define" if op.domain == "com.microsoft"
                                              else ", which onnx does not define")
    raise UnsupportedOperatorError(
        f"node {op.path!r}: operator {op.op_type!r} (domain {op.domain or 'ai.onnx'!r}, opset {op.opset}{known}) "
        "has no kernel in explorer", node=op.path, op_type=op.op_type)


BLAS_FAMILIES: frozenset[str] = frozenset({
    "attention", "contrib_attention", "contrib_fused", "contrib_gqa", "contrib_qlinear", "contrib_quantize", "conv",
    "linalg", "ml_linear", "ml_svm", "patches", "quantize", "resize", "sampling",
})
"""The operator families (explorer/executor/ops/<name>.py) whose kernels call BLAS: matrix products (np.matmul,
np.dot, np.einsum, np.tensordot), their own or a helper's from another family (tests/executor/test_threads.py reads
the kernels' code to hold this list)."""


_BLAS_OPERATORS: frozenset[tuple[str, str]] = frozenset(
    (ops.family_domain(family), op) for family in ops.FAMILIES
    if family.__name__.rsplit(".", 1)[-1] in BLAS_FAMILIES for op in family.KERNELS)


def calls_blas(model: Model) -> bool:
    """Whether a run of the model may call BLAS, so that its thread count matters: some node (nested bodies
    included) runs a recurrent cell, a kernel of a BLAS family, onnx.reference or a model-local function, or an
    operator explorer has no kernel for. A model of loops, trees and shape arithmetic only does not."""
    functions = model.functions
    for node in model.nodes():
        proto = node.proto
        key = (proto.domain if proto.domain != "ai.onnx" else "", proto.op_type)
        if key in BODIES:
            continue  # its bodies are among the nodes
        if key in CELLS or calls_function(node, functions):
            return True
        if key in _BLAS_OPERATORS or key not in ops.KERNELS:
            return True
    return False
