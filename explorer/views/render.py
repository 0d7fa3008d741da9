"""DOT -> SVG / PNG / PDF through graphviz's `dot` binary. When `dot` is not installed, `dot_available()` is
False and `render` raises GraphvizMissing: callers then lay out in the browser (st.graphviz_chart) instead."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..errors import ExplorerError
from ..files.atomic_write import write_bytes, write_text

FORMATS = ("svg", "png", "pdf")


class GraphvizMissing(ExplorerError, RuntimeError):
    """graphviz's `dot` binary is not on PATH."""


class GraphvizError(ExplorerError, RuntimeError):
    """`dot` ran but failed (bad DOT, or it took longer than the timeout)."""


def dot_binary() -> str | None:
    """Path of graphviz's `dot`, or None."""
    return shutil.which("dot")


def dot_available() -> bool:
    return dot_binary() is not None


def render(dot_text: str, fmt: str = "svg", *, timeout: float = 300.0) -> bytes:
    """Lays out and renders DOT text with `dot -T<fmt>`; fmt is one of FORMATS."""
    if fmt not in FORMATS:
        raise ValueError(f"cannot render to {fmt!r}; formats: {', '.join(FORMATS)}")
    binary = dot_binary()
    if binary is None:
        raise GraphvizMissing("graphviz's `dot` is not installed (Debian: apt-get install graphviz); "
                              "write DOT text instead, or render it in the browser")
    try:
        done = subprocess.run([binary, f"-T{fmt}"], input=dot_text.encode("utf-8"), capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise GraphvizError(f"dot took longer than {timeout:g} s; collapse bodies or scopes, or turn off "
                            "edge labels") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise GraphvizError(f"dot failed (exit {done.returncode}): {message[:2000]}")
    return done.stdout


def render_svg(dot_text: str, *, timeout: float = 300.0) -> str:
    """The SVG document text for DOT text."""
    return render(dot_text, "svg", timeout=timeout).decode("utf-8")


def write_diagram(dot_text: str, path: str | Path, *, timeout: float = 300.0) -> str:
    """Writes DOT text to `path`, as it is for `.dot`/`.gv`, rendered by `dot` for `.svg`/`.png`/`.pdf` (to a
    temporary file moved into place once complete). Returns the format written."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt in ("dot", "gv"):
        write_text(path, dot_text)
        return "dot"
    if fmt not in FORMATS:
        known = ", ".join(f".{f}" for f in FORMATS)
        raise ValueError(f"cannot tell the format of {str(path)!r}: use .dot, .gv, {known}")
    write_bytes(path, render(dot_text, fmt, timeout=timeout))
    return fmt
