"""What a reader sees of the app's markdown: CommonMark rendering (as Streamlit's remark does), tags dropped."""
import html
import re

from markdown_it import MarkdownIt


def rendered(source: str) -> str:
    """The HTML CommonMark makes of a markdown source (raw HTML passes through, so it shows up here)."""
    return MarkdownIt("commonmark").render(source)


def shown(source: str) -> str:
    """The text a reader sees: tags dropped, entities decoded, zero-width spaces removed."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered(source))).replace("\u200b", "").strip()
