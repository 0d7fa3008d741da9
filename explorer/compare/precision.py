"""The tolerances two models' outputs are compared with: float32's, unless a model computes in a narrower float type
(float16, bfloat16, float8). onnxruntime computes such operators in float32 behind Casts it inserts itself and drops
the Casts it finds redundant, so a rounding to float16 happens or not depending on the graph around it: two
equivalent graphs then differ by a few of that type's units in the last place."""
from __future__ import annotations

from collections.abc import Iterator

import onnx

from ..graph import subgraph_attributes
from .stats import ATOL, RTOL

T = onnx.TensorProto
# the narrowest float type a model computes in -> (rtol, atol): twice the type's machine epsilon, and an absolute
# tolerance of that order for values near zero
NARROW = {T.FLOAT16: (2e-3, 1e-3), T.BFLOAT16: (1.6e-2, 1e-2)}
FLOAT8 = (0.25, 0.125)
_FLOAT8 = frozenset(getattr(T, name) for name in ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                                                  "FLOAT8E8M0", "FLOAT4E2M1") if hasattr(T, name))


def tolerances(*models: onnx.ModelProto) -> tuple[float, float, str]:
    """(rtol, atol, why): float32's (why empty) unless a model holds or produces a narrower float type."""
    found = {t for model in models for t in _float_types(model)}
    if found & _FLOAT8:
        return (*FLOAT8, "a model computes in float8")
    for elem, (rtol, atol) in sorted(NARROW.items(), key=lambda item: -item[1][0]):
        if elem in found:
            return rtol, atol, f"a model computes in {onnx.helper.tensor_dtype_to_string(elem).split('.')[-1].lower()}"
    return RTOL, ATOL, ""


def _float_types(model: onnx.ModelProto) -> Iterator[int]:
    """Element types a model's weights, constants, Casts and declared or inferred values have (bodies and local
    functions included)."""
    stack: list[onnx.GraphProto | onnx.FunctionProto] = [model.graph, *model.functions]
    while stack:
        graph = stack.pop()
        if isinstance(graph, onnx.GraphProto):
            yield from (t.data_type for t in graph.initializer)
            for info in [*graph.input, *graph.output, *graph.value_info]:
                yield info.type.tensor_type.elem_type
        for node in graph.node:
            for att in node.attribute:
                if att.name == "to" and node.op_type == "Cast":
                    yield att.i
                elif att.type == onnx.AttributeProto.TENSOR:
                    yield att.t.data_type
            stack.extend(body for _, body in subgraph_attributes(node))
