"""Trace files: one .npz holding `meta.json` (events, iterations, outputs, error as JSON) and one .npy member per
recorded array, each array stored once (a sequence of maps sharing their keys, ZipMap's, as its keys and one
[N, K] table), uncompressed, and written a chunk at a time (values spilled to disk are copied from there, never
gathered in memory). Reading checks every size before inflating it, reads only plain dtypes (ml_dtypes ones by
name from an allow-list), never a pickle, and reports any malformed part as TraceFileError; a big member is
mapped from the file instead of read (the trace reads it when it is used)."""
from __future__ import annotations

import json
import mmap
import os
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np

from ..budgets import TRACE_RELEASE_FROM, TRACE_VALUE_DEPTH
from ..errors import TraceFileError, cause_text
from ..files.archive import check_declared_sizes, map_npy, mappable, open_zip, read_npy
from ..files.atomic_write import replacing
from ..limits import Limits
from .cell_layout import CellLayout
from .trace import FORMAT_VERSION, Event, Iteration, RunError, Trace
from .values import MapSequence, SequenceSummary, TensorSequence, ValueSummary

# the dtypes onnx reads through ml_dtypes (bfloat16, float8, int4, float4); stored as same-size unsigned ints
ML_DTYPES = frozenset({"bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                       "float8_e8m0fnu", "int4", "uint4", "int2", "uint2", "float4_e2m1fn"})
ZIP64_FROM = (1 << 31) - (1 << 20)  # a member this big needs zip64 sizes (told before it is written)


def save_trace(trace: Trace, path: str | os.PathLike[str]) -> None:
    """Writes the trace to one .npz: arrays as npy members, everything else as JSON (no pickle); to a temporary
    file moved into place once complete (atomic_write.py)."""
    codec = _Encoder()
    meta = {
        "format": FORMAT_VERSION,
        "model_source": trace.model_source,
        "model_sha256": trace.model_sha256,
        "seconds": trace.seconds,
        "recorded_bytes": trace.recorded_bytes,
        "disk_bytes": trace.disk_bytes,
        "spilled_at": trace.spilled_at,
        "budget_exceeded_at": trace.budget_exceeded_at,
        "error": codec.encode(None if trace.error is None else trace.error.to_dict()),
        "feeds": codec.encode(trace.feeds),
        "outputs": codec.encode(trace.outputs),
        "events": [
            [e.node, e.op_type, list(e.iteration), codec.encode(dict(e.inputs)), codec.encode(dict(e.outputs)),
             e.seconds, codec.encode(dict(e.info)), e.summarized]
            for e in trace.events
        ],
        "iterations": [
            [it.node, list(it.index), codec.encode(it.inputs), codec.encode(it.outputs), codec.encode(it.info)]
            for it in trace.iteration_records
        ],
        "cells": {path: layout.to_dict() for path, layout in trace.cells.items()},
    }
    with replacing(path) as out, zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr("meta.json", json.dumps(meta))
        for key, array in codec.arrays.items():
            with zf.open(f"{key}.npy", "w", force_zip64=array.nbytes > ZIP64_FROM) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
            if trace.spill is not None and array.nbytes >= TRACE_RELEASE_FROM:
                trace.spill.release()  # the spilled pages just copied need not stay in this process


def load_trace(path: str | os.PathLike[str], limits: Limits | None = None) -> Trace:
    """Reads a trace written by `save_trace`; TraceFileError names what is wrong with any other file."""
    budget = (limits or Limits()).max_input_bytes
    what = f"trace file {str(path)!r}"
    if not os.path.isfile(path):
        raise TraceFileError(f"{what} does not exist" if not os.path.exists(path) else f"{what} is not a file")
    archive = open_zip(path, what, TraceFileError)
    with archive:
        names = archive.namelist()
        if "meta.json" not in names:
            raise TraceFileError(f"{what} is not a trace (no meta.json)")
        mapped = [name for name in names if name.endswith(".npy") and mappable(archive, name)]
        check_declared_sizes(archive, [name for name in names if name not in mapped], budget, what, TraceFileError)
        try:
            meta = json.loads(archive.read("meta.json"))
        except (ValueError, RecursionError, zipfile.BadZipFile, OSError) as exc:
            raise TraceFileError(f"{what}: meta.json is not readable JSON ({type(exc).__name__})") from None
        if not isinstance(meta, dict):
            raise TraceFileError(f"{what}: meta.json is not a trace's metadata")
        if meta.get("format") != FORMAT_VERSION:
            raise TraceFileError(f"{what}: unsupported trace format {meta.get('format')!r} (this explorer reads "
                                 f"format {FORMAT_VERSION})")
        arrays = {name[:-4]: read_npy(archive, name, budget, what, TraceFileError)
                  for name in names if name.endswith(".npy") and name not in mapped}
        if mapped:
            mapping = _mapped_file(path, what)
            arrays.update((name[:-4], map_npy(archive, name, mapping, what, TraceFileError)) for name in mapped)
    try:
        return _build(meta, _Decoder(arrays))
    except TraceFileError as exc:
        raise TraceFileError(f"{what}: {exc}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError) as exc:
        raise TraceFileError(f"{what} is malformed ({type(exc).__name__}: {cause_text(exc)})") from None


def _mapped_file(path: str | os.PathLike[str], what: str) -> mmap.mmap:
    try:
        with open(path, "rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:
        raise TraceFileError(f"{what} cannot be mapped ({exc})") from None


def _build(meta: dict[str, Any], dec: _Decoder) -> Trace:
    trace = Trace(model_source=str(meta["model_source"]), model_sha256=str(meta["model_sha256"]),
                  feeds=dec.decode(meta["feeds"]))
    trace.seconds = float(meta["seconds"])
    trace.recorded_bytes = int(meta["recorded_bytes"])
    trace.disk_bytes = int(meta.get("disk_bytes", 0))
    spilled = meta.get("spilled_at")
    trace.spilled_at = None if spilled is None else int(spilled)
    exceeded = meta["budget_exceeded_at"]
    trace.budget_exceeded_at = None if exceeded is None else int(exceeded)
    error = dec.decode(meta["error"])
    trace.error = RunError.from_dict(error) if isinstance(error, dict) else None
    trace.outputs = dec.decode(meta["outputs"])
    trace.events = [
        Event.of(i, str(node), str(op), tuple(int(k) for k in it), dec.decode(ins), dec.decode(outs), float(secs),
                 dec.decode(info), bool(summ))
        for i, (node, op, it, ins, outs, secs, info, summ) in enumerate(meta["events"])
    ]
    trace.iteration_records = [
        Iteration(str(node), tuple(int(k) for k in idx), dec.decode(ins), dec.decode(outs), dec.decode(info))
        for node, idx, ins, outs, info in meta["iterations"]
    ]
    trace.cells = {str(path): CellLayout.from_dict(layout) for path, layout in meta.get("cells", {}).items()}
    return trace


def _plain_dtype(dtype: np.dtype) -> bool:
    return dtype.kind in "biufc" and type(dtype).__module__.startswith("numpy")


class _Encoder:
    """Turns values into JSON-able structures, collecting arrays by identity (each array stored once)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._ids: dict[int, str] = {}
        self._keep: list[Any] = []

    def encode(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, np.generic):
            return value if not isinstance(value, float) or np.isfinite(value) else {"k": "float", "v": repr(value)}
        if isinstance(value, np.generic):
            value = np.asarray(value)
            return {"k": "scalar", "a": self.encode(value)}
        if isinstance(value, np.ndarray):
            return self._array(value)
        if isinstance(value, SequenceSummary):
            return {"k": "seqsummary", "v": [value.length, self.encode(value.first)]}
        if isinstance(value, ValueSummary):
            return {"k": "summary", "v": [list(value.shape), value.dtype, self.encode(value.min),
                                          self.encode(value.max), self.encode(value.mean),
                                          value.nan_count, value.inf_count]}
        if isinstance(value, MapSequence):  # maps sharing their keys: the keys and one [N, K] table
            return {"k": "maps", "keys": self.encode(value.keys), "table": self.encode(value.table)}
        if isinstance(value, list):  # a sequence a kernel built keeps its kind (and its known size)
            kind = "sequence" if isinstance(value, TensorSequence) else "list"
            return {"k": kind, "v": [self.encode(v) for v in value]}
        if isinstance(value, tuple):
            return {"k": "tuple", "v": [self.encode(v) for v in value]}
        if isinstance(value, dict):
            if all(isinstance(k, str) for k in value):
                return {"k": "dict", "v": {k: self.encode(v) for k, v in value.items()}}
            return {"k": "map", "v": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        return {"k": "repr", "v": repr(value)}

    def _array(self, array: np.ndarray) -> dict[str, Any]:
        if array.dtype.kind in "OUS":
            return {"k": "strings", "shape": list(array.shape),
                    "v": [x.decode("utf-8", "backslashreplace") if isinstance(x, bytes) else str(x)
                          for x in array.ravel().tolist()]}
        key = self._ids.get(id(array))
        if key is None:
            key = f"a{len(self.arrays)}"
            self._ids[id(array)] = key
            self._keep.append(array)  # keep alive so ids stay unique while encoding
            stored = array if _plain_dtype(array.dtype) else array.view(f"u{array.dtype.itemsize}")
            self.arrays[key] = stored  # written a chunk at a time, whatever its strides
        out = {"k": "array", "ref": key}
        if not _plain_dtype(array.dtype):
            out["dtype"] = array.dtype.name
        return out


class _Decoder:
    """Turns meta.json's structures back into values; anything that is not what `_Encoder` writes is refused."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays

    def decode(self, value: Any, depth: int = 0) -> Any:
        if depth > TRACE_VALUE_DEPTH:
            raise TraceFileError(f"values nested more than {TRACE_VALUE_DEPTH} deep")
        if not isinstance(value, dict):
            if isinstance(value, list):
                raise TraceFileError("a bare list where an encoded value belongs")
            return value
        kind = value.get("k")
        read = _READERS.get(kind) if isinstance(kind, str) else None
        if read is None:
            raise TraceFileError(f"unknown encoded value kind {str(kind)[:40]!r}")
        return read(self, value, depth + 1)

    def _array(self, value: dict[str, Any], inner: int) -> Any:
        array = self.arrays[value["ref"]]
        return array.view(_ml_dtype(value["dtype"])) if "dtype" in value else array

    def _scalar(self, value: dict[str, Any], inner: int) -> Any:
        return self.decode(value["a"], inner)[()]

    def _strings(self, value: dict[str, Any], inner: int) -> Any:
        return np.array([str(v) for v in value["v"]], dtype=object).reshape([int(d) for d in value["shape"]])

    def _summary(self, value: dict[str, Any], inner: int) -> Any:
        shape, dtype, lo, hi, mean, nan, inf = value["v"]
        return ValueSummary(tuple(int(d) for d in shape), str(dtype), self.decode(lo, inner),
                            self.decode(hi, inner), self.decode(mean, inner), int(nan), int(inf))

    def _sequence_summary(self, value: dict[str, Any], inner: int) -> Any:
        length, first = value["v"]
        return SequenceSummary(int(length), self.decode(first, inner))

    def _maps(self, value: dict[str, Any], inner: int) -> Any:
        keys, table = self.decode(value["keys"], inner), self.decode(value["table"], inner)
        if not (isinstance(keys, np.ndarray) and isinstance(table, np.ndarray) and keys.ndim == 1
                and table.ndim == 2 and table.shape[1] == keys.size):
            raise TraceFileError("a sequence of maps whose keys and table do not fit")
        return MapSequence(keys, table)


_READERS: dict[str, Callable[[_Decoder, dict[str, Any], int], Any]] = {
    "array": _Decoder._array,
    "scalar": _Decoder._scalar,
    "strings": _Decoder._strings,
    "float": lambda d, value, inner: float(value["v"]),
    "summary": _Decoder._summary,
    "seqsummary": _Decoder._sequence_summary,
    "list": lambda d, value, inner: [d.decode(v, inner) for v in value["v"]],
    "sequence": lambda d, value, inner: TensorSequence(d.decode(v, inner) for v in value["v"]),
    "maps": _Decoder._maps,
    "tuple": lambda d, value, inner: tuple(d.decode(v, inner) for v in value["v"]),
    "dict": lambda d, value, inner: {str(k): d.decode(v, inner) for k, v in value["v"].items()},
    "map": lambda d, value, inner: {d.decode(k, inner): d.decode(v, inner) for k, v in value["v"]},
    "repr": lambda d, value, inner: str(value["v"]),
}
"""How each kind of encoded value `_Encoder` writes is read back."""


def _ml_dtype(name: Any) -> np.dtype:
    """An ml_dtypes dtype by name, only from the allow-list (a name read from a file never reaches getattr
    otherwise)."""
    if name not in ML_DTYPES:
        raise TraceFileError(f"dtype {str(name)[:40]!r} is not one explorer stores")
    import ml_dtypes  # onnx's own dependency for bfloat16 / float8 / int4

    dtype: np.dtype = np.dtype(getattr(ml_dtypes, name))
    return dtype
