"""Recorded values past the in-memory budget: written to a run folder on disk and read back as NumPy views of
memory-mapped .npy segment files, so a run keeps every value as an array while memory holds only what is in use.
Past `Limits.trace_disk_bytes` on disk, values become summaries. The folder is removed when its trace is dropped
(or the process ends); folders of processes that died are removed by the next run that spills."""
from __future__ import annotations

import mmap
import os
import shutil
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from ..budgets import SPILL_RELEASE_EVERY, SPILL_SEGMENT_BYTES, SPILL_SEQUENCE_MAX, SPILL_WRITE_BYTES
from ..files.scratch import scratch_folder
from .values import TensorSequence, nbytes, summarize

PREFIX = "explorer-run-"


class _Segment:
    """One .npy file of `capacity` bytes (a uint8 array), mapped read-only; values are written into it with
    pwrite and read through the mapping (the system's file cache keeps both in step)."""

    def __init__(self, path: Path, capacity: int) -> None:
        header = np.lib.format.header_data_from_array_1_0(np.empty(0, np.uint8))
        header["shape"] = (capacity,)
        with open(path, "wb") as out:
            np.lib.format.write_array_header_1_0(out, header)
            self.start = out.tell()
            out.truncate(self.start + capacity)
        self.path, self.capacity, self.used = path, capacity, 0
        self.fd = os.open(path, os.O_RDWR)
        self.map = mmap.mmap(self.fd, 0, access=mmap.ACCESS_READ)

    def write(self, array: np.ndarray) -> np.ndarray:
        """`array` written at the next aligned place: its read-only view in the mapping."""
        align = 64 if array.nbytes >= 4096 else 16
        offset = self.start + -(-self.used // align) * align
        position = offset
        if array.flags.c_contiguous:
            data = array.reshape(-1).view(np.uint8)
            for start in range(0, array.nbytes, SPILL_WRITE_BYTES):
                position = self._write(data[start:start + SPILL_WRITE_BYTES], position)
        else:  # a strided view: copied a block of rows at a time
            rows = max(1, SPILL_WRITE_BYTES // max(1, array[0].nbytes))
            for start in range(0, len(array), rows):
                position = self._write(np.ascontiguousarray(array[start:start + rows]).reshape(-1).view(np.uint8),
                                       position)
        self.used = position - self.start
        return np.frombuffer(self.map, array.dtype, array.size, offset).reshape(array.shape)

    def _write(self, data: np.ndarray, position: int) -> int:
        view = data.data
        while len(view):
            written = os.pwrite(self.fd, view, position)
            view, position = view[written:], position + written
        return position

    def holds(self, array: np.ndarray) -> bool:
        base: Any = array
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        return isinstance(base, memoryview) and base.obj is self.map

    def release(self) -> None:
        """Drops the pages read through the mapping from this process (the file cache keeps them; reading them
        again maps them back)."""
        if hasattr(mmap, "MADV_DONTNEED"):  # where the system has no madvise, its own paging decides
            self.map.madvise(mmap.MADV_DONTNEED)


class RunFolder:
    """The files one run spilled its values to, at most `limit` bytes; created on the first value written."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.bytes = 0  # written so far
        self.path: Path | None = None
        self._segments: list[_Segment] = []
        self._unreleased = 0

    def store(self, array: np.ndarray) -> np.ndarray | None:
        """The array as a read-only view of its copy on disk (or itself, when it already is a view of the disk);
        None when it would pass the limit."""
        if any(segment.holds(array) for segment in self._segments):
            return array
        size = array.nbytes
        if self.bytes + size > self.limit:
            return None
        segment = self._segments[-1] if self._segments else None
        if segment is None or segment.used + size + 64 > segment.capacity:
            segment = self._open(max(SPILL_SEGMENT_BYTES, size + 64))
        view = segment.write(array)
        self.bytes += size
        self._unreleased += size
        if self._unreleased >= SPILL_RELEASE_EVERY:
            self.release()
        return view

    def release(self) -> None:
        """Drops from this process the pages of spilled values read so far (they stay on disk and in the file
        cache): memory holds only what is in use."""
        for segment in self._segments:
            segment.release()
        self._unreleased = 0

    def _open(self, capacity: int) -> _Segment:
        if self.path is None:
            self.path = scratch_folder(PREFIX)
        segment = _Segment(self.path / f"values-{len(self._segments):04d}.npy", capacity)
        self._segments.append(segment)
        return segment


def spilled(folder: RunFolder, value: Any, done: dict[tuple[Any, ...], Any]) -> Any:
    """A value with its arrays on disk (a sequence element by element); an object array (strings) and a sequence
    of more than SPILL_SEQUENCE_MAX elements become summaries; other values stay as they are. `done` maps the arrays written for the same event (by where their
    data is and how it is laid out) to what they became: an array recorded twice, as an output and as a gate, is
    written once. The caller checked that it fits (`disk_size`)."""
    if isinstance(value, np.ndarray):
        key = (value.ctypes.data, value.shape, value.strides, value.dtype)
        found = done.get(key)
        if found is None:
            stored = summarize(value) if value.dtype.hasobject else folder.store(value)
            found = done[key] = summarize(value) if stored is None else stored
        return found
    if isinstance(value, list):
        if len(value) > SPILL_SEQUENCE_MAX:
            return summarize(value)
        return TensorSequence([spilled(folder, item, done) for item in value], nbytes=nbytes(value))
    return value


def disk_size(value: Any) -> int:
    """The bytes `spilled` writes for a value (at most)."""
    if isinstance(value, np.ndarray):
        return 0 if value.dtype.hasobject else value.nbytes
    if isinstance(value, list) and len(value) <= SPILL_SEQUENCE_MAX:
        return sum(disk_size(item) for item in value)
    return 0


def removed_with(owner: object, folder: RunFolder) -> None:
    """The folder's files go when `owner` (the trace) is dropped, or at the latest when the process ends."""
    weakref.finalize(owner, _remove, folder)


def _remove(folder: RunFolder) -> None:
    if folder.path is not None:
        shutil.rmtree(folder.path, ignore_errors=True)
