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


_PARSER = MarkdownIt("commonmark").disable("text_join")  # escapes stay tokens of their own (text_special)
def live_markup(source: str, live: tuple[str, ...], allowed_links: tuple[str, ...] = ()) -> list[str]:
    """What of a markdown source would render as more than text, as Streamlit renders markdown (CommonMark, GFM
    autolinks, math, colour directives, emoji shortcodes): links (but those whose address starts with one of
    `allowed_links`), images, raw HTML, and unescaped text holding one of the `live` fragments (such as
    `:red[x`, `$math` or `://`, which Streamlit, KaTeX or GFM would turn live)."""
    found = []
    for token in _PARSER.parse(source):
        if token.type.startswith("html"):
            found.append(f"raw HTML {token.content!r}")
        for child in token.children or []:
            if child.type == "image":
                found.append(f"image {child.attrs.get('src')!r}")
            elif child.type == "link_open" and not str(child.attrs.get("href", "")).startswith(allowed_links):
                found.append(f"link {child.attrs.get('href')!r}")
            elif child.type.startswith("html"):
                found.append(f"raw HTML {child.content!r}")
            elif child.type == "text" and any(fragment in child.content for fragment in live):
                found.append(f"live text {child.content!r}")
    return found
