"""Short texts for diagrams: value types (`3×4 float`), attribute summaries (`perm=[0,2,1]`), op titles."""
from __future__ import annotations

import numpy as np
import onnx

from ..proto.weights import tensor_value
from .dot_escape import shorten, visible

MAX_ATTRIBUTES = 4
ATTRIBUTE_CHARS = 28
NAME_CHARS = 32


def elem_type_name(elem_type: int) -> str:
    """`float`, `int64`, `bfloat16`… for a TensorProto data type; `?` when undefined."""
    if not elem_type:
        return "?"
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"type{elem_type}"


def dims_text(dims) -> str:
    """`3×4`, `N×?` or `scalar` for a sequence of ints / dim names / None."""
    if len(dims) == 0:
        return "scalar"
    return "×".join("?" if d is None or d == "" else str(d) for d in dims)


def type_text(tp: onnx.TypeProto | None) -> str:
    """A short type: `3×4 float`, `scalar int64`, `float` (any shape), `seq(2×3 float)`, `opt(bool)`…"""
    if tp is None:
        return ""
    which = tp.WhichOneof("value")
    if which == "tensor_type" or which == "sparse_tensor_type":
        t = getattr(tp, which)
        elem = elem_type_name(t.elem_type)
        if not t.HasField("shape"):
            return elem
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]
        text = f"{dims_text(dims)} {elem}"
        return f"sparse {text}" if which == "sparse_tensor_type" else text
    if which == "sequence_type":
        return f"seq({type_text(tp.sequence_type.elem_type)})"
    if which == "optional_type":
        return f"opt({type_text(tp.optional_type.elem_type)})"
    if which == "map_type":
        return f"map({elem_type_name(tp.map_type.key_type)}→{type_text(tp.map_type.value_type)})"
    return ""


def tensor_type_text(tensor: onnx.TensorProto) -> str:
    """`3×4 float` for an initializer or tensor attribute."""
    return f"{dims_text(list(tensor.dims))} {elem_type_name(tensor.data_type)}"


def _small_tensor_text(tensor: onnx.TensorProto) -> str:
    """The values of a tensor with at most 4 elements, else its type in angle brackets."""
    count = int(np.prod(tensor.dims)) if tensor.dims else 1
    if count <= 4 and tensor.data_type not in (onnx.TensorProto.UNDEFINED,):
        try:
            array = tensor_value(tensor)
        except Exception:  # noqa: BLE001 - exotic or malformed tensors still get a type text
            return f"⟨{tensor_type_text(tensor)}⟩"
        values = array.ravel().tolist()
        text = ", ".join(_scalar_text(v) for v in values)
        return text if not tensor.dims else f"[{text}]"
    return f"⟨{tensor_type_text(tensor)}⟩"


def _scalar_text(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, bytes):
        return repr(value.decode("utf-8", "backslashreplace"))
    return str(value)


def attribute_text(att: onnx.AttributeProto) -> str | None:
    """`name=value` for a short attribute; None for graph attributes (drawn as bodies)."""
    kind = att.type
    A = onnx.AttributeProto
    if kind in (A.GRAPH, A.GRAPHS):
        return None
    if kind == A.INT:
        value = str(att.i)
    elif kind == A.FLOAT:
        value = f"{att.f:g}"
    elif kind == A.STRING:
        value = att.s.decode("utf-8", "backslashreplace")
    elif kind == A.INTS:
        value = "[" + ",".join(str(i) for i in att.ints) + "]"
    elif kind == A.FLOATS:
        value = "[" + ",".join(f"{f:g}" for f in att.floats) + "]"
    elif kind == A.STRINGS:
        value = "[" + ",".join(s.decode("utf-8", "backslashreplace") for s in att.strings) + "]"
    elif kind == A.TENSOR:
        value = _small_tensor_text(att.t)
    elif kind == A.TYPE_PROTO:
        value = type_text(att.tp)
    elif kind == A.SPARSE_TENSOR:
        value = f"⟨sparse {tensor_type_text(att.sparse_tensor.values)}⟩"
    else:
        value = f"<{len(att.tensors) or len(att.type_protos) or len(att.sparse_tensors)} items>"
    if att.name == "to" and kind == A.INT:
        value = elem_type_name(att.i)
    return shorten(visible(f"{att.name}={value}"), ATTRIBUTE_CHARS)


def attribute_lines(node: onnx.NodeProto) -> list[str]:
    """Up to MAX_ATTRIBUTES short `name=value` texts, two per line."""
    texts = [t for t in (attribute_text(a) for a in node.attribute) if t is not None]
    if len(texts) > MAX_ATTRIBUTES:
        texts = texts[:MAX_ATTRIBUTES - 1] + [f"+{len(texts) - MAX_ATTRIBUTES + 1} more"]
    return [" ".join(texts[i:i + 2]) for i in range(0, len(texts), 2)]


def op_title(node: onnx.NodeProto, display_name: str | None = None) -> str:
    """`Loop 'loop'`, `com.microsoft.FusedConv`, or just `Add` for an unnamed node."""
    op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
    name = node.name if display_name is None else display_name
    return f"{op} '{shorten(visible(name), NAME_CHARS)}'" if name else op


def initializer_text(name: str, tensor: onnx.TensorProto) -> str:
    """`W ⟨3×4 float⟩`, or the values of a tiny initializer: `axes = [0, 1]`."""
    short = shorten(visible(name), 24)
    small = _small_tensor_text(tensor)
    return f"{short} {small}" if small.startswith("⟨") else f"{short} = {small}"
