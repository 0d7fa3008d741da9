"""Temporary folders named after the process that made them (`<tmp>/<prefix><pid>-<random>`), so that the folders
of a process that died before removing its own (killed, out of memory) are removed by the next one that makes
a folder of the same kind."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path


def scratch_folder(prefix: str) -> Path:
    """A new folder `<tmp>/<prefix><pid>-<random>`; first removes the folders of that kind whose process is gone."""
    remove_orphans(prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))


def remove_orphans(prefix: str) -> None:
    """Removes the folders `<tmp>/<prefix><pid>-*` whose process is gone (another user's are left alone)."""
    name = re.compile(rf"{re.escape(prefix)}(\d+)-")
    for entry in Path(tempfile.gettempdir()).glob(f"{prefix}*"):
        found = name.match(entry.name)
        if found is None or int(found.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(found.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(entry, ignore_errors=True)
        except OSError:  # another user's process: not ours to judge
            continue
