"""The inline SVG charts (explorer/views/charts.py, svg_axes.py): the drawn points and cells read back, through the
chart's own tick labels and plotly's colour scales, as the values drawn; names are text, never markup."""
from __future__ import annotations

import base64
import html
import re
from xml.etree import ElementTree

import numpy as np
import plotly.colors

from explorer.views import charts, svg_axes

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '</title><script>alert(1)</script><a href="javascript:x">[x](javascript:y)</a> & "q"'


def parse(svg: str) -> ElementTree.Element:
    return ElementTree.fromstring(svg)


def y_ticks(root: ElementTree.Element) -> list[tuple[float, float]]:
    """(value, pixel y) of the y axis's tick labels (right-aligned texts left of the plot)."""
    return [(float(t.text or ""), float(t.get("y", 0)) - 4) for t in root.iter(f"{SVG}text")
            if t.get("text-anchor") == "end"]


def test_a_line_reads_back_as_its_values_through_the_tick_labels():
    values = np.array([0.5, -1.25, 3.0, 2.0, np.nan, 1.0, 0.0])
    root = parse(charts.lines_chart({"a": values}, "a line").svg())
    ticks = y_ticks(root)
    (v0, p0), (v1, p1) = ticks[0], ticks[-1]
    polylines = root.findall(f".//{SVG}polyline")
    assert len(polylines) == 2  # broken at the NaN
    drawn = [float(pair.split(",")[1]) for line in polylines for pair in line.get("points", "").split()]
    read = [v0 + (p - p0) * (v1 - v0) / (p1 - p0) for p in drawn]
    np.testing.assert_allclose(read, values[np.isfinite(values)], atol=1e-2)


def test_heatmap_cells_take_plotly_s_colours_of_their_values():
    z = np.array([[-2.0, -1.0, 0.0], [0.5, 1.0, 2.0]])
    root = parse(charts.time_heatmap_chart(z.T, "gates").svg())  # [time, unit]: units down, time across
    colour_of = {}
    for path in root.iter(f"{SVG}path"):
        for c, g, wide in re.findall(r"M(\d+) (\d+)h(\d+)", path.get("d", "")):
            for k in range(int(wide)):
                colour_of[(int(g), int(c) + k)] = path.get("fill")
    rows = z.shape[0]
    for (r, c), value in np.ndenumerate(z):
        share = (value + 2) / 4  # diverging around 0: -2 .. 2
        [expected] = plotly.colors.sample_colorscale("RdBu_r", [share], colortype="tuple")
        drawn = colour_of[(rows - 1 - r, c)]  # unit 0 at the bottom, as plotly draws it
        got = [int(drawn[k:k + 2], 16) / 255 for k in (1, 3, 5)]
        np.testing.assert_allclose(got, expected, atol=0.04)


def test_a_large_heatmap_keeps_each_block_s_largest_magnitude():
    z = np.zeros((300, 10))
    z[137, 4] = -9.0
    pooled, was = svg_axes.pool(z, 100)
    assert was and pooled.shape == (100, 10) and pooled.min() == -9.0


def test_names_are_text_in_the_svg_and_the_image_tag():
    chart = charts.lines_chart({HOSTILE: np.arange(3.0), "b": np.ones(3)}, HOSTILE, xtitle=HOSTILE)
    root = parse(chart.svg())
    assert root.findtext(f"{SVG}title") == HOSTILE
    assert HOSTILE in [t.text for t in root.iter(f"{SVG}text")]  # the legend, the axis title
    tags = {e.tag.rsplit("}", 1)[-1] for e in root.iter()}
    assert tags <= {"svg", "title", "rect", "text", "line", "polyline", "circle"}
    assert not [a for e in root.iter() for a in e.attrib if a.startswith("on") or a.endswith("href")]
    tag = chart.html()
    [alt] = re.findall(r'alt="([^"]*)"', tag)
    assert html.unescape(alt) == HOSTILE and "<script" not in tag.split("src=")[0]
    [data] = re.findall(r"base64,([A-Za-z0-9+/=]+)", tag)
    assert base64.b64decode(data).decode("utf-8") == chart.svg()


def test_every_kind_of_value_draws():
    rng = np.random.default_rng(0)
    for value in (rng.normal(size=5), rng.normal(size=500), rng.normal(size=(4, 6)), rng.normal(size=(2, 3, 4, 5))):
        chart = charts.value_chart(value, "v")
        assert chart is not None
        parse(chart.svg())
    assert charts.value_chart(np.float32(1.0), "scalar") is None
    steps = ["init", "0", "1"]
    for values in ([np.array(1.0)] * 3, [rng.normal(size=4)] * 3, [rng.normal(size=400)] * 3, [[1, 2], [1], []]):
        chart = charts.series_chart(values, "carried", x=steps)
        assert chart is not None
        texts = [t.text for t in parse(chart.svg()).iter(f"{SVG}text")]
        assert {"init", "iteration"} <= set(texts)
