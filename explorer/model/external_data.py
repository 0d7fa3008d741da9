"""A model's external data, mapped from files inside the model's folder only (absolute paths, `..` and symlinks
out of the folder refused). Every tensor's offset and length are checked against its file and against the
bytes its type and dims call for before any file is mapped; a tensor of under INLINE_BYTES (a shape, axes) is
read into the proto, where shape inference can read it; any other becomes a mapped tensor (weights.py)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from ..errors import ModelError
from ..proto.weights import (
    MAPPED,
    WeightSource,
    data_bytes,
    entries,
    file_source,
    is_external,
    set_mapped,
    source_of,
)
from .model_guards import external_int

INLINE_BYTES = 1024  # onnx's own writer keeps tensors under this size in the proto


@dataclass
class Stripped:
    """The places wire.strip_weights left in the buffer a model was parsed from: tensors pointing at
    `location` and one of these places are the model's own (a file could not forge them)."""

    location: str
    source: WeightSource
    places: dict[int, int]


@dataclass
class Mapped:
    """What mapping a model's tensors found: the sources they point into (the model keeps them alive), whether
    any of them is an external data file, and every source read (those of small tensors read into the proto
    too)."""

    sources: list[WeightSource] = field(default_factory=list)
    external: bool = False
    files: list[WeightSource] = field(default_factory=list)  # every source read, mapped or inlined

    def add(self, source: WeightSource) -> None:
        if all(source is not known for known in self.sources):
            self.sources.append(source)
        self.external = self.external or source.role == "data"


def map_external_data(tensors: Iterable[onnx.TensorProto], base_dir: Path | None, label: str, *,
                      stripped: Stripped | None = None, trusted: bool = False) -> Mapped:
    """Points every external tensor of `tensors` (every tensor of the model: model_guards.Survey.tensors) at its
    mapped bytes, refusing a location that escapes the model's folder, a range outside its file, a length that
    is not what the tensor's type and dims call for (and any tensor with a negative dim, which numpy would read
    as "infer this one"). `trusted` (a ModelProto made in this process) lets tensors keep pointing at sources
    mapped before."""
    found = Mapped()
    pending: list[tuple[onnx.TensorProto, Path | WeightSource, int, int]] = []
    for tensor in tensors:
        if any(d < 0 for d in tensor.dims):
            raise ModelError(f"tensor {tensor.name!r} of {label} has negative dims {list(tensor.dims)}")
        if not is_external(tensor):
            continue
        info = entries(tensor)
        location = info.get("location", "")
        offset = external_int(info, "offset", tensor.name) or 0
        length = external_int(info, "length", tensor.name)
        where: Path | WeightSource
        if stripped is not None and location == stripped.location and stripped.places.get(offset) == length:
            where = stripped.source
        elif trusted and location.startswith(MAPPED) and source_of(location[len(MAPPED):]) is not None:
            where = source_of(location[len(MAPPED):])  # type: ignore[assignment]
        elif base_dir is None:
            raise ModelError(f"tensor {tensor.name!r} of {label} keeps its data in external file {location!r}; "
                             "load the model from its path (or give base_dir) so the file can be found")
        else:
            where = _safe_external_path(base_dir, location, tensor.name)
        size = where.size if isinstance(where, WeightSource) else where.stat().st_size
        expected = data_bytes(tensor)
        if expected is None:
            raise ModelError(f"tensor {tensor.name!r} of {label} keeps its data in an external file, which a "
                             f"tensor of type {onnx.TensorProto.DataType.Name(tensor.data_type)} may not do")
        length = expected if length is None else length
        if offset < 0 or length < 0 or offset + length > size:
            raise ModelError(f"tensor {tensor.name!r}: external data range offset={offset} length={length} "
                             f"lies outside {_name(where, location)!r} ({size} bytes)")
        if length != expected:
            raise ModelError(f"tensor {tensor.name!r}: its external data holds {length} bytes; its type and dims "
                             f"{list(tensor.dims)} call for {expected}")
        pending.append((tensor, where, offset, length))
    for tensor, where, offset, length in pending:  # every range checked: only now is anything mapped or read
        source = where if isinstance(where, WeightSource) else file_source(where, "data")
        if all(source is not known for known in found.files):
            found.files.append(source)
        if length < INLINE_BYTES:
            _inline(tensor, source, offset, length)
            continue
        set_mapped(tensor, source, offset, length)
        found.add(source)
    return found


def _inline(tensor: onnx.TensorProto, source: WeightSource, offset: int, length: int) -> None:
    data = source.array(offset, length, np.dtype(np.uint8)).tobytes()
    del tensor.external_data[:]
    tensor.data_location = onnx.TensorProto.DEFAULT
    tensor.raw_data = data


def _name(where: Path | WeightSource, location: str) -> str:
    return location if isinstance(where, Path) or where.role != "model" else where.label


def _safe_external_path(base_dir: Path, location: str, tensor_name: str) -> Path:
    if not location:
        raise ModelError(f"tensor {tensor_name!r} declares external data without a location")
    if location.startswith("#"):
        raise ModelError(f"tensor {tensor_name!r}: external data location {location!r} names no file; refused")
    loc = Path(location)
    if loc.is_absolute() or location.startswith(("/", "\\")) or ":" in location.split("/")[0]:
        raise ModelError(f"tensor {tensor_name!r}: external data location {location!r} is absolute; refused")
    if ".." in Path(location.replace("\\", "/")).parts:
        raise ModelError(f"tensor {tensor_name!r}: external data location {location!r} escapes the model folder; refused")
    root = base_dir.resolve()
    target = (root / loc).resolve()
    if root != target and root not in target.parents:
        raise ModelError(
            f"tensor {tensor_name!r}: external data location {location!r} resolves outside the model folder "
            "(symlink?); refused"
        )
    if not target.is_file():
        raise ModelError(f"tensor {tensor_name!r}: external data file {location!r} not found next to the model")
    return target
