"""A scikit-learn classifier converted with its ZipMap (tests/models/skl2onnx) in the running app: uploaded with
its inputs, its last step shows the sequence of maps as one table, a row per map and a column per class label,
holding scikit-learn's probabilities."""
from __future__ import annotations

import io

import numpy as np
import pytest

from tests.support.apptest import (
    PAGES,
    assert_clean,
    html_shown,
    position,
    start,
    step_move,
    upload,
    value_tables,
)
from tests.support.skl2onnx_models import FOLDER, feeds_of


@pytest.mark.parametrize("name, labels", [("logistic_regression_zipmap.onnx", ["0", "1", "2"]),
                                          ("decision_tree_string_labels.onnx", ["setosa", "versicolor",
                                                                                "virginica"])])
def test_a_zipmaps_sequence_of_maps_shows_as_a_table_of_its_labels(name, labels):
    at = upload(start("tiny_mlp"), name, (FOLDER / name).read_bytes())
    at.radio(key="w_input_mode").set_value("Upload .npz or .pb").run()
    buffer = io.BytesIO()
    np.savez(buffer, **feeds_of(name))
    at.file_uploader(key="w_npz").upload("inputs.npz", buffer.getvalue()).run()
    at.switch_page(PAGES["step"]).run()
    step_move(at, "last")
    assert_clean(at)
    assert "ZipMap 'ZipMap'" in position(at)
    _, seen = html_shown(at)
    assert "seq(10) of map(" in seen and "rows: the sequence's maps · columns: their keys" in seen
    table = value_tables(at)[-1]
    assert list(table.index) == [str(i) for i in range(10)] and list(table.columns) == labels
    with np.load(FOLDER / "reference" / name.replace(".onnx", ".npz")) as reference:
        want = reference["probabilities"]
    np.testing.assert_allclose(table.to_numpy().astype(float), want, atol=2e-6)  # cells hold 6 digits
    exact = value_tables(at, tips=True)[-1]  # their tooltips the full values
    shown = np.where(exact.isna(), table, exact).astype(float)
    np.testing.assert_allclose(shown, want, atol=3e-7)
