"""Reading .npz archives that come from outside (feeds, trace files) with every size checked before anything is
inflated: the number of members, each member's declared size, the .npy header's dtype and shape, and the total,
against a byte budget. Only plain dtypes are read (numbers, bools, fixed-width strings); never a pickle. A big
member stored uncompressed (as trace files store them) can be mapped instead of read: a read-only view of the
file, which takes no memory until read."""
from __future__ import annotations

import io
import mmap
import os
import struct
import zipfile
from collections.abc import Callable, Iterable
from typing import IO

import numpy as np

from ..errors import ExplorerError

ALLOWED_KINDS = frozenset("biufcUS")  # bool, ints, floats, complex, fixed-width strings
MAX_MEMBERS = 1_000_000
Fail = Callable[[str], ExplorerError]


def open_zip(source: bytes | str | os.PathLike, what: str, fail: Fail) -> zipfile.ZipFile:
    """The archive, or `fail(message)` when it is not a readable zip (an .npz is one)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(source) if isinstance(source, (bytes, bytearray)) else source)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        raise fail(f"{what} is not a readable .npz ({exc})") from None
    if len(archive.infolist()) > MAX_MEMBERS:
        archive.close()
        raise fail(f"{what} holds more than {MAX_MEMBERS} members")
    return archive


def check_declared_sizes(archive: zipfile.ZipFile, names: Iterable[str], budget: int, what: str,
                         fail: Fail) -> None:
    """Refuses an archive whose members would inflate past `budget` bytes in total (zip keeps every member's
    uncompressed size; reading never goes past it)."""
    total = 0
    for name in names:
        total += archive.getinfo(name).file_size
        if total > budget:
            raise fail(f"{what} would inflate to more than {budget} bytes (the limit for external inputs); "
                       f"member {name!r} crosses it")


def read_npy(archive: zipfile.ZipFile, name: str, budget: int, what: str, fail: Fail) -> np.ndarray:
    """One .npy member, after its header's dtype and shape were checked against the allow-list and `budget`."""
    where = f"{what}, member {name!r}"
    try:
        with archive.open(name) as stream:
            dtype, shape, fortran = _header(stream, where, fail)
            size = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if size > budget:
                raise fail(f"{where}: its header declares {dtype}{list(shape)}, {size} bytes, beyond the "
                           f"limit of {budget} bytes")
            if size > archive.getinfo(name).file_size:
                raise fail(f"{where}: its header declares {size} bytes but the member holds fewer")
            array = np.empty(shape, dtype=dtype, order="F" if fortran else "C")
            got = _fill(stream, array.reshape(-1, order="A").view(np.uint8)) if size else 0
    except ExplorerError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, RuntimeError, NotImplementedError) as exc:
        raise fail(f"{where} cannot be read ({exc})") from None
    if got != size:
        raise fail(f"{where} is truncated ({got} of {size} bytes)")
    return array


def _fill(stream: IO[bytes], target: np.ndarray) -> int:
    """Reads into `target` (bytes) until it is full or the stream ends; the count read."""
    view, got = memoryview(target.data), 0
    while got < len(view):
        count = stream.readinto(view[got:])  # type: ignore[attr-defined]
        if not count:
            break
        got += count
    return got


def _header(stream: IO[bytes], where: str, fail: Fail) -> tuple[np.dtype, tuple[int, ...], bool]:
    fmt = np.lib.format
    try:
        version = fmt.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(stream)
        else:
            raise fail(f"{where}: .npy format version {version} is not supported")
    except ExplorerError:
        raise
    except (ValueError, SyntaxError, TypeError, EOFError) as exc:
        raise fail(f"{where} is not an .npy array ({exc})") from None
    if dtype.kind not in ALLOWED_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise fail(f"{where}: dtype {dtype} is not allowed (only numbers, bools and fixed-width strings; "
                   "never objects or pickles)")
    if any(not isinstance(d, int) or d < 0 for d in shape):
        raise fail(f"{where}: invalid shape {shape}")
    return dtype, tuple(shape), bool(fortran)


MAP_MIN_BYTES = 1 << 20  # smaller members are read
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # a zip member's local header: signature, ..., name and extra lengths


def mappable(archive: zipfile.ZipFile, name: str) -> bool:
    """Whether a member is big and stored uncompressed (its bytes lie in the file as they are)."""
    info = archive.getinfo(name)
    return info.compress_type == zipfile.ZIP_STORED and info.file_size >= MAP_MIN_BYTES


def map_npy(archive: zipfile.ZipFile, name: str, mapping: mmap.mmap, what: str, fail: Fail) -> np.ndarray:
    """A mappable .npy member as a read-only view of `mapping` (the archive's file mapped), after its header's
    dtype and shape were checked and its data found to lie inside the member."""
    where = f"{what}, member {name!r}"
    info = archive.getinfo(name)
    try:
        signature, name_length, extra_length = _LOCAL_HEADER.unpack_from(mapping, info.header_offset)
    except struct.error:
        raise fail(f"{where} lies outside the file") from None
    start = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
    if signature != b"PK\x03\x04" or start + info.file_size > len(mapping):
        raise fail(f"{where} lies outside the file or has no local header")
    stream = io.BytesIO(mapping[start:start + min(info.file_size, 1 << 16)])
    dtype, shape, fortran = _header(stream, where, fail)
    size = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if stream.tell() + size > info.file_size:
        raise fail(f"{where}: its header declares {size} bytes but the member holds fewer")
    array = np.frombuffer(mapping, dtype, int(np.prod(shape, dtype=object)), start + stream.tell())
    return array.reshape(shape, order="F" if fortran else "C")
