import re
from html import unescape

import numpy as np

from explorer.views.html_blocks import code_block, records_table, text_block
from tests.support.html_tables import tables


def test_a_table_of_records_shows_every_record_under_its_keys_escaped():
    rows = [{"pattern": "MulOne", "applied": 2, "ms": 0.125, "why": "<b>x</b> & *y*"},
            {"pattern": "Dead", "applied": 0, "ms": 1e-05, "why": ""}]
    html = records_table(rows)
    [table] = tables(html)
    assert [text for text, _ in table[0]] == ["pattern", "applied", "ms", "why"]
    assert [[text for text, _ in row] for row in table[1:]] == [["MulOne", "2", "0.125", "<b>x</b> & *y*"],
                                                                ["Dead", "0", "1e-05", ""]]
    assert "<b>x</b>" not in html  # the text is text, not markup
    assert html.count('class="n"') == 4  # the numbers, right-aligned


def test_columns_can_be_named_and_an_empty_table_has_its_header_only():
    [table] = tables(records_table([{"a": 1, "b": True}], columns=["b", "c"]))
    assert [[text for text, _ in row] for row in table] == [["b", "c"], ["True", ""]]
    [empty] = tables(records_table([], columns=["x"]))
    assert [[text for text, _ in row] for row in empty] == [["x"]]


def test_a_column_title_is_its_headers_tooltip_escaped():
    html = records_table([{"→ x": 1, "y →": 2}], titles={"→ x": 'model/"x"<in>'})
    assert '<th title="model/&quot;x&quot;&lt;in&gt;">→ x</th><th>y →</th>' in html


def test_a_text_block_keeps_its_lines_and_escapes_them():
    html = text_block("explorer: y ok\n<script>alert(1)</script>")
    assert "<pre>explorer: y ok\n&lt;script&gt;alert(1)&lt;/script&gt;</pre>" in html


def test_code_keeps_its_text_and_colours_comments_literals_and_keywords():
    source = 'for (int64 i = 0; i < M && cond; ++i) {  // iteration 2\n  v1 = "a<b" * 2.5e-3;\n}'
    html = code_block(source)
    shown = html[html.index("<pre>") + 5:html.index("</pre>")]
    assert unescape(re.sub(r"</?span[^>]*>", "", shown)) == source  # every character, in order
    assert '<span class="k">for</span>' in shown and '<span class="k">int64</span>' in shown
    assert '<span class="c">// iteration 2</span>' in shown
    assert '<span class="v">&quot;a&lt;b&quot;</span>' in shown and '<span class="v">2.5e-3</span>' in shown
    assert "v1" in shown and '<span class="v">1</span>' not in shown  # a digit inside a name is the name's


def test_numpys_numbers_are_numbers_and_its_bools_are_words():
    [table] = tables(records_table([{"f": np.float32(0.1), "i": np.int64(3), "b": np.bool_(True), "x": 1e-30}]))
    assert [text for text, _ in table[1]] == ["0.1", "3", "True", "1e-30"]
    assert records_table([{"b": np.bool_(False)}]).count('class="n"') == 0
