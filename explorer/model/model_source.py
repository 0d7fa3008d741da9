"""Parsing a model from a path, bytes or a ModelProto once, without a second copy of its weights: a file is
mapped and its big raw data left where it lies, bytes are parsed without their big raw data (copied once into
aligned arrays), a ModelProto is serialized and read as bytes (weights.py keeps them)."""
from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx
from google.protobuf.message import DecodeError, EncodeError

from ..budgets import MAX_MODEL_BYTES, STRIP_MIN_BYTES
from ..errors import ModelError
from ..proto.weights import file_source, memory_source, raw_bytes
from ..proto.wire import strip_weights
from .external_data import Stripped


@dataclass
class Parsed:
    """A parsed model and where it came from: its file (None for bytes and protos), the folder its external data
    is read from, the raw data left in the buffer it was parsed from, and whether its tensors may point at
    weights mapped before (a ModelProto made in this process)."""

    proto: onnx.ModelProto
    label: str
    path: Path | None
    base_dir: Path | None
    stripped: Stripped | None
    trusted: bool = False


def parse_model(source: str | os.PathLike | bytes | onnx.ModelProto, base_dir: str | os.PathLike | None,
                label: str | None) -> Parsed:
    """The model parsed from `source`; ModelError when it is not one (missing file, garbage bytes)."""
    folder = Path(base_dir) if base_dir is not None else None
    if isinstance(source, onnx.ModelProto):
        label = label or "<ModelProto>"
        try:
            data = source.SerializeToString()
        except (EncodeError, ValueError):
            raise ModelError(f"{label} cannot be serialized (over 2 GiB?): save it with external data and load it "
                             "from its path") from None
        proto, stripped = _parse_memory(data, label)
        return Parsed(proto, label, None, folder, stripped, trusted=True)
    if isinstance(source, (bytes, bytearray, memoryview)):
        label = label or "<bytes>"
        proto, stripped = _parse_memory(memoryview(source).cast("B"), label)
        return Parsed(proto, label, None, folder, stripped)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise ModelError(f"{str(path)!r} does not exist")
        if not path.is_file():
            raise ModelError(f"{str(path)!r} is not a file")
        size = path.stat().st_size
        if size > MAX_MODEL_BYTES:
            raise ModelError(f"{str(path)!r} is {size} bytes; protobuf models are limited to 2 GiB (bigger "
                             "models keep their weights in external data files)")
        label = label or str(path)
        proto, stripped = _parse_file(path, size, label)
        return Parsed(proto, label, path, path.resolve().parent if folder is None else folder, stripped)
    raise ModelError(f"cannot load a model from a {type(source).__name__}; give a path, bytes or a ModelProto")


def _parse_file(path: Path, size: int, label: str) -> tuple[onnx.ModelProto, Stripped | None]:
    if size < STRIP_MIN_BYTES:
        return parse_bytes(path.read_bytes(), label), None
    source = file_source(path, "model")
    location = _private_location()
    found = strip_weights(source.buffer, location, raw_bytes)
    if found is None:
        return parse_bytes(memoryview(source.buffer), label), None
    skeleton, places = found
    return parse_bytes(skeleton, label), Stripped(location, source, places)


def _parse_memory(data: Any, label: str) -> tuple[onnx.ModelProto, Stripped | None]:
    if len(data) < STRIP_MIN_BYTES:
        return parse_bytes(data, label), None
    location = _private_location()
    found = strip_weights(data, location, raw_bytes)
    if found is None:
        return parse_bytes(data, label), None
    skeleton, places = found
    return parse_bytes(skeleton, label), Stripped(location, memory_source(data, places, label), places)


def _private_location() -> str:
    """A location no file can name beforehand: stripped tensors point at it, so only they are read from the buffer
    the model was parsed from."""
    return f"#stripped:{secrets.token_hex(16)}"


def parse_bytes(data: Any, label: str) -> onnx.ModelProto:
    """The ModelProto in `data`; ModelError when it is empty or not one."""
    if not len(data):
        raise ModelError(f"{label} is empty: not an ONNX model")
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise ModelError(f"{label} is not an ONNX model (truncated or garbage bytes: {exc})") from None
    return proto
