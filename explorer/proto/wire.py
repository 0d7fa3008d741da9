"""Reading a serialized model at the protobuf wire level, to leave its weights where they are: `strip_weights`
finds the raw data of every big tensor (initializers, tensor attributes, sparse values, in the main graph, its
bodies and local functions) and returns the model's bytes without them, each such tensor turned into an
external-data reference to its place in the buffer. Parsing those bytes gives the model with no copy of its
weights; the weights are then read from the buffer (a memory-mapped file) where they lie."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import onnx

BIG_BYTES = 1 << 16  # raw data from this size on is left in the buffer; a message smaller than it holds none


def _number(message: Any, name: str) -> int:
    return int(message.DESCRIPTOR.fields_by_name[name].number)


# which length-delimited fields of a message are messages that may hold tensors, and of what kind
_CHILDREN: dict[str, dict[int, str]] = {
    "model": {_number(onnx.ModelProto, "graph"): "graph", _number(onnx.ModelProto, "functions"): "function"},
    "graph": {_number(onnx.GraphProto, "node"): "node", _number(onnx.GraphProto, "initializer"): "tensor",
              _number(onnx.GraphProto, "sparse_initializer"): "sparse"},
    "function": {_number(onnx.FunctionProto, "node"): "node"},
    "node": {_number(onnx.NodeProto, "attribute"): "attribute"},
    "attribute": {**{_number(onnx.AttributeProto, name): "tensor" for name in ("t", "tensors")},
                  **{_number(onnx.AttributeProto, name): "graph" for name in ("g", "graphs")},
                  **{_number(onnx.AttributeProto, name): "sparse" for name in ("sparse_tensor", "sparse_tensors")}},
    "sparse": {_number(onnx.SparseTensorProto, "values"): "tensor",
               _number(onnx.SparseTensorProto, "indices"): "tensor"},
}
_DIMS = _number(onnx.TensorProto, "dims")
_DATA_TYPE = _number(onnx.TensorProto, "data_type")
_RAW_DATA = _number(onnx.TensorProto, "raw_data")
_EXTERNAL_DATA = _number(onnx.TensorProto, "external_data")
_DATA_LOCATION = _number(onnx.TensorProto, "data_location")
_LENGTH_DELIMITED, _VARINT, _FIXED64, _FIXED32 = 2, 0, 1, 5

Piece = Any  # bytes, or a slice of the buffer (bytes from an mmap)
Expected = Callable[[list[int], int], "int | None"]  # the raw bytes dims and data type call for (None: unknown)


class _Malformed(Exception):
    """The buffer is not a well-formed message: left to protobuf's parser to report."""


def strip_weights(buffer: Any, location: str, expected: Expected,
                  min_bytes: int = BIG_BYTES) -> tuple[bytes, dict[int, int]] | None:
    """The model in `buffer` (bytes, or an mmap) without the raw data of its tensors of at least `min_bytes`
    whose raw data has the size their dims and type call for (`expected`; any other stays, for onnx's checker to
    report), each such tensor an external-data reference (`location`, its data's offset in the buffer and its
    length), and those places {offset: length}; None when there is no such tensor or the buffer is not a
    well-formed message (protobuf's parser then says why)."""
    stripped: dict[int, int] = {}
    walk = _Walk(location, expected, min_bytes, stripped)
    try:
        pieces = walk.message(buffer, 0, len(buffer), "model")
    except (_Malformed, IndexError):
        return None
    if pieces is None:
        return None
    return b"".join(pieces), stripped


def _varint(buffer: Any, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buffer[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise _Malformed


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _skip(buffer: Any, pos: int, wire: int) -> int:
    if wire == _VARINT:
        return _varint(buffer, pos)[1]
    if wire == _FIXED64:
        return pos + 8
    if wire == _FIXED32:
        return pos + 4
    raise _Malformed  # groups (wire types 3, 4) are not in ONNX's messages


class _Walk:
    """One strip_weights pass: where stripped tensors point, which raw data is stripped, what it found."""

    def __init__(self, location: str, expected: Expected, min_bytes: int, stripped: dict[int, int]) -> None:
        self.location, self.expected, self.min_bytes, self.stripped = location, expected, min_bytes, stripped

    def message(self, buffer: Any, start: int, end: int, kind: str) -> list[Piece] | None:
        """The pieces of the message at buffer[start:end] with the big tensors it holds stripped, or None when
        it holds none (only fields at least `min_bytes` long are looked into)."""
        children = _CHILDREN[kind]
        out: list[Piece] = []
        kept = pos = start  # buffer[kept:field] goes out unchanged
        while pos < end:
            field = pos
            key, pos = _varint(buffer, pos)
            if key & 7 != _LENGTH_DELIMITED:
                pos = _skip(buffer, pos, key & 7)
                continue
            length, body = _varint(buffer, pos)
            pos = body + length
            if pos > end:
                raise _Malformed
            child = children.get(key >> 3)
            if child is None or length < self.min_bytes:
                continue
            inner = (self.tensor(buffer, body, pos) if child == "tensor"
                     else self.message(buffer, body, pos, child))
            if inner is None:
                continue
            out.append(buffer[kept:field])
            out.append(encode_varint(key) + encode_varint(sum(map(len, inner))))
            out.extend(inner)
            kept = pos
        if pos != end:
            raise _Malformed
        if not out:
            return None
        out.append(buffer[kept:end])
        return out

    def tensor(self, buffer: Any, start: int, end: int) -> list[Piece] | None:
        """A TensorProto's pieces with its raw data replaced by an external-data reference to it, or None when
        its raw data is small or not the size its dims and type call for, or it already says where its data is."""
        raw: tuple[int, int, int] | None = None  # (field start, data start, data end)
        dims: list[int] = []
        data_type = 0
        pos = start
        while pos < end:
            field = pos
            key, pos = _varint(buffer, pos)
            number, wire = key >> 3, key & 7
            if number in (_EXTERNAL_DATA, _DATA_LOCATION):
                return None
            if number == _DIMS and wire == _VARINT:
                value, pos = _varint(buffer, pos)
                dims.append(_signed(value))
            elif number == _DATA_TYPE and wire == _VARINT:
                data_type, pos = _varint(buffer, pos)
            elif wire != _LENGTH_DELIMITED:
                pos = _skip(buffer, pos, wire)
            else:
                length, body = _varint(buffer, pos)
                pos = body + length
                if number == _RAW_DATA:
                    raw = (field, body, pos)
                elif number == _DIMS:  # packed dims
                    inner = body
                    while inner < pos:
                        value, inner = _varint(buffer, inner)
                        dims.append(_signed(value))
        if pos != end:
            raise _Malformed
        if raw is None or raw[2] - raw[1] < self.min_bytes or self.expected(dims, data_type) != raw[2] - raw[1]:
            return None
        field, data, data_end = raw
        self.stripped[data] = data_end - data
        reference = b"".join(_entry(key, value) for key, value in
                             (("location", self.location), ("offset", str(data)), ("length", str(data_end - data))))
        return [buffer[start:field], buffer[data_end:end], reference,
                encode_varint(_DATA_LOCATION << 3 | _VARINT) + encode_varint(onnx.TensorProto.EXTERNAL)]


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _entry(key: str, value: str) -> bytes:
    """One external_data entry (a StringStringEntryProto) as a TensorProto field."""
    inner = _field(1, key.encode()) + _field(2, value.encode())
    return _field(_EXTERNAL_DATA, inner)


def _field(number: int, data: bytes) -> bytes:
    return encode_varint(number << 3 | _LENGTH_DELIMITED) + encode_varint(len(data)) + data


def tensor_field(number: int, head: bytes, raw_length: int) -> Sequence[bytes]:
    """The start of a length-delimited field `number` holding a TensorProto whose serialized fields are `head`
    followed by a raw_data field of `raw_length` bytes (which the caller writes next)."""
    raw_head = encode_varint(_RAW_DATA << 3 | _LENGTH_DELIMITED) + encode_varint(raw_length)
    size = len(head) + len(raw_head) + raw_length
    return encode_varint(number << 3 | _LENGTH_DELIMITED) + encode_varint(size), head + raw_head
