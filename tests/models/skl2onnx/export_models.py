"""The recipe of the scikit-learn models in this folder, converted by skl2onnx: classifiers with and without
ZipMap (logistic regression, random forest, gradient boosting, histogram gradient boosting with missing values,
SVC with probabilities, a string-labelled tree), regressors (tree, forest, gradient boosting, histogram gradient
boosting, SVR, linear), a ColumnTransformer pipeline (SimpleImputer, StandardScaler, OneHotEncoder of strings), a
DictVectorizer pipeline and two text pipelines (CountVectorizer, TfidfVectorizer).

For each model it writes the .onnx file, its entry in inputs.json (the exact inputs: tensors as `value` and
`dtype`, a map as `map` and its values' `dtype`) and reference/<model>.npz with scikit-learn's own results on
those inputs: `label` (predict) and `probabilities` (predict_proba, columns in classes_ order) for classifiers,
`prediction` for regressors. onnxruntime's run of each file must match scikit-learn (labels equal, probabilities
and predictions within 1e-4), or the recipe stops.

Two workarounds, both in the recipe: skl2onnx 1.20 writes HistGradientBoosting's missing-value tracks as booleans,
which onnx.helper refuses in an INTS attribute (the recipe makes them ints); and its StringNormalizer leaves its locale to
onnxruntime's default, en_US.UTF-8, which this machine lacks (the recipe sets C.UTF-8, which lowercases ASCII
alike).

Run from this folder with the PyTorch venv (it has scikit-learn and skl2onnx): python export_models.py. CI has
neither: the files are committed."""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.helper
import onnxruntime as ort

HERE = Path(__file__).resolve().parent
OPSETS = {"": 17, "ai.onnx.ml": 3}
INPUTS: dict[str, dict[str, Any]] = {}
_make_attribute = onnx.helper.make_attribute


def _int_flags(key: str, value: Any, *args: Any, **kwargs: Any) -> onnx.AttributeProto:
    """onnx.helper.make_attribute, with lists of booleans (skl2onnx's missing-value tracks) as ints."""
    if isinstance(value, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in value):
        value = [int(v) for v in value]
    return _make_attribute(key, value, *args, **kwargs)


onnx.helper.make_attribute = _int_flags

from skl2onnx import convert_sklearn, to_onnx  # noqa: E402
from skl2onnx.common.data_types import (  # noqa: E402
    DictionaryType,
    FloatTensorType,
    StringTensorType,
)
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.feature_extraction import DictVectorizer  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer  # noqa: E402
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder, StandardScaler  # noqa: E402
from sklearn.svm import SVC, SVR  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

RNG = np.random.default_rng(0)


def _as_json(value: Any) -> Any:
    return {"map": value, "dtype": "float32"} if isinstance(value, dict) else \
        {"value": value.tolist(), "dtype": str(value.dtype)}


def _run_onnxruntime(model: onnx.ModelProto, feeds: dict[str, Any]) -> list[Any]:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _scores(value: Any, classes: np.ndarray) -> np.ndarray:
    """onnxruntime's probabilities (a ZipMap's list of dicts, or a tensor) as [N, classes]."""
    if isinstance(value, list):
        return np.array([[row[c] for c in classes.tolist()] for row in value], dtype=np.float64)
    return np.asarray(value, dtype=np.float64)


def save(name: str, model: onnx.ModelProto, feeds: dict[str, Any], reference: dict[str, np.ndarray],
         classes: np.ndarray | None = None) -> None:
    """Writes the model, its inputs and scikit-learn's results, after checking onnxruntime against them."""
    outputs = _run_onnxruntime(model, feeds)
    if "label" in reference:
        if not np.array_equal(np.asarray(outputs[0]).astype(str), reference["label"].astype(str)):
            raise SystemExit(f"{name}: onnxruntime's labels differ from scikit-learn's")
        if "probabilities" in reference:
            assert classes is not None
            error = np.abs(_scores(outputs[1], classes) - reference["probabilities"]).max()
            if not error <= 1e-4:
                raise SystemExit(f"{name}: onnxruntime's probabilities are {error:.3g} from scikit-learn's")
    else:
        error = np.abs(np.asarray(outputs[0], np.float64).reshape(-1) - reference["prediction"].reshape(-1)).max()
        if not error <= 1e-4 * max(1.0, np.abs(reference["prediction"]).max()):
            raise SystemExit(f"{name}: onnxruntime's predictions are {error:.3g} from scikit-learn's")
    onnx.save(model, HERE / f"{name}.onnx")
    INPUTS[f"{name}.onnx"] = {k: _as_json(v) for k, v in feeds.items()}
    (HERE / "reference").mkdir(exist_ok=True)
    np.savez_compressed(HERE / "reference" / f"{name}.npz", **reference)


def classifier(name: str, estimator: Any, x: np.ndarray, y: np.ndarray, rows: np.ndarray, **options: Any) -> None:
    estimator.fit(x, y)
    model = to_onnx(estimator, x[:1], target_opset=OPSETS, options={id(estimator): options} if options else None)
    reference = {"label": estimator.predict(rows), "probabilities": estimator.predict_proba(rows)}
    save(name, model, {model.graph.input[0].name: rows}, reference, estimator.classes_)


def regressor(name: str, estimator: Any, x: np.ndarray, y: np.ndarray, rows: np.ndarray) -> None:
    estimator.fit(x, y)
    model = to_onnx(estimator, x[:1], target_opset=OPSETS)
    save(name, model, {model.graph.input[0].name: rows}, {"prediction": estimator.predict(rows)})


def tabular() -> None:
    iris_x, iris_y = (a.astype(np.float32) if a.dtype.kind == "f" else a for a in load_iris(return_X_y=True))
    rows = iris_x[::15]
    classifier("logistic_regression_zipmap", LogisticRegression(max_iter=500), iris_x, iris_y, rows)
    classifier("logistic_regression", LogisticRegression(max_iter=500), iris_x, iris_y, rows, zipmap=False)
    classifier("random_forest_zipmap", RandomForestClassifier(6, max_depth=4, random_state=0), iris_x, iris_y, rows)
    classifier("gradient_boosting_multiclass", GradientBoostingClassifier(n_estimators=5, max_depth=2,
                                                                          random_state=0),
               iris_x, iris_y, rows, zipmap=False)
    classifier("svc_probability_zipmap", SVC(probability=True, random_state=0), iris_x, iris_y, rows)
    classifier("svc_linear_probability", SVC(kernel="linear", probability=True, random_state=0), iris_x, iris_y,
               rows, zipmap=False)
    names = np.array(["setosa", "versicolor", "virginica"])[iris_y]
    classifier("decision_tree_string_labels", DecisionTreeClassifier(max_depth=3, random_state=0), iris_x, names,
               rows)
    cancer_x, cancer_y = load_breast_cancer(return_X_y=True)
    cancer_x = cancer_x[:, :8].astype(np.float32)
    missing = cancer_x.copy()
    missing[RNG.random(missing.shape) < 0.1] = np.nan
    classifier("gradient_boosting_binary", GradientBoostingClassifier(n_estimators=6, max_depth=2, random_state=0),
               cancer_x, cancer_y, cancer_x[::60])
    classifier("logistic_regression_binary", make_pipeline(StandardScaler(), LogisticRegression()), cancer_x,
               cancer_y, cancer_x[::60])
    classifier("hist_gradient_boosting_missing", HistGradientBoostingClassifier(max_iter=5, max_depth=3,
                                                                                random_state=0),
               missing, cancer_y, missing[::50], zipmap=False)
    diabetes_x, diabetes_y = load_diabetes(return_X_y=True)
    diabetes_x = diabetes_x.astype(np.float32)
    rows = diabetes_x[::40]
    regressor("decision_tree_regressor", DecisionTreeRegressor(max_depth=4, random_state=0), diabetes_x, diabetes_y,
              rows)
    regressor("random_forest_regressor", RandomForestRegressor(5, max_depth=4, random_state=0), diabetes_x,
              diabetes_y, rows)
    regressor("gradient_boosting_regressor", GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0),
              diabetes_x, diabetes_y, rows)
    holes = diabetes_x.copy()
    holes[RNG.random(holes.shape) < 0.1] = np.nan
    regressor("hist_gradient_boosting_regressor_missing",
              HistGradientBoostingRegressor(max_iter=6, max_depth=3, random_state=0), holes, diabetes_y, holes[::40])
    regressor("svr_rbf", SVR(C=50.0), diabetes_x, diabetes_y, rows)
    regressor("linear_regression", LinearRegression(), diabetes_x, diabetes_y, rows)


def column_pipeline() -> None:
    """Numbers with gaps imputed and scaled, a category column (codes 0 to 2) one-hot encoded, into a logistic
    regression: one float input, split by column."""
    count = 120
    x = RNG.normal(size=(count, 4)).astype(np.float32)
    x[:, 3] = RNG.integers(0, 3, size=count)
    x[:, :3][RNG.random((count, 3)) < 0.1] = np.nan
    target = ((np.nan_to_num(x[:, 0]) + (x[:, 3] == 2)) > 0.5).astype(np.int64)
    model = make_pipeline(
        ColumnTransformer([("numbers", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), [0, 1, 2]),
                           ("category", OneHotEncoder(handle_unknown="ignore"), [3])]),
        LogisticRegression())
    model.fit(x, target)
    rows = x[::12].copy()
    rows[1, 3] = 7  # a category the encoder never saw: all zeros
    onnx_model = to_onnx(model, x[:1], target_opset=OPSETS)
    reference = {"label": model.predict(rows), "probabilities": model.predict_proba(rows)}
    save("column_transformer_pipeline", onnx_model, {onnx_model.graph.input[0].name: rows}, reference,
         model.classes_)


def dict_pipeline() -> None:
    """A DictVectorizer (one map in) into a random forest."""
    words = ["cat", "dog", "eel", "fox"]
    records = [{w: float(v) for w, v in zip(words, row) if v > 0.3} for row in RNG.random((80, 4))]
    target = np.array([int(r.get("cat", 0) + r.get("fox", 0) > 0.8) for r in records])
    model = make_pipeline(DictVectorizer(sparse=False), RandomForestClassifier(4, max_depth=3, random_state=0))
    model.fit(records, target)
    onnx_model = convert_sklearn(model, initial_types=[("features", DictionaryType(StringTensorType([1]),
                                                                                    FloatTensorType([1])))],
                                 target_opset=OPSETS)
    one = {"cat": 0.9, "eel": 0.4, "fox": 0.75}
    reference = {"label": model.predict([one]), "probabilities": model.predict_proba([one])}
    save("dict_vectorizer_pipeline", onnx_model, {"features": one}, reference, model.classes_)


def text_pipelines() -> None:
    corpus = ["the cat sat on the mat", "a dog ate my homework", "The dog sat", "cats and dogs, on mats!",
              "my cat ate the mat", "A DOG and a cat"]
    labels = np.array([0, 1, 1, 0, 0, 1])
    rows = np.array([["The cat sat on a mat"], ["dogs and cats"], ["a dog ate the cat"]], dtype=object)
    for name, vectorizer in (("count_vectorizer_pipeline", CountVectorizer(ngram_range=(1, 2))),
                             ("tfidf_vectorizer_pipeline", TfidfVectorizer())):
        model = make_pipeline(vectorizer, LogisticRegression())
        model.fit(corpus, labels)
        onnx_model = convert_sklearn(model, initial_types=[("text", StringTensorType([None, 1]))],
                                     options={id(vectorizer): {"tokenexp": r"\b\w\w+\b", "separators": None}},
                                     target_opset=OPSETS)
        for node in onnx_model.graph.node:
            if node.op_type == "StringNormalizer":
                kept = [a for a in node.attribute if a.name != "locale"]
                del node.attribute[:]
                node.attribute.extend([*kept, onnx.helper.make_attribute("locale", "C.UTF-8")])
        reference = {"label": model.predict(rows[:, 0]), "probabilities": model.predict_proba(rows[:, 0])}
        save(name, onnx_model, {"text": rows}, reference, model.classes_)


def main() -> None:
    warnings.filterwarnings("ignore")
    tabular()
    column_pipeline()
    dict_pipeline()
    text_pipelines()
    (HERE / "inputs.json").write_text("{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}"
                                                         for k, v in sorted(INPUTS.items())) + "\n}\n")


if __name__ == "__main__":
    main()
