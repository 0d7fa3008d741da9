"""What the app may open when it is served to others. The app is shared when its operator says so
(EXPLORER_SHARED=1, or `shared = true` under `[shared]` in explorer.toml), whatever address it listens on: a
reverse proxy or a tunnel in front of 127.0.0.1 makes a local app reachable from elsewhere, which the app cannot
see. Not shared, it must listen on this machine only (a loopback address: 127.0.0.0/8, ::1 or localhost), and
local paths open as they are; listening beyond it without EXPLORER_SHARED=1 is refused (`NotShared`). Shared, a
local path opens only when its resolved form (`..` and symlinks followed) lies inside a folder the operator
allowed, every file a sweep reads is checked as it is opened (`open_confined`: the file actually opened, so a
symlink inside that leads out is refused too), and a sweep may reach only the Dask schedulers the operator
listed; every refusal is the same message, whatever the path names. A shared app saves (the optimized model)
only into the one folder the operator named for saves, only .onnx/.data/.npz/.html files (`target`).

The operator sets the folders with EXPLORER_ALLOWED_DIRS (separated by os.pathsep), the schedulers with
EXPLORER_SCHEDULERS (separated by commas) and the save folder with EXPLORER_SAVE_DIR, or in explorer's settings
file (settings.py: `explorer.toml` in the folder the app is started from; EXPLORER_SETTINGS names another):

    [shared]
    shared = true
    allowed_dirs = ["/srv/models"]
    schedulers = ["tcp://10.0.0.5:8786"]
    save_dir = "/srv/saved"
"""
from __future__ import annotations

import ipaddress
import os
import socket
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import ExplorerError
from .settings import SETTINGS_FILE, settings_path, table

TRUE, FALSE = frozenset({"1", "true", "yes", "on"}), frozenset({"0", "false", "no", "off", ""})
REFUSED = ("This path cannot be opened here: the app is shared, and opens local files only when they are ONNX "
           "models inside the folders its operator allowed.")


class AccessRefused(ExplorerError):
    """A shared app refused a local path or a scheduler address (the message is always the same)."""


SAVE_SUFFIXES = (".onnx", ".data", ".npz", ".html")
NO_SAVES = ("Nothing can be saved here: the app is shared, and its operator named no folder for saves (download "
            "the file instead).")
SAVE_NAMES = ("This name cannot be saved here: the app is shared, and saves only files whose names end in "
              + ", ".join(SAVE_SUFFIXES[:-1]) + f" or {SAVE_SUFFIXES[-1]}.")
SAVE_REFUSED = ("This file cannot be written here: the app is shared, and saves only .onnx, .data, .npz or .html "
                "files into the folder its operator named for saves.")


class NotShared(ExplorerError):
    """The app listens beyond this machine but its operator did not say it is shared: it serves nothing."""


@dataclass(frozen=True)
class Access:
    """The app's reach: `shared` when served beyond this machine; then only `folders` (resolved) open and only
    `schedulers` may be reached."""

    shared: bool = False
    folders: tuple[Path, ...] = ()
    schedulers: tuple[str, ...] = ()
    save_folder: Path | None = None

    @property
    def read_folders(self) -> tuple[Path, ...] | None:
        """The folders every file read from a path must lie in (resolved, symlinks followed): None when served
        locally (any file)."""
        return self.folders if self.shared else None

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
        """Where to write a file `text` names: as given when served locally. Shared, only into the folder the
        operator named for saves (`save_folder`; none named: nothing is written, NO_SAVES), and only a file
        whose name ends in one of SAVE_SUFFIXES (SAVE_NAMES otherwise: never explorer.toml); a symlink is
        followed to where it points, which must be such a file in that folder too (SAVE_REFUSED otherwise,
        whatever the path names)."""
        given = Path(os.path.expanduser(text.strip()))
        if not self.shared:
            return given
        if self.save_folder is None:
            raise AccessRefused(NO_SAVES)
        if not _save_name(given.name):
            raise AccessRefused(SAVE_NAMES)
        try:
            folder = given.parent.resolve(strict=True)
            resolved = (folder / given.name).resolve()
        except (OSError, RuntimeError):
            raise AccessRefused(SAVE_REFUSED) from None
        if not _save_name(resolved.name) or not resolved.parent.is_relative_to(self.save_folder) \
                or resolved.is_dir() or (resolved.exists() and not resolved.is_file()) or _is_settings(resolved):
            raise AccessRefused(SAVE_REFUSED)
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


def is_loopback(server_address: str | None) -> bool:
    """Whether Streamlit listens on this machine only: "localhost" or a loopback IP address (127.0.0.0/8 in
    any form the system reads, such as 127.1; ::1; an IPv4-mapped ::ffff:127.x.y.z). An unset address listens
    on every interface; any other host name counts as beyond (the app does not resolve names)."""
    text = (server_address or "").strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if text == "localhost":
        return True
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        try:  # the short and old IPv4 forms the system's resolver reads (127.1, 0x7f.1, 2130706433)
            address = ipaddress.ip_address(socket.inet_aton(text))
        except OSError:
            return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def shared_setting(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the operator made the app shared: EXPLORER_SHARED (1/true/yes/on or 0/false/no/off) where set,
    else `shared` under `[shared]` in the settings file (missing: not shared); an ExplorerError for another
    value."""
    environ = os.environ if environ is None else environ
    given: object = environ.get("EXPLORER_SHARED")
    where = "EXPLORER_SHARED"
    if given is None:
        given, where = table("shared", environ).get("shared", False), "shared under [shared] in explorer.toml"
    if isinstance(given, bool):
        return given
    text = str(given).strip().lower()
    if text in TRUE | FALSE:
        return text in TRUE
    raise ExplorerError(f"{where} must be 1 (the app is shared) or 0 (it is not), not {str(given)!r}")


def not_shared_message(server_address: str | None) -> str:
    """What an app listening beyond this machine without being declared shared says, and how to choose."""
    where = f"on {server_address!r}" if (server_address or "").strip() else "on every interface"
    return (f"This app listens {where}, beyond this machine, but is not declared shared, so it serves nothing. "
            "To share it (local paths open only inside the allowed folders), start it with `explorer serve "
            "--shared` or set EXPLORER_SHARED=1 (or `shared = true` under [shared] in explorer.toml); to use it on "
            "this machine only, start it with --server.address 127.0.0.1.")


def is_shared(server_address: str | None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the app serves others: its operator said so (`shared_setting`). Not said, it must listen on
    loopback only: NotShared otherwise."""
    if shared_setting(environ):
        return True
    if not is_loopback(server_address):
        raise NotShared(not_shared_message(server_address))
    return False


def _save_name(name: str) -> bool:
    """Whether a shared app may save a file of this name: one of SAVE_SUFFIXES, not hidden."""
    return bool(name) and not name.startswith(".") and name.lower().endswith(SAVE_SUFFIXES) \
        and name.lower() != SETTINGS_FILE


def _is_settings(path: Path) -> bool:
    """Whether `path` is explorer's settings file (the one this process reads)."""
    try:
        return os.path.samefile(path, settings_path())
    except OSError:
        return False


def open_confined(path: str | os.PathLike[str], folders: Sequence[Path] | None) -> BinaryIO:
    """A file opened for reading, only when it is a regular file (never a FIFO or a device, which could block
    the reader or never end) and, with `folders` (Access.read_folders), only when the file actually opened
    lies inside one of them, symlinks followed (checked on the open file itself: a link swapped after the
    check cannot lead elsewhere). With folders, every refusal is AccessRefused(REFUSED); without, an
    OSError (missing) or an ExplorerError (not a regular file)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        if folders is not None:
            raise AccessRefused(REFUSED) from None
        raise
    try:
        regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
        if folders is not None:
            real = Path(_real_path(descriptor, path))
            if not regular or not any(real.is_relative_to(folder) for folder in folders):
                raise AccessRefused(REFUSED)
        elif not regular:
            raise ExplorerError(f"{os.fspath(path)!r} is not a regular file")
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def confined_folder(path: str | os.PathLike[str], folders: Sequence[Path] | None) -> Path:
    """A folder files are listed in: with `folders`, only when it resolves (symlinks followed) to a folder
    inside one of them, AccessRefused(REFUSED) otherwise (a folder out of them is not even listed)."""
    if folders is None:
        return Path(path)
    try:
        resolved = Path(path).resolve(strict=True)
    except (OSError, RuntimeError):
        raise AccessRefused(REFUSED) from None
    if not resolved.is_dir() or not any(resolved.is_relative_to(folder) for folder in folders):
        raise AccessRefused(REFUSED)
    return resolved


def read_confined(path: str | os.PathLike[str], folders: Sequence[Path] | None) -> bytes:
    """The bytes of a file opened with open_confined."""
    with open_confined(path, folders) as f:
        return f.read()


def _real_path(descriptor: int, path: str | os.PathLike[str]) -> str:
    """Where an open file lies: read from the system for the descriptor where it can say (Linux), else the
    path resolved."""
    try:
        return os.readlink(f"/proc/self/fd/{descriptor}")
    except OSError:
        return os.path.realpath(path)


def settings(environ: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """The operator's `[shared]` settings: allowed_dirs, schedulers and save_dir (one folder at most), from the
    environment where set, else from the settings file (missing: none)."""
    environ = os.environ if environ is None else environ
    found: dict[str, list[str]] = {"allowed_dirs": [], "schedulers": [], "save_dir": []}
    shared = table("shared", environ)
    for key in found:
        value = shared.get(key, [])
        found[key] = [str(v) for v in (value if isinstance(value, list) else [value])]
    if environ.get("EXPLORER_ALLOWED_DIRS", "").strip():
        found["allowed_dirs"] = environ["EXPLORER_ALLOWED_DIRS"].split(os.pathsep)
    if environ.get("EXPLORER_SCHEDULERS", "").strip():
        found["schedulers"] = environ["EXPLORER_SCHEDULERS"].split(",")
    if environ.get("EXPLORER_SAVE_DIR", "").strip():
        found["save_dir"] = [environ["EXPLORER_SAVE_DIR"]]
    found["save_dir"] = [d for d in found["save_dir"] if d.strip()]
    if len(found["save_dir"]) > 1:
        raise ExplorerError(f"save_dir names one folder for saves, not {len(found['save_dir'])}")
    return found


def access_for(server_address: str | None, environ: Mapping[str, str] | None = None) -> Access:
    """The reach of an app served at `server_address` under the operator's settings (NotShared when it listens
    beyond this machine without being declared shared)."""
    if not is_shared(server_address, environ):
        return Access()
    found = settings(environ)
    folders = tuple(dict.fromkeys(Path(os.path.expanduser(d.strip())).resolve()
                                  for d in found["allowed_dirs"] if d.strip()))
    saves = [Path(os.path.expanduser(d.strip())).resolve() for d in found["save_dir"]]
    return Access(True, folders, tuple(s.strip() for s in found["schedulers"] if s.strip()),
                  saves[0] if saves else None)
