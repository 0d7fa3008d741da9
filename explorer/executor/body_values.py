"""Values control-flow kernels pass into and out of bodies: one-value counts and conditions, the rank a body
declares for them, and scan outputs stacked across iterations."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import onnx

from ..errors import ExecutionError, where
from .ops.base import Call

if TYPE_CHECKING:
    from .compiled import Bodies


def one_value(value: Any, what: str, call: Call) -> Any:
    """The single element of a count or condition; ExecutionError naming the node when it holds more."""
    array = value if type(value) is np.ndarray else np.asarray(value)
    if array.size != 1:
        raise ExecutionError(f"{where(call.path, call.op_type, call.iteration)}: {what} must hold one value, "
                             f"got shape {array.shape}", node=call.path, op_type=call.op_type,
                             iteration=call.iteration)
    return array.item()


def empty_stack(bodies: Bodies, body_path: str, name: str, axis: int = 0) -> np.ndarray:
    """A zero-iteration scan output: shape from the body output's declared type, 0 along the scan axis."""
    tp = bodies.value_type(body_path, name)
    dtype: np.dtype[Any] = np.dtype(np.float32)
    dims: list[int] = []
    if tp is not None and tp.HasField("tensor_type"):
        if tp.tensor_type.elem_type:
            dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tp.tensor_type.elem_type))
        dims = [d.dim_value if d.HasField("dim_value") else 0 for d in tp.tensor_type.shape.dim]
    axis = axis + len(dims) + 1 if axis < 0 else axis
    return np.zeros(tuple(dims[:axis] + [0] + dims[axis:]), dtype=dtype)


def stack_outputs(elements: list[Any], axis: int, call: Call, name: str) -> np.ndarray:
    """Per-iteration scan outputs stacked along `axis`, within the memory limit."""
    size = sum(np.asarray(e).nbytes for e in elements)
    call.engine.check_bytes(size, f"stacking scan output {name!r} ({len(elements)} iterations)", call.path,
                            call.op_type, call.iteration)
    try:
        return np.stack([np.asarray(e) for e in elements], axis=axis)
    except ValueError as exc:
        shapes = sorted({np.shape(e) for e in elements})
        raise ExecutionError(f"{where(call.path, call.op_type, call.iteration)}: scan output {name!r} changes "
                             f"shape across iterations {shapes}: {exc}", node=call.path, op_type=call.op_type,
                             iteration=call.iteration) from None


def declared_rank(bodies: Bodies, graph_path: str, name: str) -> int:
    """The rank a body declares for an input onnxruntime feeds as one value: 1 for `[1]`, else 0 (a scalar)."""
    declared = bodies.value_type(graph_path, name)
    if declared is not None and declared.HasField("tensor_type") and declared.tensor_type.HasField("shape"):
        return 1 if len(declared.tensor_type.shape.dim) == 1 else 0
    return 0
