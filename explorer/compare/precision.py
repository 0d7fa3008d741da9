"""The tolerances values are compared with: each value at its own precision. A value's precision is the
narrowest float type it was computed through (its own type, or a narrower one one of its inputs came through: a
float32 LSTM fed by a Cast from float16 carries float16's rounding), on either side; a quantized integer is one
step of its scale. onnxruntime computes float16 operators in float32 behind Casts it inserts itself and drops
the Casts it finds redundant, so a rounding to float16 happens or not depending on the graph around it: two
equivalent graphs then differ by a few of that type's units in the last place."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from ..proto.graph import subgraph_attributes
from ..trace.values import Deferred
from .stats import ATOL, RTOL

T = onnx.TensorProto
# the narrowest float type a model computes in -> (rtol, atol): twice the type's machine epsilon, and an absolute
# tolerance of that order for values near zero
NARROW = {T.FLOAT16: (2e-3, 1e-3), T.BFLOAT16: (1.6e-2, 1e-2)}
FLOAT8 = (0.25, 0.125)
_FLOAT8 = frozenset(getattr(T, name) for name in ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
                                                  "FLOAT8E8M0", "FLOAT4E2M1") if hasattr(T, name))
FLOAT64 = (1e-7, 1e-9)  # float64 computed as float64 on both sides: a thousand times float32's
# operators whose integer outputs are quantized values: a float rounded to a step, which may round the other way
QUANTIZING = frozenset({"QuantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul", "QLinearAdd",
                        "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearAveragePool",
                        "QLinearGlobalAveragePool", "QLinearConcat", "QLinearSoftmax", "QGemm",
                        "QLinearReduceMean", "QLinearWhere", "QLinearGather", "QLinearPool"})


@dataclass(frozen=True)
class Tolerance:
    """How far a value may be from its reference: atol + rtol·|reference|. `precision` names the type whose
    rounding it allows ("float32", "float16", "quantized", or "given" for the user's); `eps` is that type's
    machine epsilon (what an accumulation's rounding is scaled by)."""

    rtol: float
    atol: float
    precision: str
    eps: float

    @property
    def text(self) -> str:
        return f"rtol {self.rtol:g}, atol {self.atol:g}"

    @property
    def rounding(self) -> str:
        """What a difference within this tolerance is: "float16 rounding", "one quantization step"."""
        return "one quantization step" if self.precision == "quantized" else f"{self.precision} rounding"


FLOAT32 = Tolerance(RTOL, ATOL, "float32", float(np.finfo(np.float32).eps))


def given(rtol: float | None, atol: float | None, default: Tolerance = FLOAT32) -> Tolerance | None:
    """The user's tolerances (each one left out is the default's), or None when neither is given."""
    if rtol is None and atol is None:
        return None
    return Tolerance(default.rtol if rtol is None else rtol, default.atol if atol is None else atol, "given",
                     default.eps)


def of_dtype(dtype: Any) -> Tolerance:
    """The tolerance of a float value of this type (float32's for anything else)."""
    dtype = np.dtype(dtype)
    name = dtype.name
    if name == "float16":
        return Tolerance(*NARROW[T.FLOAT16], "float16", float(np.finfo(np.float16).eps))
    if name == "bfloat16":
        return Tolerance(*NARROW[T.BFLOAT16], "bfloat16", 2.0 ** -7)
    if name.startswith("float8") or name.startswith("float4"):
        return Tolerance(*FLOAT8, name, 2.0 ** -2)
    if name in ("float64", "complex128"):
        return Tolerance(*FLOAT64, "float64", float(np.finfo(np.float64).eps))
    return FLOAT32


def widest(tolerances: Iterable[Tolerance]) -> Tolerance:
    """The most lenient of some tolerances (the narrowest precision among them)."""
    return max(tolerances, key=lambda t: (t.eps, t.rtol, t.atol), default=FLOAT32)


def is_float(value: Any) -> bool:
    """A floating-point tensor (a Deferred one too: its type is known without making it whole)."""
    return isinstance(value, (np.ndarray, Deferred)) and (value.dtype.kind in "fc" or (
        value.dtype.kind == "V" and value.dtype.name.startswith(("bfloat16", "float8", "float4"))))


def quantized(step: float) -> Tolerance:
    """A quantized value: one step of its scale either way (the float it rounds may round the other way)."""
    return Tolerance(0.0, step, "quantized", 1.0)


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
