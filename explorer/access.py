"""What the app may open when it is served to others. Served on this machine only (Streamlit's server.address is
localhost, 127.0.0.1 or ::1), local paths open as they are. Served beyond it, a local path opens (or is written,
as the optimized model is saved) only when its resolved form (`..` and symlinks followed) lies inside a folder
the operator allowed, and a sweep may reach only the Dask schedulers the operator listed; every refusal is the
same message, whatever the path names.

The operator sets the folders with EXPLORER_ALLOWED_DIRS (separated by os.pathsep) and the schedulers with
EXPLORER_SCHEDULERS (separated by commas), or in explorer's settings file (settings.py: `explorer.toml` in the
folder the app is started from; EXPLORER_SETTINGS names another):

    [shared]
    allowed_dirs = ["/srv/models"]
    schedulers = ["tcp://10.0.0.5:8786"]
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import ExplorerError
from .settings import table

LOCAL_ADDRESSES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
REFUSED = ("This path cannot be opened here: the app is shared, and opens local files only when they are ONNX "
           "models inside the folders its operator allowed.")


class AccessRefused(ExplorerError):
    """A shared app refused a local path or a scheduler address (the message is always the same)."""


@dataclass(frozen=True)
class Access:
    """The app's reach: `shared` when served beyond this machine; then only `folders` (resolved) open and only
    `schedulers` may be reached."""

    shared: bool = False
    folders: tuple[Path, ...] = ()
    schedulers: tuple[str, ...] = ()

    def path(self, text: str, *, folder: bool = False) -> Path:
        """The local file (or with `folder`, the folder) `text` names: as given when served locally; when shared,
        resolved, and only when it exists inside an allowed folder (AccessRefused otherwise)."""
        given = Path(os.path.expanduser(text.strip()))
        if not self.shared:
            return given
        try:
            resolved = given.resolve(strict=True)
        except (OSError, RuntimeError):  # missing, a symlink loop, no permission: the same refusal
            raise AccessRefused(REFUSED) from None
        if not any(resolved.is_relative_to(allowed) for allowed in self.folders) \
                or not (resolved.is_dir() if folder else resolved.is_file()):
            raise AccessRefused(REFUSED)
        return resolved

    def target(self, text: str) -> Path:
        """Where to write a file `text` names: as given when served locally; when shared, only into an existing
        allowed folder (a symlink followed to where it points), AccessRefused otherwise."""
        given = Path(os.path.expanduser(text.strip()))
        if not self.shared:
            return given
        try:
            folder = given.parent.resolve(strict=True)
            resolved = (folder / given.name).resolve()
        except (OSError, RuntimeError):
            raise AccessRefused(REFUSED) from None
        if not given.name or not any(resolved.parent.is_relative_to(allowed) for allowed in self.folders) \
                or resolved.is_dir():
            raise AccessRefused(REFUSED)
        return resolved

    def scheduler(self, address: str) -> str:
        """A Dask scheduler's address: any when served locally; when shared, only one the operator listed."""
        address = address.strip()
        if self.shared and address not in self.schedulers:
            raise AccessRefused("This scheduler cannot be used here: the app is shared, and reaches only the "
                                "schedulers its operator listed.")
        return address

    def describe(self) -> str:
        """The mode in a line, as the sidebar says it."""
        if not self.shared:
            return "served on this machine only: local paths open"
        if not self.folders:
            return "shared: no local paths (samples and uploads only)"
        return "shared: models from " + ", ".join(str(f) for f in self.folders) + " only"


def is_shared(server_address: str | None) -> bool:
    """Whether Streamlit serves beyond this machine (an unset address listens on every interface)."""
    return (server_address or "").strip().lower() not in LOCAL_ADDRESSES


def settings(environ: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """The operator's `[shared]` settings: allowed_dirs and schedulers, from the environment where set, else from
    the settings file (missing: none)."""
    environ = os.environ if environ is None else environ
    found: dict[str, list[str]] = {"allowed_dirs": [], "schedulers": []}
    shared = table("shared", environ)
    for key in found:
        value = shared.get(key, [])
        found[key] = [str(v) for v in (value if isinstance(value, list) else [value])]
    if environ.get("EXPLORER_ALLOWED_DIRS", "").strip():
        found["allowed_dirs"] = environ["EXPLORER_ALLOWED_DIRS"].split(os.pathsep)
    if environ.get("EXPLORER_SCHEDULERS", "").strip():
        found["schedulers"] = environ["EXPLORER_SCHEDULERS"].split(",")
    return found


def access_for(server_address: str | None, environ: Mapping[str, str] | None = None) -> Access:
    """The reach of an app served at `server_address` under the operator's settings."""
    if not is_shared(server_address):
        return Access()
    found = settings(environ)
    folders = tuple(dict.fromkeys(Path(os.path.expanduser(d.strip())).resolve()
                                  for d in found["allowed_dirs"] if d.strip()))
    return Access(True, folders, tuple(s.strip() for s in found["schedulers"] if s.strip()))
