"""Writing files so that nothing is lost: every file explorer writes (a model and its external data, a trace, a
sweep's rows, a report, a diagram) goes to a temporary file in its target's folder and is moved into place
(`os.replace`) only once it is complete, so a write that fails halfway (a full disk, an error, Ctrl-C) leaves the
old file as it was and no temporary file behind, and a process that maps the old file keeps reading it.

Files that hold a loaded model (its source or the weights it maps) are never written: the model loader records
each such file by identity (device and inode, so a hard link or a symlink to one is the same file) in a
registry that lasts as long as the process, and a write whose target is one of them is refused (WriteRefused)
before anything is written. In the app, that is every model any session of the server has loaded."""
from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import ExplorerError

TEMP_SUFFIX = ".partial"  # a temporary file is `.<target name>.<random>.partial` beside its target

_loaded: set[tuple[int, int]] = set()
_lock = threading.Lock()


class WriteRefused(ExplorerError):
    """A file explorer was asked to write is the file a loaded model was read from (or its weights)."""


def remember_loaded(path: str | os.PathLike[str] | int) -> None:
    """Records a file a model was read from or maps its weights from (a path, or an open file's descriptor):
    no write of this process may replace it."""
    try:
        found = os.fstat(path) if isinstance(path, int) else os.stat(path)
    except OSError:
        return
    with _lock:
        _loaded.add((found.st_dev, found.st_ino))


def is_loaded(path: str | os.PathLike[str]) -> bool:
    """Whether `path` (symlinks followed) is a file a loaded model was read from or maps (a hard link to one
    included)."""
    try:
        found = os.stat(path)
    except OSError:
        return False
    with _lock:
        return (found.st_dev, found.st_ino) in _loaded


def check_targets(targets: Iterable[str | os.PathLike[str]]) -> None:
    """WriteRefused when any of `targets` is a loaded model's file (see is_loaded)."""
    for target in targets:
        if is_loaded(target):
            raise WriteRefused(f"{Path(target).name!r} is not written: it is the file a loaded model was read from "
                               "(its source or its weights, or a link to one), which writing would destroy; choose "
                               "another name")


def final_path(target: str | os.PathLike[str]) -> Path:
    """Where a write to `target` lands: through a symlink, the file it points at (as opening it would write)."""
    path = Path(os.path.expanduser(os.fspath(target)))
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _new_file_mode() -> int:
    """The mode a file made by open() gets here: 0o666 less the process's umask (read where the system tells it
    without changing it, which would race with other threads)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o644


class Staged:
    """Files being written, each to a temporary file beside its target; `commit` moves them all into place (in
    the order they were opened), `discard` removes them. Use `staged()`."""

    def __init__(self) -> None:
        self._files: list[tuple[Path, Path, IO[Any]]] = []

    def open(self, target: str | os.PathLike[str], mode: str = "wb", **kwargs: Any) -> IO[Any]:
        """A new temporary file, open for writing (`mode` "wb" or "w", "w+b"...), that becomes `target` at
        commit. WriteRefused when `target` is a loaded model's file."""
        path = final_path(target)
        check_targets([path])
        temp = path.parent / f".{path.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            descriptor = os.open(temp, flags, 0o600)  # private until complete; given its final mode at commit
        except OSError as exc:  # named after the target: the temporary file is no concern of the caller's
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        try:
            handle = os.fdopen(descriptor, mode, **kwargs)
        except BaseException:
            os.close(descriptor)
            _remove(temp)
            raise
        self._files.append((path, temp, handle))
        return handle

    def commit(self) -> list[Path]:
        """Closes every file (flushed to disk) and moves each into place; the targets written."""
        for path, temp, handle in self._files:
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
            try:
                mode = os.stat(path).st_mode & 0o7777  # a file replaced keeps its permissions
            except OSError:
                mode = _new_file_mode()
            os.chmod(temp, mode)
        check_targets(path for path, _, _ in self._files)  # a target loaded meanwhile (another session)
        for path, temp, _ in self._files:
            os.replace(temp, path)
        written = [path for path, _, _ in self._files]
        self._files = []
        _sync_folders(written)
        return written

    def discard(self) -> None:
        """Closes and removes every temporary file; the targets are left as they were."""
        for _, temp, handle in self._files:
            with contextlib.suppress(OSError):
                handle.close()
            _remove(temp)
        self._files = []


@contextlib.contextmanager
def staged() -> Iterator[Staged]:
    """Files written together (a model and its external data): each opened with `.open(target)`, all moved
    into place when the block ends without an exception, none of them (and no temporary file) otherwise."""
    files = Staged()
    try:
        yield files
    except BaseException:
        files.discard()
        raise
    try:
        files.commit()
    except BaseException:
        files.discard()
        raise


@contextlib.contextmanager
def replacing(target: str | os.PathLike[str], mode: str = "wb", **kwargs: Any) -> Iterator[IO[Any]]:
    """One file written whole or not at all: `with replacing(path) as f: f.write(...)`."""
    with staged() as files:
        yield files.open(target, mode, **kwargs)


def write_bytes(target: str | os.PathLike[str], data: bytes) -> None:
    with replacing(target) as out:
        out.write(data)


def write_text(target: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    with replacing(target, "w", encoding=encoding) as out:
        out.write(text)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _sync_folders(paths: list[Path]) -> None:
    """Makes the renames durable (best effort: not every system lets a folder be opened)."""
    for folder in dict.fromkeys(path.parent for path in paths):
        try:
            descriptor = os.open(folder, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(descriptor)
        except OSError:
            pass
        finally:
            os.close(descriptor)
