"""The guide's pages (docs/) and the anchors MkDocs gives their headings: what a link into the guide must name."""
from __future__ import annotations

import re
from pathlib import Path

from markdown.extensions.toc import slugify

DOCS = Path(__file__).resolve().parents[2] / "docs"


def anchors(page: Path) -> set[str]:
    """The ids of a page's headings, as MkDocs's toc extension makes them."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    return {slugify(m.group(1).strip().rstrip("#").strip(), "-") for m in re.finditer(r"^#{1,6}\s+(.+)$", text,
                                                                                       flags=re.MULTILINE)}
