"""The schema's type constraints, as onnxruntime checks them when it loads a model: each input's type is one the
operator takes at the model's opset (Add takes no strings), and the inputs bound to one type parameter share one
type (Add's two inputs are both float, not float and double). Only inputs whose whole type is known are checked;
operators onnx does not define (custom domains, model-local functions) are not."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import onnx

from ..spec.schema import schema_at

_VARIADIC = onnx.defs.OpSchema.FormalParameterOption.Variadic
# inputs whose schema is narrower than what onnxruntime runs: Split-1 types `split` as T (float) and
# onnxruntime reads it as int64; OptionalGetElement/OptionalHasElement-15 take plain tensors there, as 18 does
_WIDER_IN_ONNXRUNTIME = {("Split", 1): "split", ("OptionalGetElement", 15): "input", ("OptionalHasElement", 15): "input"}
_ELEMENT_NAMES = {number: name.lower() for name, number in onnx.TensorProto.DataType.items() if number}


@dataclass(frozen=True)
class _Formal:
    name: str
    type_param: str | None  # the constraint's name ("T"), None for a fixed type
    allowed: frozenset[str]
    shares_type: bool  # inputs bound to the type parameter must have one type


@dataclass(frozen=True)
class _Signature:
    label: str  # "Add-14"
    formals: tuple[_Formal, ...]
    variadic_last: bool
    unchecked: str | None  # the input whose types onnxruntime does not restrict to the schema's


@cache
def _signature(op_type: str, opset: int, domain: str) -> _Signature | None:
    schema = schema_at(op_type, opset, domain)
    if schema is None:
        return None
    constraints = {c.type_param_str: frozenset(c.allowed_type_strs) for c in schema.type_constraints}
    formals = tuple(
        _Formal(f.name, f.type_str if f.type_str in constraints else None,
                constraints.get(f.type_str, frozenset({f.type_str})),
                f.option != _VARIADIC or f.is_homogeneous)
        for f in schema.inputs)
    return _Signature(f"{op_type}-{schema.since_version}", formals,
                      bool(schema.inputs) and schema.inputs[-1].option == _VARIADIC,
                      _WIDER_IN_ONNXRUNTIME.get((op_type, schema.since_version)))


def schema_type_text(tp: onnx.TypeProto) -> str | None:
    """The type as schemas spell it ("tensor(float)", "seq(tensor(int64))"); None when not wholly known."""
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        elem = getattr(tp, kind).elem_type
        if elem not in _ELEMENT_NAMES:  # unknown (0), or a number onnx does not define (reported elsewhere)
            return None
        return f"{'tensor' if kind == 'tensor_type' else 'sparse_tensor'}({_ELEMENT_NAMES[elem]})"
    if kind in ("sequence_type", "optional_type"):
        inner = getattr(tp, kind)
        if not inner.HasField("elem_type"):
            return None
        text = schema_type_text(inner.elem_type)
        return None if text is None else f"{'seq' if kind == 'sequence_type' else 'optional'}({text})"
    return None


def constraint_violations(node: onnx.NodeProto, types: dict[str, onnx.TypeProto], opset: int) -> list[str]:
    """Why the node's input types break its schema's type constraints at `opset` (empty when they do not), each
    for the caller to prefix with the node's name."""
    domain = "" if node.domain == "ai.onnx" else node.domain
    signature = _signature(node.op_type, opset, domain)
    if signature is None or not signature.formals:
        return []
    found: list[str] = []
    bound: dict[str, tuple[str, str]] = {}  # type parameter -> (first input bound to it, its type)
    for index, name in enumerate(node.input):
        if not name or name not in types:
            continue
        if index >= len(signature.formals) and not signature.variadic_last:
            continue  # too many inputs: the kernel's own check names that
        formal = signature.formals[min(index, len(signature.formals) - 1)]
        got = schema_type_text(types[name])
        if got is None:
            continue
        if formal.name == signature.unchecked:
            continue
        if got not in formal.allowed:
            allowed = ", ".join(sorted(formal.allowed))
            found.append(f"input {formal.name!r} ({name!r}) is {got}, which {signature.label} does not "
                         f"take (it takes {allowed})")
        elif formal.type_param is not None and formal.shares_type:
            first = bound.setdefault(formal.type_param, (name, got))
            if first[1] != got:
                found.append(f"{first[0]!r} is {first[1]} but {name!r} is {got}; {signature.label} "
                             f"wants one type for both ({formal.type_param})")
    return found
