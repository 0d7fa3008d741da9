"""The Step page's values as static HTML (views.value_html): what the tables show, judged by hand-computed
values."""
from __future__ import annotations

import numpy as np

from explorer.views import value_html
from tests.support.html_tables import tables


def test_nan_and_inf_cells_read_as_such_and_rounded_cells_keep_their_full_precision_as_a_tooltip():
    value = np.array([[np.nan, np.inf, -np.inf], [1 / 3, 0.5, 2.0]], dtype=np.float64)
    [table] = tables(value_html.value_table(value))
    assert [text for text, _ in table[0]] == ["", "0", "1", "2"]  # column labels: axis 1
    assert table[1] == [("0", None), ("NaN", None), ("Inf", None), ("-Inf", None)]
    assert table[2] == [("1", None), ("0.333333", "0.3333333333333333"), ("0.5", None), ("2", None)]
    assert float(table[2][1][1]) == 1 / 3  # the tooltip reads back as the same number
    assert "rows: axis 0 · columns: axis 1" in value_html.value_table(value)


def test_float32_tooltips_are_the_shortest_text_of_the_float32_value():
    [table] = tables(value_html.value_table(np.array([0.1, 1.2345678], dtype=np.float32)))
    assert table[1][1:] == [("0.1", None), ("1.23457", "1.2345678")]


def test_rank_3_tables_name_their_axes_and_label_rows_with_index_tuples():
    html = value_html.value_table(np.arange(12, dtype=np.int64).reshape(2, 2, 3))
    [table] = tables(html)
    assert [row[0][0] for row in table[1:]] == ["[0, 0]", "[0, 1]", "[1, 0]", "[1, 1]"]
    assert [text for text, _ in table[4][1:]] == ["9", "10", "11"]
    assert "rows: axes 0–1 (index [i0, i1]) · columns: axis 2" in html


def test_scalars_big_tensors_and_summaries_get_no_table():
    assert value_html.value_table(np.float32(2.5).reshape(())) == ""
    assert value_html.value_table(np.zeros(1000, np.float32)) == ""
    block = value_html.value_block("s", np.array(2.5, np.float32), full=True)
    assert block == "<p><b>s</b> · <code>float32[]</code> = <code>2.5</code></p>"  # the scalar inline


def test_complex_cells_keep_their_full_precision_as_a_tooltip():
    [table] = tables(value_html.value_table(np.array([1 / 3 + 2j], dtype=np.complex128)))
    assert table[1][1] == ("0.3333+2j", "(0.3333333333333333+2j)")


def test_names_are_escaped_and_counts_of_nan_are_tinted():
    block = value_html.value_block("<img src=x onerror=alert(1)>", np.array([np.nan, 1.0]), full=False)
    assert "<img" not in block and "&lt;img src=x onerror=alert(1)&gt;" in block
    assert "NaN 1 · Inf 0" in block and "<table" not in block


def test_the_step_pages_exporter_names_read_by_the_part_that_differs_with_the_full_name_on_hover():
    """tf2onnx's body values `sequential_..._while_placeholder_N:0` read `placeholder_N`; a short name stays."""
    long = [f"sequential_6_1_gru_2_1_while_placeholder_{k}:0" for k in (2, 3)]
    values = {long[0]: np.zeros(3, np.float32), long[1]: np.ones(2, np.float32), "x": np.zeros(1)}
    html = "".join(part for _, _, part in value_html.section("Inputs", values, False))
    for k, name in zip((2, 3), long):
        assert f'<b title="{name}">placeholder_{k}</b>' in html
    assert "<b>x</b>" in html
