"""Model-controlled strings in the app's markdown and plot titles: shown as the text they are (CommonMark is the
judge: markdown-it renders what Streamlit's remark would)."""
import html
import re

import pytest

from explorer.views.markup import md, md_code, plot_text
from tests.support.markdown_text import rendered, shown

HOSTILE = [
    "![x](http://host/p.png)", "[link](javascript:alert(1))", "<img src=x onerror=alert(1)>", "**bold** _it_",
    "# heading", "> quote", "- item", "1. item", "`code`", "``a`b``", "a\nb\n\nc", "|a|b|\n|-|-|", "x\\]y",
    "&amp; &lt;", "www.host.com a@b.co http://host", ":red[boom] :material/home: :smile:", "$x^2$", "", " ",
    "` lead", "trail `", "tab\there", "\x00\x1b[31m",
]




def visible(text: str) -> str:
    """What the reader is meant to see: control characters as escapes."""
    return text.replace("\n", "\\n").replace("\t", "\\t").replace("\x00", "\\x00").replace("\x1b", "\\x1b")


@pytest.mark.parametrize("text", HOSTILE)
def test_md_renders_as_the_literal_text_in_one_paragraph(text):
    out = rendered(f"before {md(text)} after")
    assert out.count("<p>") == 1 and not re.search(r"<(?!/?p>)", out), out
    assert shown(f"before {md(text)} after") == f"before {visible(text)} after".strip()
    assert not re.search(r"(?<!\\):\w", md(text))  # no Streamlit :directive[ or :shortcode:


@pytest.mark.parametrize("text", HOSTILE)
def test_md_code_is_one_code_span_holding_the_text(text):
    out = rendered(f"x {md_code(text)} y")
    assert out.count("<code>") == 1 and out.count("<p>") == 1, out
    code = html.unescape(re.search(r"<code>(.*)</code>", out, re.DOTALL).group(1))
    assert code.strip() == visible(text).strip()


def test_plot_titles_hold_no_tags():
    assert plot_text("<a href='http://x'>y</a>") == "&lt;a href='http://x'&gt;y&lt;/a&gt;"
