"""onnx's checker and shape inference on a loaded model, and its size. Both serialize the model they are given
(and inference parses back a copy): they cost little because a loaded model's weights are not in its proto
(weights.py), only where the bytes of each are."""
from __future__ import annotations

from collections.abc import Callable

import onnx
from google.protobuf.message import Message

from ..proto.weights import MAPPED, data_bytes, entries
from ..proto.wire import BIG_BYTES


def check_and_infer(proto: onnx.ModelProto, warnings: list[str], first_line: Callable[[Exception], str], *,
                    infer: bool = True, check: bool = True, data_prop: bool = True) -> onnx.ModelProto:
    """The model with inferred shapes (a new proto; `proto` itself without `infer`); checker complaints (unless
    `check` is False) and an inference failure are appended to `warnings`. `data_prop` lets inference compute
    the values of shape tensors (off where onnx would mix up values of the same name in two graphs)."""
    if check:
        try:
            onnx.checker.check_model(proto)
        except Exception as exc:  # noqa: BLE001 - the checker rejects models that runtimes still run
            warnings.append(f"onnx checker: {first_line(exc)}")
    if not infer:
        return proto
    try:
        return onnx.shape_inference.infer_shapes(proto, check_type=False, strict_mode=False, data_prop=data_prop)
    except Exception as exc:  # noqa: BLE001 - inference failing is a warning, the model may still run
        warnings.append(f"shape inference failed: {first_line(exc)}")
        return proto


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


_PLAIN_FIELDS = frozenset({"name", "dims", "data_type", "raw_data", "doc_string"})
_PLACE_FIELDS = frozenset({"external_data", "data_location"})


def model_bytes(proto: onnx.ModelProto) -> int:
    """The model's size serialized in one piece, its mapped weights in it (to within a few bytes per big
    initializer). protobuf's ByteSize on the whole model would serialize every weight to measure it, so big
    initializers are counted from their size, the rest measured on a copy without them."""
    big = [(t, size) for t in proto.graph.initializer if (size := inline_size(t)) is not None]
    if not big:
        return proto.ByteSize()
    rest = onnx.ModelProto()
    copy_fields(proto, rest, skip="graph")
    copy_fields(proto.graph, rest.graph, skip="initializer")
    rest.graph.initializer.extend(t for t in proto.graph.initializer if inline_size(t) is None)
    graph = rest.graph.ByteSize()
    full = graph + sum(_entry_bytes(t, size) for t, size in big)
    return rest.ByteSize() - _varint_bytes(graph) - graph + _varint_bytes(full) + full


def inline_size(tensor: onnx.TensorProto) -> int | None:
    """The raw data's size of a big tensor holding only raw data, or of a mapped tensor (as it would be written
    in one piece); None for any other."""
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        info = entries(tensor)
        return int(info["length"]) if info.get("location", "").startswith(MAPPED) else None
    size = data_bytes(tensor)
    if size is None or size < BIG_BYTES or {f.name for f, _ in tensor.ListFields()} - _PLAIN_FIELDS:
        return None
    return size if len(tensor.raw_data) == size else None


def _entry_bytes(tensor: onnx.TensorProto, size: int) -> int:
    """A big initializer's bytes in the graph: its fields but its data measured, raw data counted."""
    shell = onnx.TensorProto()
    copy_fields(tensor, shell, skip="raw_data")
    for name in _PLACE_FIELDS:
        shell.ClearField(name)
    inner = shell.ByteSize() + 1 + _varint_bytes(size) + size
    return 1 + _varint_bytes(inner) + inner


def _varint_bytes(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)
