"""Whose each file of a shared app's save folder is: a visitor's save never replaces a file another visitor
saved, or one that was there before any save of this server (the operator's). Each file a save writes is claimed
by its writer (a visitor's session) before anything is written, under one lock, so two sessions saving to the
same new name at once cannot both write it: the second is refused. A writer may replace its own files. The
claims last as long as the server."""
from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

from ..errors import ExplorerError

_owners: dict[Path, str] = {}  # resolved path -> the writer that claimed it
_lock = threading.Lock()


class SaveTaken(ExplorerError):
    """A shared app's save would replace a file that is not the saving visitor's."""


def claim(paths: Iterable[Path], writer: str) -> None:
    """Makes every one of `paths` (resolved) `writer`'s to write, or none of them: SaveTaken when any is another
    writer's (saved, or being saved, by another session) or was in its folder before any save claimed it."""
    wanted = list(paths)
    with _lock:
        for path in wanted:
            owner = _owners.get(path)
            if owner != writer and (owner is not None or os.path.lexists(path)):
                raise SaveTaken(f"{path.name!r} is not written: the app is shared, and a file of that name is already "
                                "in its save folder (saved by another visitor, or put there by the app's operator); "
                                "choose another name")
        for path in wanted:
            _owners[path] = writer
