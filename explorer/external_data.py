"""A model's external data, read into its tensors from files inside the model's folder only (absolute paths,
`..` and symlinks out of the folder refused; offsets and lengths checked against the file)."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import onnx
from onnx import external_data_helper

from .errors import ModelError
from .model_guards import external_int


def load_external_data(tensors: Iterable[onnx.TensorProto], base_dir: Path | None, label: str) -> None:
    """Reads the external data of `tensors` (every tensor of the model: model_guards.Survey.tensors), refusing any
    location that escapes the model's folder (and any tensor with a negative dim, which numpy would read as "infer
    this one")."""
    for tensor in tensors:
        if any(d < 0 for d in tensor.dims):
            raise ModelError(f"tensor {tensor.name!r} of {label} has negative dims {list(tensor.dims)}")
        if not external_data_helper.uses_external_data(tensor):
            continue
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        if base_dir is None:
            raise ModelError(
                f"tensor {tensor.name!r} of {label} keeps its data in external file {location!r}; "
                "load the model from its path (or give base_dir) so the file can be found"
            )
        target = _safe_external_path(base_dir, location, tensor.name)
        offset = external_int(info, "offset", tensor.name) or 0
        length = external_int(info, "length", tensor.name)
        file_size = target.stat().st_size
        if offset < 0 or offset > file_size or (length is not None and (length < 0 or offset + length > file_size)):
            raise ModelError(
                f"tensor {tensor.name!r}: external data range offset={offset} length={length} "
                f"lies outside {location!r} ({file_size} bytes)"
            )
        with open(target, "rb") as f:
            f.seek(offset)
            tensor.raw_data = f.read(length if length is not None else file_size - offset)
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.DEFAULT


def _safe_external_path(base_dir: Path, location: str, tensor_name: str) -> Path:
    if not location:
        raise ModelError(f"tensor {tensor_name!r} declares external data without a location")
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
