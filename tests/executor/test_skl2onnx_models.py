"""scikit-learn models converted by skl2onnx (tests/models/skl2onnx: classifiers with and without ZipMap, tree
ensembles with missing values, SVMs with probabilities, regressors, column, dict and text pipelines), run by
explorer against onnxruntime on the same inputs and against scikit-learn's own results (reference/<model>.npz)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import explorer
from explorer.trace.values import MapSequence
from tests.support.skl2onnx_models import FOLDER, LISTED, feeds_of


def scores(value: Any, classes: list[Any]) -> np.ndarray:
    """Probabilities as [N, classes] whether a ZipMap's maps or a tensor."""
    if isinstance(value, list):
        return np.array([[row[c] for c in classes] for row in value], dtype=np.float64)
    return np.asarray(value, dtype=np.float64)


def run_both(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    path, feeds = FOLDER / name, feeds_of(name)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    theirs = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    return explorer.run(str(path), feeds).outputs, theirs


def test_every_model_has_its_inputs_and_reference():
    files = {p.name for p in FOLDER.glob("*.onnx")}
    assert files == set(LISTED) and len(files) >= 20
    assert {p.stem for p in (FOLDER / "reference").glob("*.npz")} == {Path(f).stem for f in files}


def test_the_models_cover_the_ml_domain():
    used = {n.op_type for f in LISTED for n in onnx.load(str(FOLDER / f)).graph.node}
    assert {"TreeEnsembleClassifier", "TreeEnsembleRegressor", "LinearClassifier", "LinearRegressor",
            "SVMClassifier", "SVMRegressor", "ZipMap", "Normalizer", "Scaler", "Imputer", "OneHotEncoder",
            "DictVectorizer", "ArrayFeatureExtractor", "StringNormalizer", "Tokenizer", "TfIdfVectorizer"} <= used


@pytest.mark.parametrize("name", sorted(LISTED))
def test_explorer_matches_onnxruntime(name):
    ours, theirs = run_both(name)
    assert set(ours) == set(theirs)
    for key, want in theirs.items():
        got = ours[key]
        if isinstance(want, list):  # ZipMap: one dict per row
            assert isinstance(got, MapSequence) and len(got) == len(want)
            assert [set(row) for row in got] == [set(row) for row in want], key
            keys = list(want[0])
            np.testing.assert_allclose(scores(got, keys), scores(want, keys), rtol=1e-5, atol=1e-6, err_msg=key)
            continue
        assert got.shape == want.shape and got.dtype == want.dtype, f"{key}: {got.dtype}{got.shape}"
        if want.dtype.kind in "OUSiu":
            assert np.array_equal(got, want), key
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=key)


@pytest.mark.parametrize("name", sorted(LISTED))
def test_explorer_matches_scikit_learn(name):
    reference = np.load(FOLDER / "reference" / f"{Path(name).stem}.npz")
    outputs = list(explorer.run(str(FOLDER / name), feeds_of(name)).outputs.values())
    if "prediction" in reference:
        got = np.asarray(outputs[0], dtype=np.float64).reshape(-1)
        want = reference["prediction"].reshape(-1)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(want).max()))
        return
    assert outputs[0].astype(str).tolist() == reference["label"].astype(str).tolist()
    classes = list(outputs[1][0]) if isinstance(outputs[1], list) else []  # ZipMap's keys: scikit-learn's order
    np.testing.assert_allclose(scores(outputs[1], classes), reference["probabilities"], atol=1e-4)
