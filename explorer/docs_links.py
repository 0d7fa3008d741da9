"""Where the guide (docs/, built by MkDocs) is, for the app's "more" links:

1. the address in EXPLORER_DOCS_URL, or `url` in the `[docs]` table of explorer's settings file (settings.py),
   e.g. where the built site is published, or http://127.0.0.1:8000/ while `python -m mkdocs serve` runs;
2. else, when the guide was built into the app's static folder (`python -m mkdocs build` writes it to
   static/docs/, which Streamlit serves with `server.enableStaticServing`), that copy, at `app/static/docs/`
   relative to the app's own address;
3. else nowhere: the app then names the page of docs/ to read.

`TOPICS` names the section of the guide that says more about each part of the app."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .files.settings import table

BUILT = Path(__file__).resolve().parent.parent / "static" / "docs"  # mkdocs.yml's site_dir, beside app.py
SERVED = "app/static/docs/"  # where Streamlit serves that folder, relative to the app's address

TOPICS: dict[str, tuple[str, str]] = {  # part of the app -> (page of docs/, heading id)
    "sidebar": ("app.md", "the-sidebar"),
    "limits": ("limits.md", "the-limits"),
    "lenient": ("limits.md", "lenient-mode"),
    "learning": ("tutorials/learning-mode.md", ""),
    "graph": ("app.md", "graph"),
    "step": ("app.md", "step-through"),
    "loops": ("app.md", "loops"),
    "gates": ("app.md", "gates"),
    "optimizer": ("app.md", "optimizer"),
    "compare": ("app.md", "compare"),
    "sweep": ("app.md", "sweep"),
    "reference values": ("compare.md", "reference-values-from-pytorch"),
    "framework": ("framework.md", ""),
}


def docs_base(environ: Mapping[str, str] | None = None, built: Path = BUILT) -> str | None:
    """The guide's base address (ending in /), or None when the guide is not to be found."""
    environ = os.environ if environ is None else environ
    url = (environ.get("EXPLORER_DOCS_URL") or str(table("docs", environ).get("url") or "")).strip()
    if url:
        return url if url.endswith("/") else url + "/"
    return SERVED if (built / "index.html").is_file() else None


def docs_link(topic: str, environ: Mapping[str, str] | None = None, built: Path = BUILT) -> str | None:
    """The address of the guide's section on `topic` (a key of TOPICS), or None when the guide is not found."""
    page, anchor = TOPICS[topic]
    base = docs_base(environ, built)
    if base is None:
        return None
    return base + page.removesuffix(".md") + ".html" + (f"#{anchor}" if anchor else "")


def more(text: str, topic: str, environ: Mapping[str, str] | None = None, built: Path = BUILT) -> str:
    """A short help text followed by a Markdown "more" link to the guide's section on `topic` (or, without a
    guide to link to, the page of docs/ that says more)."""
    link = docs_link(topic, environ, built)
    page = TOPICS[topic][0]
    return f"{text} [More in the guide]({link})" if link else f"{text} More in the guide: `docs/{page}`."
