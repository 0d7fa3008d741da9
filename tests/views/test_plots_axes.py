"""Values read like their tables: heatmaps with row 0 on top and whole-number ticks, scalars without float32's
float64 digits."""
from __future__ import annotations

import numpy as np
import pytest

from explorer.views.plots import series_figure, value_figure


@pytest.mark.parametrize("shape", [(2, 4), (3, 2, 4)])
def test_rows_run_downwards_like_the_table(shape):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    fig = value_figure(x, "x")
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), x.reshape(-1, *shape[-2:])[0])  # z[0] is row 0
    assert fig.layout.yaxis.autorange == "reversed"  # drawn on top


@pytest.mark.parametrize("rows, step", [(2, 1), (12, 1), (40, 5), (256, 32)])
def test_ticks_fall_on_whole_indices(rows, step):
    fig = value_figure(np.zeros((rows, 3)), "x")
    assert (fig.layout.yaxis.tick0, fig.layout.yaxis.dtick) == (0, step)
    assert fig.layout.xaxis.dtick == 1


def test_series_heatmap_elements_tick_on_whole_indices():
    fig = series_figure([np.zeros(30), np.ones(30)], "s")
    assert fig.layout.yaxis.dtick == 4 and fig.layout.yaxis.tick0 == 0


def test_float_scalars_read_with_six_significant_digits():
    from explorer.views.tables import short_text

    assert short_text(np.array(1.1257302, np.float32)) == "1.12573"  # not 1.1257301568984985
    assert short_text(np.array(123456789.0)) == "1.23457e+08" and short_text(np.array(np.nan)) == "nan"
    assert short_text(np.array(7, np.int64)) == "7" and short_text(np.array(True)) == "True"


def test_time_steps_tick_on_whole_steps():
    from explorer.views.plots import lines_figure, time_heatmap

    assert time_heatmap(np.zeros((1, 128)), "i").layout.xaxis.dtick == 1  # one step: no -0.5 and 0.5 ticks
    fig = lines_figure({"unit 0": np.zeros(40)}, "i")
    assert (fig.layout.xaxis.tick0, fig.layout.xaxis.dtick) == (0, 5)


def test_every_figure_titles_both_axes():
    from explorer.views.plots import lines_figure, time_heatmap

    figures = [value_figure(np.arange(5.0)), value_figure(np.arange(300.0)), value_figure(np.zeros((2, 3))),
               value_figure(np.zeros((2, 2, 3))), series_figure([np.array(1.0), np.array(2.0)]),
               series_figure([np.zeros(3), np.ones(3)]), series_figure([np.zeros(1000), np.ones(1000)]),
               time_heatmap(np.zeros((4, 3)), "z"), lines_figure({"unit 0": np.zeros(4)}, "z: chosen units")]
    for fig in figures:
        assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text, fig.layout.title.text
