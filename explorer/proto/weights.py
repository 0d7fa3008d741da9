"""Weights kept out of the protobuf. A mapped tensor's bytes stay in a weight source: a file mapped read-only
(its external data, or the model file itself, whose raw data wire.strip_weights left in place) or aligned
in-memory copies (a model given as bytes). The tensor says where they are in the proto itself, as external
data: location `#explorer:<source token>`, offset and length (onnx's checker and shape inference accept such a
location without reading it, and copies of the proto keep pointing at the same bytes). `tensor_value` gives any
tensor's value, a mapped one as a read-only NumPy view of its bytes.

Sources live as long as something holds them: the Model that mapped them, and whatever keeps protos made from
it (an optimization result). The registry only finds a live source by its token."""
from __future__ import annotations

import functools
import hashlib
import math
import mmap
import os
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from ..budgets import WEIGHT_READ_BYTES
from ..errors import ModelError

MAPPED = "#explorer:"  # location prefix of a mapped tensor
# packed element types: bits per element (their raw data holds several elements per byte)
_PACKED_BITS = {getattr(onnx.TensorProto, name): bits for name, bits in
                (("INT4", 4), ("UINT4", 4), ("FLOAT4E2M1", 4), ("INT2", 2), ("UINT2", 2))
                if hasattr(onnx.TensorProto, name)}


class WeightSource:
    """Bytes that mapped tensors point into. `role`: "model" (the model file's own raw data), "data" (an external
    data file) or "memory"."""

    token: str
    label: str
    size: int
    role: str
    path: Path | None = None

    def array(self, offset: int, count: int, dtype: np.dtype, aligned: bool = False) -> np.ndarray:
        """`count` elements of `dtype` at `offset`, read-only, without a copy (`aligned`: copied into aligned
        memory when they do not start at a multiple of the item size, as BLAS needs)."""
        raise NotImplementedError


class FileSource(WeightSource):
    """A file mapped read-only (pages are read when touched and belong to the system's file cache)."""

    def __init__(self, path: Path, token: str, role: str) -> None:
        self.path, self.token, self.role, self.label = path, token, role, str(path)
        self._file = open(path, "rb")  # noqa: SIM115 - open as long as the source: its mapping reads it
        self.size = os.fstat(self._file.fileno()).st_size
        self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if self.size else None

    def array(self, offset: int, count: int, dtype: np.dtype, aligned: bool = False) -> np.ndarray:
        if self._map is None:
            return np.empty(0, dtype)
        if aligned and offset % dtype.itemsize:
            copy = np.empty(count, dtype)  # read, not copied from the mapping: the mapping's pages stay unread
            target, done = copy.data.cast("B"), 0
            while done < len(target):
                chunk = os.pread(self._file.fileno(), min(WEIGHT_READ_BYTES, len(target) - done), offset + done)
                if not chunk:
                    raise ModelError(f"{self.label} ended while reading its weights (truncated since loading?)")
                target[done:done + len(chunk)] = chunk
                done += len(chunk)
            copy.flags.writeable = False
            return copy
        return np.frombuffer(self._map, dtype, count, offset)

    def fileno(self) -> int:
        return self._file.fileno()

    @property
    def buffer(self) -> Any:
        return self._map if self._map is not None else b""


class MemorySource(WeightSource):
    """Weights copied out of a buffer that is not kept (a model given as bytes): one aligned array per place."""

    def __init__(self, token: str, label: str, size: int, blocks: dict[int, np.ndarray]) -> None:
        self.token, self.label, self.size, self.role, self._blocks = token, label, size, "memory", blocks

    def array(self, offset: int, count: int, dtype: np.dtype, aligned: bool = False) -> np.ndarray:
        block = self._blocks.get(offset)
        if block is None or block.size < count * dtype.itemsize:
            raise ModelError(f"no weights at offset {offset} of {self.label}")
        return block[:count * dtype.itemsize].view(dtype)

    def blocks(self) -> dict[int, np.ndarray]:
        return self._blocks


_SOURCES: weakref.WeakValueDictionary[str, WeightSource] = weakref.WeakValueDictionary()


def file_source(path: Path, role: str) -> FileSource:
    """The mapping of a file (shared while alive by every model reading the same unchanged file)."""
    resolved = path.resolve()
    stat = resolved.stat()
    identity = f"{resolved}\0{stat.st_dev}\0{stat.st_ino}\0{stat.st_size}\0{stat.st_mtime_ns}\0{role}"
    token = "f" + hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    found = _SOURCES.get(token)
    if isinstance(found, FileSource):
        return found
    source = _SOURCES[token] = FileSource(resolved, token, role)
    return source


def memory_source(buffer: Any, places: dict[int, int], label: str) -> MemorySource:
    """Aligned copies of the places {offset: length} of `buffer`, as a source keyed by their content (loading
    the same bytes again shares it)."""
    digest = hashlib.sha256()
    for offset, length in sorted(places.items()):
        digest.update(f"{offset}:{length}:".encode())
        digest.update(memoryview(buffer)[offset:offset + length])
    token = "m" + digest.hexdigest()[:24]
    found = _SOURCES.get(token)
    if isinstance(found, MemorySource):
        return found
    blocks = {}
    for offset, length in places.items():
        block = np.empty(length, np.uint8)
        block[:] = np.frombuffer(buffer, np.uint8, length, offset)
        block.flags.writeable = False
        blocks[offset] = block
    source = _SOURCES[token] = MemorySource(token, label, len(buffer), blocks)
    return source


def array_source(value: np.ndarray, label: str) -> MemorySource:
    """A source holding one array's bytes, for weights computed in memory (a rewrite's folded weight): the
    source's block is a read-only view of a C-order `value`, no copy. Alive while something holds it."""
    block = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
    block.flags.writeable = False
    token = "a" + uuid.uuid4().hex[:24]
    source = _SOURCES[token] = MemorySource(token, label, block.size, {0: block})
    return source


def mapped_tensor(value: np.ndarray, name: str, source: WeightSource) -> onnx.TensorProto:
    """A tensor named `name` of `value`'s type and shape whose bytes are `source`'s from offset 0."""
    tensor = onnx.TensorProto(name=name, data_type=onnx.helper.np_dtype_to_tensor_dtype(value.dtype),
                              dims=value.shape)
    set_mapped(tensor, source, 0, value.nbytes)
    return tensor


def source_of(token: str) -> WeightSource | None:
    return _SOURCES.get(token)


def entries(tensor: onnx.TensorProto) -> dict[str, str]:
    return {entry.key: entry.value for entry in tensor.external_data}


def is_external(tensor: onnx.TensorProto) -> bool:
    return tensor.data_location == onnx.TensorProto.EXTERNAL or len(tensor.external_data) > 0


def mapped_place(tensor: onnx.TensorProto) -> tuple[WeightSource, int, int] | None:
    """(source, offset, length) of a mapped tensor; None for any other tensor. ModelError when its source is
    gone (every Model and result that held it was dropped)."""
    if tensor.data_location != onnx.TensorProto.EXTERNAL:
        return None
    info = entries(tensor)
    location = info.get("location", "")
    if not location.startswith(MAPPED):
        return None
    source = _SOURCES.get(location[len(MAPPED):])
    if source is None:
        raise ModelError(f"tensor {tensor.name!r} points at weights that are no longer mapped (the model they "
                         "came from was released)")
    return source, int(info.get("offset") or 0), int(info["length"])


def set_mapped(tensor: onnx.TensorProto, source: WeightSource, offset: int, length: int) -> None:
    """Makes `tensor` point at `length` bytes at `offset` of `source` (its raw data, if any, dropped)."""
    tensor.ClearField("raw_data")
    del tensor.external_data[:]
    for key, value in (("location", MAPPED + source.token), ("offset", str(offset)), ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    tensor.data_location = onnx.TensorProto.EXTERNAL


def data_bytes(tensor: onnx.TensorProto) -> int | None:
    """The bytes of raw data a tensor's type and dims call for (see raw_bytes)."""
    return raw_bytes(tensor.dims, tensor.data_type)


def raw_bytes(dims: Sequence[int], data_type: int) -> int | None:
    """The bytes of raw data dims and an element type call for: elements times item size, packed 4- and 2-bit
    elements rounded up to a byte; None for strings, an unknown type or negative dims."""
    if any(d < 0 for d in dims) or data_type == onnx.TensorProto.STRING:
        return None
    count = math.prod(dims)
    bits = _PACKED_BITS.get(data_type)
    if bits is not None:
        return (count * bits + 7) // 8
    try:
        return count * _dtype(data_type).itemsize
    except (KeyError, TypeError, ValueError):
        return None


@functools.cache
def _dtype(data_type: int) -> np.dtype:
    return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(data_type))


def tensor_value(tensor: onnx.TensorProto, aligned: bool = False) -> np.ndarray:
    """A tensor's value: a mapped tensor's as a read-only view of its bytes (copied only to align it when
    `aligned`, or to unpack 4- and 2-bit elements), any other as onnx reads it. ModelError for a tensor that
    keeps its data in a file no model mapped (onnx would read it from the current folder)."""
    place = mapped_place(tensor)
    if place is None:
        if is_external(tensor):
            location = entries(tensor).get("location", "")
            raise ModelError(f"tensor {tensor.name!r} keeps its data in external file {location!r}, which was "
                             "not loaded; load the model from its path (or give base_dir)")
        return numpy_helper.to_array(tensor)
    source, offset, length = place
    dims = tuple(tensor.dims)
    if tensor.data_type in _PACKED_BITS:
        packed = onnx.TensorProto(name=tensor.name, data_type=tensor.data_type, dims=dims)
        packed.raw_data = source.array(offset, length, np.dtype(np.uint8)).tobytes()
        return numpy_helper.to_array(packed)
    dtype = _dtype(tensor.data_type)
    return source.array(offset, math.prod(dims), dtype, aligned).reshape(dims)
