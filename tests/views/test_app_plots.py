"""Trace values as plotly figures (explorer/views/plots.py): the drawn numbers are the tensor's numbers."""
import numpy as np
import pytest

from explorer.trace.values import summarize
from explorer.views.plots import MAX_SLICES, lines_figure, series_figure, time_heatmap, value_figure


def test_short_vectors_are_bars_long_ones_lines():
    short = np.array([3.0, -1.0, 2.5], dtype=np.float32)
    fig = value_figure(short, "v")
    assert fig.data[0].type == "bar"
    np.testing.assert_array_equal(fig.data[0].y, short)
    long = np.linspace(0, 1, 200)
    fig = value_figure(long, "v")
    assert fig.data[0].type == "scatter"
    np.testing.assert_array_equal(fig.data[0].y, long)


def test_matrices_are_heatmaps_of_the_values():
    m = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    fig = value_figure(m, "m")
    assert fig.data[0].type == "heatmap"
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), m)
    assert fig.data[0].zmid == 0  # signed data: diverging scale centred on 0


def test_higher_rank_has_one_slider_step_per_leading_index():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    fig = value_figure(x, "x")
    steps = fig.layout.sliders[0].steps
    assert len(steps) == 6
    for k, (i, j) in enumerate(np.ndindex(2, 3)):
        assert steps[k].label == f"({i}, {j})"
        np.testing.assert_allclose(np.asarray(steps[k].args[0]["z"][0]), x[i, j])
    assert fig.data[0].zmin == pytest.approx(x.min()) and fig.data[0].zmax == pytest.approx(x.max())


def test_many_slices_are_capped_and_the_title_says_so():
    fig = value_figure(np.zeros((100, 2, 2)), "big")
    assert len(fig.layout.sliders[0].steps) == MAX_SLICES
    assert "first 64 of 100" in fig.layout.title.text


@pytest.mark.parametrize("value", [np.float32(1.0) * np.ones(()), np.array(["a", "b"], dtype=object),
                                   summarize(np.zeros((3, 3))), [np.zeros(2)], None, np.zeros((0, 3))])
def test_nothing_to_draw(value):
    assert value_figure(value) is None


def test_bool_and_complex_are_drawn_as_numbers():
    fig = value_figure(np.array([True, False, True]))
    np.testing.assert_array_equal(fig.data[0].y, [1, 0, 1])
    fig = value_figure(np.array([3 + 4j, 1j]))
    np.testing.assert_allclose(fig.data[0].y, [5, 1])  # magnitude


def test_series_of_scalars_is_a_line():
    fig = series_figure([np.array(1.0), np.array(2.0), np.array(4.0)], "s")
    np.testing.assert_array_equal(fig.data[0].y, [1, 2, 4])


def test_series_of_small_vectors_is_element_by_step_heatmap():
    values = [np.array([0.0, 1.0, 2.0]) * k for k in range(4)]
    fig = series_figure(values, "v", x=["init", 0, 1, 2])
    z = np.asarray(fig.data[0].z)
    assert z.shape == (3, 4)
    np.testing.assert_array_equal(z[:, 3], values[3])
    assert list(fig.data[0].x) == ["init", "0", "1", "2"] and fig.layout.xaxis.type == "category"


def test_series_of_big_tensors_shows_range_and_norm():
    rng = np.random.default_rng(1)
    values = [rng.standard_normal((20, 20)) for _ in range(3)]
    fig = series_figure(values, "big")
    by_name = {trace.name: np.asarray(trace.y) for trace in fig.data}
    np.testing.assert_allclose(by_name["min"], [v.min() for v in values])
    np.testing.assert_allclose(by_name["max"], [v.max() for v in values])
    np.testing.assert_allclose(by_name["L2 norm"], [np.linalg.norm(v) for v in values])


def test_series_with_a_non_numeric_step_is_not_drawn():
    assert series_figure([np.zeros(2), None]) is None
    assert series_figure([]) is None


def test_time_heatmaps_put_time_across_and_span_the_activation_range():
    values = np.array([[0.1, 0.9], [0.5, np.nan], [0.2, 0.3]])  # [time, unit]
    fig = time_heatmap(values, "z", (0.0, 1.0))
    heat = fig.data[0]
    np.testing.assert_array_equal(np.asarray(heat.z, dtype=float), values.T)
    assert (heat.zmin, heat.zmax) == (0.0, 1.0) and list(heat.x) == [0, 1, 2]
    fig = time_heatmap(values, "h", (-1.0, 1.0))
    assert fig.data[0].zmid == 0 and fig.data[0].zmin == -1.0


def test_lines_share_the_step_axis():
    fig = lines_figure({"a": np.array([1.0, 2.0]), "b": np.array([0.5, np.nan])}, "t", yrange=(0, 1))
    assert [t.name for t in fig.data] == ["a", "b"]
    np.testing.assert_array_equal(fig.data[1].y, [0.5, np.nan])
    assert tuple(fig.layout.yaxis.range) == (0, 1)


def test_value_stats_count_nonfinite_and_skip_what_has_no_range():
    from explorer.views.tables import as_grid, short_text, value_stats

    stats = value_stats(np.array([1.0, np.nan, -np.inf, 3.0], dtype=np.float32))
    assert (stats["shape"], stats["dtype"], stats["min"], stats["max"], stats["NaN"], stats["Inf"]) == (
        (4,), "float32", 1.0, 3.0, 1, 1)
    assert value_stats(np.array([True, False, True]))["mean"] == pytest.approx(2 / 3)
    import ml_dtypes

    half = value_stats(np.array([0.5, 1.5], dtype=ml_dtypes.bfloat16))
    assert (half["dtype"], half["min"], half["max"]) == ("bfloat16", 0.5, 1.5)
    words = value_stats(np.array(["a", "b"], dtype=object))
    assert words["min"] is None and words["type"] == "object[2]"
    assert value_stats([np.zeros(2), np.ones(2)])["type"] == "seq(2) of float64[2]"
    assert short_text(np.array(3, np.int64)) == "3"
    assert short_text(np.arange(10.0)) == "float64[10] ∈ [0, 9]"
    assert as_grid(np.arange(24).reshape(2, 3, 4)).shape == (6, 4) and as_grid(np.zeros(1000)) is None


def test_series_of_sequences_plots_their_length():
    fig = series_figure([[], [np.zeros(2)], [np.zeros(2), np.ones(2)]], "seq")
    np.testing.assert_array_equal(fig.data[0].y, [0, 1, 2])
    assert fig.layout.title.text == "seq (sequence length)"
