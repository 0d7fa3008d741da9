"""onnx's checker and shape inference, run on a skeleton of the model: both serialize the model they are given
(and inference parses back a copy), so on the model itself a 400 MB model would cost several copies of its
weights. The skeleton moves the main graph's big initializers out, into graph inputs of the same type and shape
(all either pass needs of a weight); its inferred types are then copied into the real model."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import Message

BIG_TENSOR_BYTES = 1 << 16  # smaller initializers stay (shape tensors, whose values inference reads)


def check_and_infer(proto: onnx.ModelProto, warnings: list[str], first_line: Callable[[Exception], str], *,
                    infer: bool = True) -> onnx.ModelProto:
    """The model with inferred shapes (`proto` itself, completed; as it is without `infer`); checker complaints
    and an inference failure are appended to `warnings`."""
    skeleton, moved = _skeleton(proto)
    try:
        onnx.checker.check_model(skeleton)
    except Exception as exc:  # noqa: BLE001 - the checker rejects models that runtimes still run
        warnings.append(f"onnx checker: {first_line(exc)}")
    if not infer:
        return proto
    try:
        inferred = onnx.shape_inference.infer_shapes(skeleton, check_type=False, strict_mode=False, data_prop=True)
    except Exception as exc:  # noqa: BLE001 - inference failing is a warning, the model may still run
        warnings.append(f"shape inference failed: {first_line(exc)}")
        return proto
    if not moved:
        return inferred
    graph, found = proto.graph, inferred.graph
    for field in ("node", "value_info", "output"):
        target = getattr(graph, field)
        del target[:]
        target.extend(getattr(found, field))
    return proto


def _skeleton(proto: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    """A copy of the model without its big, well-formed main-graph initializers (each becomes a graph input
    unless it is one already), and how many were moved."""
    skeleton = onnx.ModelProto()
    copy_fields(proto, skeleton, skip="graph")
    graph = skeleton.graph
    copy_fields(proto.graph, graph, skip="initializer")
    inputs = {i.name for i in graph.input}
    moved = 0
    for tensor in proto.graph.initializer:
        if not _movable(tensor, proto.ir_version, inputs):
            graph.initializer.add().CopyFrom(tensor)
            continue
        moved += 1
        if tensor.name not in inputs:
            graph.input.append(onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, list(tensor.dims)))
    return skeleton, moved


def copy_fields(source: Message, target: Message, skip: str = "") -> None:
    """Copies every set field of `source` but `skip` into the empty `target`, field by field (a repeated field
    element by element: never a serialized copy of the whole message at once)."""
    for field, value in source.ListFields():
        if field.name == skip:
            continue
        if hasattr(value, "extend"):  # a repeated field
            getattr(target, field.name).extend(value)
        elif field.message_type is not None:
            getattr(target, field.name).CopyFrom(value)
        else:
            setattr(target, field.name, value)


def _movable(tensor: onnx.TensorProto, ir_version: int, inputs: set[str]) -> bool:
    """A big tensor whose raw data has exactly the size its type and dims call for (anything else stays, for the
    checker to report)."""
    if {f.name for f, _ in tensor.ListFields()} - _PLAIN_FIELDS or tensor.data_type in _PACKED:
        return False
    if ir_version < 4 and tensor.name not in inputs:  # before IR 4 an initializer must be an input too
        return False
    size = tensor_bytes(tensor)
    return size is not None and size >= BIG_TENSOR_BYTES and len(tensor.raw_data) == size


def tensor_bytes(tensor: onnx.TensorProto) -> int | None:
    """The bytes a tensor's type and dims call for (None for an unknown type or negative dims), computed without
    touching its data (protobuf's ByteSize serializes the message to measure it)."""
    if any(d < 0 for d in tensor.dims):
        return None
    try:
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    except (KeyError, TypeError, ValueError):
        return None
    return int(np.prod(tensor.dims, dtype=object)) * itemsize if tensor.dims else itemsize


_PLAIN_FIELDS = frozenset({"name", "dims", "data_type", "raw_data", "doc_string"})
_PACKED = frozenset(getattr(onnx.TensorProto, name) for name in
                    ("INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2", "STRING")
                    if hasattr(onnx.TensorProto, name))


def model_bytes(proto: onnx.ModelProto) -> int:
    """The model's serialized size, near enough for budgets and limits (a few bytes per tensor): tensors whose
    raw data fits their type and dims are counted from those, everything else is measured. protobuf's ByteSize
    on the whole model would serialize every weight to measure it."""
    total = sum(_field_bytes(value) for field, value in proto.ListFields() if field.name != "graph")
    for field, value in proto.graph.ListFields():
        if field.name == "initializer":
            total += sum(_initializer_bytes(tensor) for tensor in value)
        else:
            total += _field_bytes(value)
    return total


def _initializer_bytes(tensor: onnx.TensorProto) -> int:
    size = tensor_bytes(tensor) if tensor.HasField("raw_data") and tensor.data_type not in _PACKED else None
    if size is None or size < BIG_TENSOR_BYTES:
        return tensor.ByteSize()
    return size + len(tensor.name) + 8 * len(tensor.dims) + 16  # data, name, dims, tags and lengths


def _field_bytes(value: Any) -> int:
    if hasattr(value, "extend"):  # a repeated field
        return sum(_field_bytes(v) for v in value)
    if isinstance(value, Message):
        return value.ByteSize()
    return len(value) if isinstance(value, (str, bytes)) else 8
