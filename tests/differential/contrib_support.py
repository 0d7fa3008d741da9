"""What the com.microsoft case tables share: onnxruntime run on a graph of default-domain operators equivalent to
an operator it has no CPU kernel for (its CUDA kernels compute the same), and the dtype sweep over onnxruntime's
schema types."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from onnx import helper

from .gen import rng, schema_types
from .harness import IR_VERSION, Case, Cast, _session

DOMAIN = "com.microsoft"
IN_FLOAT32 = Cast(np.float32, "bfloat16 and float16 values are exact in float32 (float64 is compared at float32's "
                              "precision); the result is compared at the case's tolerance")
NO_CPU_KERNEL = "onnxruntime has no CPU kernel for {op} (CUDA only): judged by onnxruntime on the equivalent graph"


def ort_graph(nodes: list[onnx.NodeProto], inputs: dict[str, np.ndarray], outputs: list[str],
              opset: int = 21) -> list[np.ndarray]:
    """onnxruntime's values of `outputs` of a default-domain graph of `nodes` fed `inputs`."""
    graph = helper.make_graph(
        nodes, "equivalent",
        [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
         for name, v in inputs.items()],
        [helper.make_value_info(name, onnx.TypeProto()) for name in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_VERSION
    return list(_session(model).run(outputs, inputs))


def float_sweep(op: str, make: Callable[[np.random.Generator, np.dtype], Case], param: str = "T",
                tolerance: dict[Any, tuple[float, float]] | None = None, skip: tuple[str, ...] = ()) -> list[Case]:
    """One case per float type of onnxruntime's schema for `op` (but those in `skip`); a type onnxruntime's CPU
    kernel lacks is judged on the same values as float32 (cast back), bfloat16 among them (reaching onnxruntime as
    an initializer)."""
    found = []
    for dtype in schema_types(op, 1, param, DOMAIN, exotic=True):
        if (dtype.kind != "f" and dtype.name != "bfloat16") or dtype.name in skip:
            continue
        case = make(rng(op, str(dtype)), dtype)
        case.cast = IN_FLOAT32
        if case.tol is None and tolerance:
            case.tol = tolerance.get(dtype.name)
        found.append(case)
    return found
