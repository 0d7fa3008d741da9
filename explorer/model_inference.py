"""onnx's checker and shape inference, run on a skeleton of the model: both serialize the model they are given
(and inference parses back a copy), so on the model itself a 400 MB model would cost several copies of its
weights. The skeleton moves the main graph's big initializers out, into graph inputs of the same type and shape
(all either pass needs of a weight); its inferred types are then copied into the real model."""
from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import onnx
from google.protobuf.message import Message

BIG_TENSOR_BYTES = 1 << 16  # smaller initializers stay (shape tensors, whose values inference reads)


def check_and_infer(proto: onnx.ModelProto, warnings: list[str], first_line: Callable[[Exception], str], *,
                    infer: bool = True, check: bool = True, data_prop: bool = True) -> onnx.ModelProto:
    """The model with inferred shapes (`proto` itself, completed; as it is without `infer`); checker complaints
    (unless `check` is False) and an inference failure are appended to `warnings`. `data_prop` lets inference
    compute the values of shape tensors (off where onnx would mix up values of the same name in two graphs)."""
    skeleton, moved = _skeleton(proto)
    if check:
        try:
            onnx.checker.check_model(skeleton)
        except Exception as exc:  # noqa: BLE001 - the checker rejects models that runtimes still run
            warnings.append(f"onnx checker: {first_line(exc)}")
    if not infer:
        return proto
    try:
        inferred = onnx.shape_inference.infer_shapes(skeleton, check_type=False, strict_mode=False,
                                                 data_prop=data_prop)
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
    unless it is one already), and how many were moved; the model itself when none is (a copy of a graph of
    20,000 nodes takes longer than checking it)."""
    inputs = {i.name for i in proto.graph.input}
    if not any(_movable(tensor, proto.ir_version, inputs) for tensor in proto.graph.initializer):
        return proto, 0
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
    if ir_version < 4 and tensor.name not in inputs:  # before IR 4 an initializer must be an input too
        return False
    size = _raw_size(tensor)
    return size is not None and len(tensor.raw_data) == size


def tensor_bytes(tensor: onnx.TensorProto) -> int | None:
    """The bytes a tensor's type and dims call for (None for an unknown type or negative dims), computed without
    touching its data (protobuf's ByteSize serializes the message to measure it)."""
    dims = tensor.dims
    if any(d < 0 for d in dims):
        return None
    try:
        itemsize = _itemsize(tensor.data_type)
    except (KeyError, TypeError, ValueError):
        return None
    return math.prod(dims) * itemsize


@functools.cache
def _itemsize(data_type: int) -> int:
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(data_type)).itemsize


_PLAIN_FIELDS = frozenset({"name", "dims", "data_type", "raw_data", "doc_string"})
_PACKED = frozenset(getattr(onnx.TensorProto, name) for name in
                    ("INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2", "STRING")
                    if hasattr(onnx.TensorProto, name))


def model_bytes(proto: onnx.ModelProto) -> int:
    """The model's serialized size (to within a few bytes per big initializer). protobuf's ByteSize on the whole
    model would serialize every weight to measure it, so big initializers are counted from their dims and type,
    the rest measured on a copy without them."""
    big = [t for t in proto.graph.initializer if _raw_size(t) is not None]
    if not big:
        return proto.ByteSize()
    rest = onnx.ModelProto()
    copy_fields(proto, rest, skip="graph")
    copy_fields(proto.graph, rest.graph, skip="initializer")
    rest.graph.initializer.extend(t for t in proto.graph.initializer if _raw_size(t) is None)
    graph = rest.graph.ByteSize()
    full = graph + sum(_entry_bytes(t) for t in big)
    return rest.ByteSize() - _varint_bytes(graph) - graph + _varint_bytes(full) + full


def _raw_size(tensor: onnx.TensorProto) -> int | None:
    """The raw data's size of a big tensor holding only raw data, else None."""
    if tensor.data_type in _PACKED:
        return None
    size = tensor_bytes(tensor)
    if size is None or size < BIG_TENSOR_BYTES or {f.name for f, _ in tensor.ListFields()} - _PLAIN_FIELDS:
        return None
    return size


def _entry_bytes(tensor: onnx.TensorProto) -> int:
    """A big initializer's bytes in the graph: its fields but raw data measured, raw data from dims and type."""
    shell = onnx.TensorProto()
    copy_fields(tensor, shell, skip="raw_data")
    size = _raw_size(tensor) or 0
    inner = shell.ByteSize() + 1 + _varint_bytes(size) + size
    return 1 + _varint_bytes(inner) + inner


def _varint_bytes(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)
