"""What every shared HTML report is held to: it refers to nothing outside itself (no src or href but inline data
and in-page anchors, no <link>, no url() but in-page ones, no fetch), and it runs no script of the model's."""
from __future__ import annotations

import re
from html.parser import HTMLParser

REFERENCE_ATTRIBUTES = {"src", "href", "xlink:href", "srcset", "action", "formaction", "poster", "data"}
OUTSIDE_SCRIPT = re.compile(r"\bfetch\s*\(|XMLHttpRequest|\bimport\s*\(|WebSocket|EventSource|sendBeacon|https?://")
URL = re.compile(r"url\(\s*['\"]?(?!#)", re.I)


class _Parts(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._in: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in.append(tag)

    def handle_endtag(self, tag):
        if tag in self._in:
            while self._in and self._in.pop() != tag:
                pass

    def handle_data(self, data):
        where = self._in[-1] if self._in else ""
        if where == "script":
            self.scripts.append(data)
        elif where == "style":
            self.styles.append(data)
        elif "svg" not in self._in:
            self.text.append(data)


def parts(page: str) -> _Parts:
    parser = _Parts()
    parser.feed(page)
    return parser


def outside_references(page: str) -> list[str]:
    """Every way the page could load something from outside itself."""
    found = []
    parsed = parts(page)
    for tag, attrs in parsed.tags:
        if tag in ("link", "iframe", "object", "embed", "base", "img", "audio", "video", "source", "meta") and \
                not (tag == "meta" and set(attrs) <= {"charset", "name", "content"}):
            found.append(f"<{tag}>")
        for name, value in attrs.items():
            value = value or ""
            if name in REFERENCE_ATTRIBUTES and not (value.startswith("data:") or value.startswith("#")):
                found.append(f"{tag} {name}={value[:60]}")
            if name == "style" and URL.search(value):
                found.append(f"{tag} style url()")
            if name.startswith("on"):
                found.append(f"{tag} {name}")
    found += [f"style url(): {m.group()}" for s in parsed.styles for m in URL.finditer(s)]
    found += [f"script: {m.group()}" for s in parsed.scripts for m in OUTSIDE_SCRIPT.finditer(s)]
    return found
