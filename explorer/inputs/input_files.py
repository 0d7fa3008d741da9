"""User-supplied feeds: reading an .npz or an ONNX test data set's input_<i>.pb files, small tensors as editable
grids and back, and a content key per set of feeds (so a run is redone only when model or inputs change)."""
from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import onnx
from google.protobuf import unknown_fields

from ..errors import FeedError
from ..files.access import confined_folder, open_confined
from ..files.archive import check_declared_sizes, open_zip, read_npy
from ..limits import Limits
from ..model.feeds import proto_to_value
from ..model.model import Model, ValueSpec

MAX_EDITABLE = 256  # elements of a tensor small enough to edit in a table


def feeds_from_npz(data: bytes, limits: Limits | None = None) -> dict[str, np.ndarray]:
    """name -> array of an .npz file's members, each checked (dtype, shape, size) before it is inflated
    against `limits.max_input_bytes` in total and `max_tensor_bytes` each. FeedError when it is not an .npz or
    breaks a limit."""
    limits = limits or Limits()
    what = "the inputs file"
    if data[:6] == b"\x93NUMPY":
        raise FeedError(f"{what} is a single .npy array, not an .npz with one array per input")
    with open_zip(data, what, FeedError) as archive:
        names = archive.namelist()
        if not names:
            raise FeedError(f"{what} is an empty .npz: it holds no arrays")
        check_declared_sizes(archive, names, limits.max_input_bytes, what, FeedError)
        feeds = {}
        for name in names:
            if not name.endswith(".npy"):
                raise FeedError(f"{what}: member {name!r} is not an .npy array")
            feeds[name[:-4]] = read_npy(archive, name, min(limits.max_tensor_bytes, limits.max_input_bytes),
                                        what, FeedError)
        return feeds


_PROTO_OF_KIND = {"tensor": onnx.TensorProto, "sequence": onnx.SequenceProto, "optional": onnx.OptionalProto,
                  "map": onnx.MapProto}
_INPUT_FILE = re.compile(r"input_(\d+)\.pb")


def feeds_from_npz_file(path: str | Path, limits: Limits | None = None,
                        folders: Sequence[Path] | None = None) -> dict[str, np.ndarray]:
    """`feeds_from_npz` of a file; with `folders` (a shared app's: access.Access.read_folders), only a file that
    lies inside one of them, symlinks followed (AccessRefused otherwise)."""
    with open_confined(path, folders) as f:
        budget = (limits or Limits()).max_input_bytes
        if os.fstat(f.fileno()).st_size > budget + (16 << 20):  # its arrays are checked again before they inflate
            raise FeedError(f"the inputs file holds more than {budget} bytes (the limit for external inputs)")
        return feeds_from_npz(f.read(), limits)


def _read_files(paths: list[Path], folders: Sequence[Path] | None, budget: int, what: str) -> dict[str, bytes]:
    """name -> bytes of a test data set's files, each opened with access.open_confined (with `folders`, only
    files inside them, symlinks followed), their sizes told by the open files before any is read."""
    opened: list[tuple[str, BinaryIO]] = []
    try:
        for path in paths:
            opened.append((path.name, open_confined(path, folders)))
        if sum(os.fstat(f.fileno()).st_size for _, f in opened) > budget:
            raise FeedError(f"the {what} files of {str(paths[0].parent)!r} hold more than {budget} bytes (the limit "
                            "for external inputs)")
        return {name: f.read() for name, f in opened}
    finally:
        for _, f in opened:
            f.close()


def feeds_from_test_data(model: Model, folder: str | Path, limits: Limits | None = None,
                         folders: Sequence[Path] | None = None) -> dict[str, Any]:
    """An ONNX test data set (a folder with input_0.pb, input_1.pb, ... as model zoos and the backend tests ship
    them) as feeds; see `feeds_from_input_protos`. With `folders` (a shared app's), every file read must lie
    inside one of them, symlinks followed (AccessRefused otherwise)."""
    folder = confined_folder(folder, folders)
    paths = sorted(path for path in folder.glob("input_*.pb") if _INPUT_FILE.fullmatch(path.name))
    if not paths:
        raise FeedError(f"{str(folder)!r} holds no input_<i>.pb files (an ONNX test data set)")
    files = _read_files(paths, folders, (limits or Limits()).max_input_bytes, "input_<i>.pb")
    return feeds_from_input_protos(model, files, limits)


def feeds_from_input_protos(model: Model, files: dict[str, bytes], limits: Limits | None = None) -> dict[str, Any]:
    """Feeds from the files of an ONNX test data set (file name -> bytes): input_<i>.pb is the model's i-th
    input, read as the proto its declared type calls for. Files with other names (output_0.pb) are ignored.
    FeedError when there is no input_<i>.pb, an i beyond the model's inputs, or a file that is not that proto."""
    numbered: dict[int, str] = {}
    for name in files:
        match = _INPUT_FILE.fullmatch(Path(name).name)
        if match is None:
            continue
        index = int(match.group(1))
        if index in numbered:
            raise FeedError(f"{numbered[index]} and {name} both give input {index}")
        numbered[index] = name
    if not numbered:
        raise FeedError(f"none of {sorted(files)} is named input_<i>.pb (file i of an ONNX test data set is the "
                        "model's input i)")
    beyond = sorted(i for i in numbered if i >= len(model.inputs))
    if beyond:
        raise FeedError(f"{numbered[beyond[0]]} is input {beyond[0]}, but the model takes {len(model.inputs)} "
                        f"input(s): {[s.name for s in model.inputs]}")
    max_bytes = (limits or Limits()).max_tensor_bytes
    return {model.inputs[i].name: _read_value_proto(model.inputs[i], numbered[i], files[numbered[i]], max_bytes)
            for i in sorted(numbered)}


_OUTPUT_FILE = re.compile(r"output_(\d+)\.pb")


def outputs_from_test_data(model: Model, folder: str | Path, limits: Limits | None = None,
                           folders: Sequence[Path] | None = None) -> dict[str, Any]:
    """The reference outputs of an ONNX test data set: output_<i>.pb is the model's i-th output, keyed by its
    name. FeedError when the folder holds none, an i beyond the model's outputs, or a file that is not that
    proto. With `folders` (a shared app's), every file read must lie inside one of them, symlinks followed
    (AccessRefused otherwise)."""
    folder = confined_folder(folder, folders)
    numbered = {int(m.group(1)): path for path in folder.glob("output_*.pb")
                if (m := _OUTPUT_FILE.fullmatch(path.name))}
    if not numbered:
        raise FeedError(f"{str(folder)!r} holds no output_<i>.pb files (an ONNX test data set's reference outputs)")
    beyond = sorted(i for i in numbered if i >= len(model.outputs))
    if beyond:
        raise FeedError(f"{numbered[beyond[0]].name} is output {beyond[0]}, but the model has "
                        f"{len(model.outputs)} output(s): {[s.name for s in model.outputs]}")
    limits = limits or Limits()
    order = sorted(numbered)
    files = _read_files([numbered[i] for i in order], folders, limits.max_input_bytes, "output_<i>.pb")
    return {model.outputs[i].name: _read_value_proto(model.outputs[i], numbered[i].name, files[numbered[i].name],
                                                     limits.max_tensor_bytes, "output") for i in order}


def _read_value_proto(spec: ValueSpec, file_name: str, data: bytes, max_bytes: int, role: str = "input") -> Any:
    proto = _PROTO_OF_KIND.get(spec.kind, onnx.TensorProto)()
    what = f"{file_name} is not a serialized {type(proto).__name__} for {role} {spec.name!r} ({spec.describe()})"
    try:
        proto.ParseFromString(data)
    except Exception as exc:  # noqa: BLE001 - any parse failure is a bad file
        raise FeedError(f"{what}: {exc}") from None
    # bytes of another message often parse, leaving the fields this one does not have as unknown fields
    if len(unknown_fields.UnknownFieldSet(proto)):
        raise FeedError(f"{what}: it holds fields a {type(proto).__name__} does not have")
    problem = _unbounded(proto, max_bytes)
    if problem:
        raise FeedError(f"{what}: {problem}")
    try:
        return proto_to_value(proto)
    except Exception as exc:  # noqa: BLE001 - e.g. raw_data of the wrong size for its dims
        raise FeedError(f"{what}: {exc}") from None


def _unbounded(proto: Any, max_bytes: int) -> str | None:
    """Why a feed proto may not be materialized (external data, a declared size past the limit), or None."""
    if isinstance(proto, onnx.TensorProto):
        if proto.data_location == onnx.TensorProto.EXTERNAL or len(proto.external_data):
            return f"tensor {proto.name!r} keeps its data in an external file, which feeds may not do"
        size = 1
        for dim in proto.dims:
            size *= max(dim, 0)
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(proto.data_type)).itemsize if proto.data_type else 1
        if size * itemsize > max_bytes:
            return f"tensor {proto.name!r} declares dims {list(proto.dims)}, beyond the limit of {max_bytes} bytes"
        return None
    if isinstance(proto, onnx.SequenceProto):
        items = [*proto.tensor_values, *proto.sequence_values, *proto.map_values, *proto.optional_values]
    elif isinstance(proto, onnx.MapProto):
        items = [proto.values]
    elif isinstance(proto, onnx.OptionalProto):
        items = [proto.tensor_value, proto.sequence_value, proto.map_value, proto.optional_value]
    else:
        items = []
    return next((p for p in (_unbounded(item, max_bytes) for item in items) if p), None)


def feeds_from_upload(model: Model, files: dict[str, bytes]) -> dict[str, Any]:
    """Feeds from uploaded files: one .npz (name -> array), or the input_<i>.pb files of an ONNX test data set."""
    npz = [name for name in files if name.lower().endswith(".npz")]
    if npz and len(files) > 1:
        raise FeedError(f"upload either one .npz or input_<i>.pb files, not {len(files)} files with "
                        f"{', '.join(npz)} among them")
    return feeds_from_npz(files[npz[0]]) if npz else feeds_from_input_protos(model, files)


def editable(spec: ValueSpec, value: Any) -> bool:
    """Whether an input can be edited as a table: a numeric or bool tensor of rank ≤ 2 and at most
    MAX_EDITABLE elements."""
    return (spec.kind == "tensor" and isinstance(value, np.ndarray) and value.ndim <= 2
            and value.size <= MAX_EDITABLE and value.dtype.kind in "biuf")


def to_grid(value: np.ndarray) -> np.ndarray:
    """A rank ≤ 2 tensor as a 2-D grid (scalars 1×1, vectors one row)."""
    return value.reshape(1, 1) if value.ndim == 0 else value.reshape(1, -1) if value.ndim == 1 else value


def from_grid(grid: Any, like: np.ndarray, name: str) -> np.ndarray:
    """An edited grid back into a tensor of `like`'s dtype and shape. FeedError names the input when a cell is
    empty or not a number of that dtype."""
    cells = np.asarray(grid, dtype=object)
    if cells.size != like.size:
        raise FeedError(f"input {name!r}: the table has {cells.size} cells, the tensor {like.size}")
    if any(c is None or (isinstance(c, float) and np.isnan(c) and like.dtype.kind != "f") for c in cells.ravel()):
        raise FeedError(f"input {name!r}: every cell needs a value of dtype {like.dtype}")
    try:
        if like.dtype == np.bool_:
            array = np.array([_as_bool(c) for c in cells.ravel()], dtype=np.bool_)
        elif like.dtype.kind in "iu":  # via Python ints: float64 would round int64 values beyond 2**53
            array = np.array([_as_int(c) for c in cells.ravel()], dtype=like.dtype)
        else:
            array = cells.astype(np.float64).astype(like.dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise FeedError(f"input {name!r}: cells must be numbers of dtype {like.dtype} ({exc})") from None
    return array.reshape(like.shape)


def _as_int(cell: Any) -> int:
    if isinstance(cell, (int, np.integer)):
        return int(cell)
    number = float(cell)
    if not number.is_integer():
        raise ValueError(f"{cell!r} is not an integer")
    return int(number)


def _as_bool(cell: Any) -> bool:
    if isinstance(cell, str):
        if cell.strip().lower() in ("true", "1"):
            return True
        if cell.strip().lower() in ("false", "0"):
            return False
        raise ValueError(f"{cell!r} is not a boolean")
    return bool(cell)


def feeds_key(feeds: dict[str, Any]) -> str:
    """sha256 over input names, dtypes, shapes and bytes."""
    digest = hashlib.sha256()
    for name in sorted(feeds):
        digest.update(name.encode() + b"\0")
        _hash_value(digest, feeds[name])
    return digest.hexdigest()


def _hash_value(digest: hashlib._Hash, value: Any) -> None:
    if isinstance(value, np.ndarray):
        digest.update(f"{value.dtype.str}{value.shape}".encode())
        if value.dtype.kind == "O":
            digest.update(repr(value.tolist()).encode())
        else:
            digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple)):
        digest.update(f"seq{len(value)}".encode())
        for item in value:
            _hash_value(digest, item)
    else:
        digest.update(repr(value).encode())
