"""Writing models whose weights are mapped (weights.py): in one file, each weight copied into it from where it
lies a piece at a time (never the whole model serialized in memory), or with its weights in an external data
file beside it; and the copy of a model onnxruntime is given, a path: a folder holding the model, its mapped
weights pointing at hard links to the files they are read from."""
from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, cast

import numpy as np
import onnx

from ..budgets import WEIGHT_COPY_BYTES
from ..errors import ModelError
from ..files.atomic_write import check_targets, final_path, replacing, staged
from ..files.scratch import scratch_folder
from ..proto.weights import FileSource, MemorySource, WeightSource, mapped_place
from ..proto.wire import encode_varint, tensor_field
from .model_guards import survey
from .model_inference import copy_fields, model_bytes

MAX_SINGLE_FILE = (2 << 30) - (1 << 20)  # protobuf's limit, less a margin for what is measured to within bytes
ALIGN = 1 << 16  # weights in an external data file start on 64 KiB boundaries, as onnx writes them
EXTERNAL_MIN_BYTES = 1024  # smaller tensors stay in the model file, as onnx writes them
_GRAPH = onnx.ModelProto.DESCRIPTOR.fields_by_name["graph"].number
_INITIALIZER = onnx.GraphProto.DESCRIPTOR.fields_by_name["initializer"].number


def needs_external(proto: onnx.ModelProto) -> bool:
    """Whether a model is written with external data: its weights came from external data files, or it would
    not fit in one protobuf file."""
    return any(place[0].role == "data" for place in _places(proto)) or model_bytes(proto) > MAX_SINGLE_FILE


def save_model(model: onnx.ModelProto | Any, path: str | os.PathLike, *, external: bool | None = None) -> list[Path]:
    """Writes a model (a ModelProto or a Model) to `path`, its weights in `<name>.data` beside it when `external`
    (by default: see needs_external); the files written. Each is written to a temporary file beside it and moved
    into place once complete (atomic_write.py): a save that fails leaves the old files as they were. A target
    that is a loaded model's file (its source or weights, a hard link to one included) is refused
    (WriteRefused) before anything is written."""
    proto = cast(onnx.ModelProto, getattr(model, "proto", model))
    target = final_path(path)
    if external is None:
        external = needs_external(proto)
    if external:
        return _save_external(proto, target)
    if model_bytes(proto) > MAX_SINGLE_FILE:
        raise ModelError(f"the model takes {model_bytes(proto)} bytes, past protobuf's 2 GiB: write it with "
                         "external data")
    with replacing(target) as out:
        _write_single(proto, out)
    return [target]


def serialize_model(model: onnx.ModelProto | Any) -> bytes:
    """A model (a ModelProto or a Model, under 2 GiB with its weights) as the bytes of one .onnx file."""
    out = io.BytesIO()
    _write_single(cast(onnx.ModelProto, getattr(model, "proto", model)), out)
    return out.getvalue()


def _places(proto: onnx.ModelProto) -> Iterator[tuple[WeightSource, int, int]]:
    for tensor in survey(proto, "the model").tensors:
        place = mapped_place(tensor)
        if place is not None:
            yield place


def _write_single(proto: onnx.ModelProto, out: IO[bytes]) -> None:
    """The main graph's mapped initializers are written as fields after the rest of the graph (protobuf reads
    fields in any order), their raw data copied from their source; mapped tensors anywhere else are read into a
    copy of the model first."""
    work = onnx.ModelProto()
    copy_fields(proto, work, skip="graph")
    copy_fields(proto.graph, work.graph, skip="initializer")
    streamed = []
    for tensor in proto.graph.initializer:
        place = mapped_place(tensor)
        if place is None:
            work.graph.initializer.append(tensor)
            continue
        head = onnx.TensorProto()
        copy_fields(tensor, head, skip="raw_data")
        head.ClearField("external_data")
        head.ClearField("data_location")
        streamed.append((tensor_field(_INITIALIZER, head.SerializeToString(), place[2]), place))
    for tensor in survey(work, "the model").tensors:  # mapped tensors in bodies, attributes, functions
        place = mapped_place(tensor)
        if place is not None:
            data = bytearray()
            copy_bytes(*place, data)
            del tensor.external_data[:]
            tensor.data_location = onnx.TensorProto.DEFAULT
            tensor.raw_data = bytes(data)
    graph_bytes = work.graph.SerializeToString()
    work.ClearField("graph")
    size = len(graph_bytes) + sum(len(a) + len(b) + place[2] for (a, b), place in streamed)
    out.write(work.SerializeToString())
    out.write(encode_varint(_GRAPH << 3 | 2) + encode_varint(size))
    out.write(graph_bytes)
    for (field_head, tensor_head), (source, offset, length) in streamed:
        out.write(field_head + tensor_head)
        copy_bytes(source, offset, length, out)


def external_data_name(target: Path) -> str:
    """The name of the file beside `target` that save_model writes a model's external data into."""
    return f"{target.name}.data"


def _save_external(proto: onnx.ModelProto, target: Path) -> list[Path]:
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)  # small: its weights are mapped or few
    data_name = external_data_name(target)
    data_path = target.parent / data_name
    check_targets([target, data_path])
    with staged() as files:
        data = files.open(data_path)  # the tensors name its final name: it is moved into place with the model
        for tensor in survey(copy, "the model").tensors:
            place = mapped_place(tensor)
            if place is None:
                raw = tensor.raw_data if tensor.HasField("raw_data") else b""
                if len(raw) < EXTERNAL_MIN_BYTES:
                    continue
                place = None
            offset = -data.tell() % ALIGN + data.tell()
            data.seek(offset)
            if place is None:
                data.write(raw)
                length = len(raw)
            else:
                copy_bytes(place[0], place[1], place[2], data)
                length = place[2]
            tensor.ClearField("raw_data")
            del tensor.external_data[:]
            for key, value in (("location", data_name), ("offset", str(offset)), ("length", str(length))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
            tensor.data_location = onnx.TensorProto.EXTERNAL
        files.open(target).write(copy.SerializeToString())
    return [target, data_path]


def copy_bytes(source: WeightSource, offset: int, length: int, out: IO[bytes] | bytearray) -> None:
    """Copies `length` bytes at `offset` of a source to a file or a bytearray, a chunk at a time (a file's read
    with pread: the mapping's pages stay untouched)."""
    write = out.extend if isinstance(out, bytearray) else out.write
    if isinstance(source, MemorySource):
        write(source.array(offset, length, np.dtype(np.uint8)).data)
        return
    assert isinstance(source, FileSource)
    done = 0
    while done < length:
        chunk = os.pread(source.fileno(), min(WEIGHT_COPY_BYTES, length - done), offset + done)
        if not chunk:
            raise ModelError(f"{source.label} ended while its weights were copied (truncated since loading?)")
        write(chunk)
        done += len(chunk)


@contextmanager
def runtime_copy(model: onnx.ModelProto | bytes | Any) -> Iterator[Path]:
    """A path to the model (a Model, a ModelProto or serialized bytes) as onnxruntime reads it, in a temporary
    folder removed on exit: the model file, its mapped weights pointing at hard links to their files (a copy
    where a link cannot be made, e.g. across file systems; a file written for weights held in memory)."""
    folder = scratch_folder("explorer-ort-")
    try:
        path = folder / "model.onnx"
        if isinstance(model, (bytes, bytearray, memoryview)):
            path.write_bytes(model)
        else:
            copy = onnx.ModelProto()
            copy.CopyFrom(getattr(model, "proto", model))
            files: dict[str, str] = {}
            for tensor in survey(copy, "the model").tensors:
                place = mapped_place(tensor)
                if place is None:
                    continue
                source = place[0]
                name = files.get(source.token)
                if name is None:
                    name = files[source.token] = f"weights{len(files)}.bin"
                    _place_file(source, folder / name)
                for entry in tensor.external_data:
                    if entry.key == "location":
                        entry.value = name
            path.write_bytes(copy.SerializeToString())
            del copy  # not held while onnxruntime reads the file
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _place_file(source: WeightSource, target: Path) -> None:
    if isinstance(source, FileSource) and source.path is not None:
        try:
            os.link(source.path, target)
            return
        except OSError:
            shutil.copyfile(source.path, target)
            return
    assert isinstance(source, MemorySource)
    with open(target, "wb") as out:
        for offset, block in sorted(source.blocks().items()):
            out.seek(offset)
            out.write(block.data)
        out.truncate(source.size)


