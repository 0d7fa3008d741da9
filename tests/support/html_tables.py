"""The tables of an HTML text as a reader sees them: each cell's text and its tooltip (its title attribute)."""
from __future__ import annotations

from html.parser import HTMLParser


class Tables(HTMLParser):
    """Collects `tables`: per table its rows, per row its cells as (text, tooltip)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[tuple[str, str | None]]]] = []
        self.cell: list[str] | None = None
        self.tip: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell, self.tip = [], dict(attrs).get("title")

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append(("".join(self.cell), self.tip))
            self.cell = None


def tables(html: str) -> list[list[list[tuple[str, str | None]]]]:
    """The tables of `html`: per table its rows, per row its cells as (text, tooltip)."""
    parser = Tables()
    parser.feed(html)
    return parser.tables
