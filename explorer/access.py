"""What the app may open when it is served to others. The app is shared when its operator says so
(EXPLORER_SHARED=1, or `shared = true` under `[shared]` in explorer.toml), whatever address it listens on: a
reverse proxy or a tunnel in front of 127.0.0.1 makes a local app reachable from elsewhere, which the app cannot
see. Not shared, it must listen on this machine only (a loopback address: 127.0.0.0/8, ::1 or localhost), and
local paths open as they are; listening beyond it without EXPLORER_SHARED=1 is refused (`NotShared`). Shared, a
local path opens (or is written, as the optimized model is saved) only when its resolved form (`..` and symlinks
followed) lies inside a folder the operator allowed, and a sweep may reach only the Dask schedulers the operator
listed; every refusal is the same message, whatever the path names.

The operator sets the folders with EXPLORER_ALLOWED_DIRS (separated by os.pathsep) and the schedulers with
EXPLORER_SCHEDULERS (separated by commas), or in explorer's settings file (settings.py: `explorer.toml` in the
folder the app is started from; EXPLORER_SETTINGS names another):

    [shared]
    shared = true
    allowed_dirs = ["/srv/models"]
    schedulers = ["tcp://10.0.0.5:8786"]
"""
from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import ExplorerError
from .settings import table

TRUE, FALSE = frozenset({"1", "true", "yes", "on"}), frozenset({"0", "false", "no", "off", ""})
REFUSED = ("This path cannot be opened here: the app is shared, and opens local files only when they are ONNX "
           "models inside the folders its operator allowed.")


class AccessRefused(ExplorerError):
    """A shared app refused a local path or a scheduler address (the message is always the same)."""


class NotShared(ExplorerError):
    """The app listens beyond this machine but its operator did not say it is shared: it serves nothing."""


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
            "To share it (local paths open only inside the allowed folders), set EXPLORER_SHARED=1 (or "
            "`shared = true` under [shared] in explorer.toml); to use it on this machine only, start it with "
            "--server.address 127.0.0.1.")


def is_shared(server_address: str | None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the app serves others: its operator said so (`shared_setting`). Not said, it must listen on
    loopback only: NotShared otherwise."""
    if shared_setting(environ):
        return True
    if not is_loopback(server_address):
        raise NotShared(not_shared_message(server_address))
    return False


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
    """The reach of an app served at `server_address` under the operator's settings (NotShared when it listens
    beyond this machine without being declared shared)."""
    if not is_shared(server_address, environ):
        return Access()
    found = settings(environ)
    folders = tuple(dict.fromkeys(Path(os.path.expanduser(d.strip())).resolve()
                                  for d in found["allowed_dirs"] if d.strip()))
    return Access(True, folders, tuple(s.strip() for s in found["schedulers"] if s.strip()))
