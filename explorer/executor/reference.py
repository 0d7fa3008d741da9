"""The one adapter onto onnx.reference (the only module touching its internals): it runs the operators listed
in `ops.REFERENCE_FALLBACK`, and nothing else."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator, op_run
from onnx.reference.ops import load_op
from onnx.reference.ops._op import OpRunBinaryNumpy

from ..errors import UnsupportedOperatorError, cause_text

if TYPE_CHECKING:
    from .ops.base import OpNode, PlainKernel

# Operators removed from ONNX that old exporters still emit, run by the kernel they were renamed to.
_RENAMED = {"Scatter": ("ScatterElements", 11)}  # Scatter-9/11 == ScatterElements-11 without `reduction`
# Operators whose reference kernels start at a later version that computes the earlier ones unchanged.
_VERSION_FLOOR = {"DequantizeLinear": 19}  # 10 and 13 are 19 restricted to fewer types


def _normalize(res: Any) -> tuple[Any, ...]:
    """Scalars some reference kernels return become 0-d arrays (strings as object arrays, as ONNX holds them)."""
    return tuple(
        (np.array(x, dtype=object) if isinstance(x, (str, bytes)) else np.array(x)) if np.isscalar(x) else x
        for x in res
    )


def reference_kernel(op: OpNode, proto: onnx.NodeProto | None = None) -> PlainKernel:
    """onnx.reference's kernel for a node, or for `proto` standing in for it (an own kernel that reuses the
    reference one under other attributes)."""
    node = op.node
    proto = node.proto if proto is None else proto
    domain = "" if proto.domain == "ai.onnx" else proto.domain
    opsets = op.opsets
    if domain not in opsets:
        raise UnsupportedOperatorError(
            f"node {node.path!r} ({proto.op_type}) uses domain {domain!r}, which the model does not import",
            node=node.path, op_type=proto.op_type,
        )
    version = opsets.get(domain, 1)
    cls = _load_reference_class(proto, domain, version, op)
    run_params = {
        "log": _no_log,
        "opsets": opsets,
        "verbose": 0,
        "new_ops": {},
        "existing_functions": {},  # model-local functions run through explorer's engine (executor/functions.py)
        "evaluator_cls": ReferenceEvaluator,
    }
    try:
        inst = cls(proto, run_params)
    except Exception as exc:
        raise UnsupportedOperatorError(
            f"node {node.path!r} ({proto.op_type}): cannot build its kernel: {exc}", node=node.path,
            op_type=proto.op_type,
        ) from exc
    if inst.need_context():
        raise UnsupportedOperatorError(
            f"node {node.path!r} ({proto.op_type}) needs an outer context, which explorer does not give "
            "onnx.reference kernels", node=node.path, op_type=proto.op_type,
        )
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return _normalize(inst.run(*args))

    return _fast_path(inst) or run


def _fast_path(inst: op_run.OpRun) -> PlainKernel | None:
    """What `inst.run` does minus its logging and repeated checks: attributes resolved once, `_run` called
    directly (binary numpy ops straight to their ufunc). None when the general path is needed."""
    if getattr(inst, "has_linked_attribute", False) or getattr(inst, "has_subgraph", False):
        return None
    run = type(inst).run
    if run is op_run.OpRun.run:
        kwargs = {att: getattr(inst, att) for att in inst.attributes_names_}
    elif run.__module__ == OpRunBinaryNumpy.__module__:
        kwargs = {}  # the unary/binary bases call _run(x[, y]) and their kernels read attributes from self
    else:
        return None  # e.g. Min/Max handle variadic inputs in their own run()
    if isinstance(inst, OpRunBinaryNumpy):
        ufunc, name = inst.numpy_fct, type(inst).__name__

        def binary(args: Sequence[Any]) -> tuple[Any, ...]:
            a, b = args
            result = ufunc(a, b)
            if type(result) is not np.ndarray:
                result = np.asarray(result)
            if result.dtype != a.dtype:
                raise TypeError(f"{name}: input types differ ({a.dtype} and {b.dtype})")
            return (result,)

        return binary
    impl: Callable[..., tuple[Any, ...]] = inst._run

    def call(args: Sequence[Any]) -> tuple[Any, ...]:
        results = impl(*args, **kwargs)
        for value in results:
            if type(value) is not np.ndarray and value is not None and not isinstance(value, (list, dict)):
                return _normalize(results)
        return results

    return call


def _no_log(*_: Any) -> None:
    return None


def _load_reference_class(proto: onnx.NodeProto, domain: str, version: int, op: OpNode) -> Any:
    node = op.node
    try:
        if domain == "" and proto.op_type in _RENAMED:
            renamed, renamed_version = _RENAMED[proto.op_type]
            return load_op("", renamed, renamed_version, evaluator_cls=ReferenceEvaluator)
        if domain == "":
            version = max(version, _VERSION_FLOOR.get(proto.op_type, version))
            try:
                return load_op("", proto.op_type, version, evaluator_cls=ReferenceEvaluator)
            except op_run.RuntimeContextError:
                declared = [op.value_type(name) for name in proto.input]
                types = [t for t in declared if t is not None]
                if len(types) != len(declared):
                    raise UnsupportedOperatorError(
                        f"node {node.path!r} ({proto.op_type}) is defined by a function that depends on its input "
                        "types, and shape inference could not type all of them", node=node.path,
                        op_type=proto.op_type,
                    ) from None
                return load_op("", proto.op_type, version, node=proto, input_types=types,
                               evaluator_cls=ReferenceEvaluator)
        if domain == "ai.onnx.ml":
            from onnx.reference.ops.aionnxml import load_op as load_ml

            return load_ml(domain, proto.op_type, version)
        if domain == "ai.onnx.preview.training":
            from onnx.reference.ops.aionnx_preview_training import load_op as load_training

            return load_training(domain, proto.op_type, version)
        if domain == "ai.onnx.preview":
            from onnx.reference.ops.aionnx_preview import load_op as load_preview

            return load_preview(domain, proto.op_type, version)
    except UnsupportedOperatorError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the loader raises means: no kernel for this node
        raise UnsupportedOperatorError(
            f"node {node.path!r}: operator {proto.op_type!r} (domain {domain or 'ai.onnx'!r}, opset {version}) "
            f"is not supported: {cause_text(exc)}",
            node=node.path, op_type=proto.op_type,
        ) from None
    raise UnsupportedOperatorError(
        f"node {node.path!r}: operator {proto.op_type!r} of domain {domain!r} is not supported "
        "(no kernel and no model-local function)", node=node.path, op_type=proto.op_type,
    )
