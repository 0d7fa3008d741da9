"""User-supplied feeds: reading an .npz, small tensors as editable grids and back, and a content key per set of
feeds (so a run is redone only when model or inputs change)."""
from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from .errors import FeedError
from .feeds import proto_to_value
from .model import Model, ValueSpec

MAX_EDITABLE = 256  # elements of a tensor small enough to edit in a table


def feeds_from_npz(data: bytes) -> dict[str, np.ndarray]:
    """name -> array of an .npz file's members (no pickles). FeedError when it is not an .npz."""
    try:
        loaded = np.load(io.BytesIO(data), allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise FeedError("the inputs file is a single .npy array, not an .npz with one array per input")
        with loaded:
            return {name: loaded[name] for name in loaded.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise FeedError(f"the inputs file is not a readable .npz ({exc})") from None


_PROTO_OF_KIND = {"tensor": onnx.TensorProto, "sequence": onnx.SequenceProto, "optional": onnx.OptionalProto,
                  "map": onnx.MapProto}


def feeds_from_test_data(model: Model, folder: str | Path) -> dict[str, Any]:
    """An ONNX test data set (a folder with input_0.pb, input_1.pb, ... as model zoos and the backend tests ship
    them) as feeds: file i is the model's i-th input, read as the proto its declared type calls for."""
    folder = Path(folder)
    files = sorted(folder.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]) if p.stem[6:].isdigit() else -1)
    if not files:
        raise FeedError(f"{str(folder)!r} holds no input_<i>.pb files (an ONNX test data set)")
    if len(files) > len(model.inputs):
        raise FeedError(f"{str(folder)!r} holds {len(files)} inputs; the model takes {len(model.inputs)}")
    feeds = {}
    for spec, path in zip(model.inputs, files):
        proto = _PROTO_OF_KIND.get(spec.kind, onnx.TensorProto)()
        try:
            proto.ParseFromString(path.read_bytes())
        except Exception as exc:  # noqa: BLE001 - any parse failure is a bad file
            raise FeedError(f"{path.name} is not a serialized {type(proto).__name__} for input {spec.name!r} "
                            f"({exc})") from None
        feeds[spec.name] = proto_to_value(proto)
    return feeds


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
