"""Small helpers between numpy arrays and ONNX protos used by the optimizer (constants, types, attributes)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..proto.weights import tensor_value


def same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Whether two known values (None: unknown) are the same."""
    return a is b or (a is not None and b is not None and np.array_equal(a, b))


def constant_value(node: onnx.NodeProto) -> np.ndarray | None:
    """The value of a Constant node, or None when it has none we can read (e.g. a function attribute ref)."""
    for att in node.attribute:
        if att.ref_attr_name:
            return None
        name = att.name
        if name == "value":
            return tensor_value(att.t)
        if name == "value_float":
            return np.array(att.f, dtype=np.float32)
        if name == "value_floats":
            return np.array(list(att.floats), dtype=np.float32)
        if name == "value_int":
            return np.array(att.i, dtype=np.int64)
        if name == "value_ints":
            return np.array(list(att.ints), dtype=np.int64)
        if name == "value_string":
            return np.array(att.s.decode("utf-8"), dtype=object)
        if name == "value_strings":
            return np.array([s.decode("utf-8") for s in att.strings], dtype=object)
    return None  # sparse_value: left alone


def array_type(value: np.ndarray) -> onnx.TypeProto:
    """The tensor TypeProto of a numpy array."""
    value = np.asarray(value)
    elem = onnx.TensorProto.STRING if value.dtype.kind in "OUS" else helper.np_dtype_to_tensor_dtype(value.dtype)
    return helper.make_tensor_type_proto(elem, list(value.shape))


def to_tensor(value: np.ndarray, name: str) -> onnx.TensorProto:
    value = np.asarray(value)
    if value.dtype.kind in "US":
        value = value.astype(object)
    return numpy_helper.from_array(value, name)


def make_value_info(name: str, type_proto: onnx.TypeProto | None) -> onnx.ValueInfoProto:
    info = onnx.ValueInfoProto(name=name)
    if type_proto is not None:
        info.type.CopyFrom(type_proto)
    return info


def tensor_elem_type(type_proto: onnx.TypeProto | None) -> int | None:
    if type_proto is None or type_proto.WhichOneof("value") != "tensor_type":
        return None
    return type_proto.tensor_type.elem_type or None


def tensor_shape(type_proto: onnx.TypeProto | None) -> tuple[int | str | None, ...] | None:
    """Dims of a tensor type: int for a known size, str for a symbolic one, None for unknown; None if no rank."""
    if type_proto is None or type_proto.WhichOneof("value") != "tensor_type":
        return None
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else (d.dim_param or None)
                 for d in tensor.shape.dim)


def clean_type(type_proto: onnx.TypeProto) -> onnx.TypeProto:
    """A copy of a type without negative dim values (some exporters write -1 for "unknown")."""
    clean = onnx.TypeProto()
    clean.CopyFrom(type_proto)
    if clean.WhichOneof("value") == "tensor_type" and clean.tensor_type.HasField("shape"):
        for d in clean.tensor_type.shape.dim:
            if d.HasField("dim_value") and d.dim_value < 0:
                d.Clear()
    return clean
