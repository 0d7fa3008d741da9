"""The versions and command line a shared finding was made with."""
from __future__ import annotations

import importlib.metadata
import platform
import shlex
import sys

PACKAGES = ("explorer", "onnx", "onnxruntime", "numpy")


def versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Python, the platform, and the version of explorer, onnx, onnxruntime, numpy (and `extra`'s packages)."""
    found = {"python": platform.python_version(), "platform": platform.platform()}
    for name in (*PACKAGES, *extra):
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def command_line(argv: list[str] | None = None) -> str:
    """The command that made it, shell-quoted (default: this process's own, as `explorer ...`)."""
    args = list(sys.argv if argv is None else argv)
    if args and (args[0].endswith("__main__.py") or args[0].endswith("/explorer")):
        args[0] = "explorer"
    return shlex.join(args)
