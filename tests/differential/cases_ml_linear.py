"""LinearClassifier, LinearRegressor, SVMClassifier and SVMRegressor (explorer/executor/ops/ml_linear.py,
ml_svm.py): one and several targets, every post transform, int and string labels, every kernel, SVC with and
without Platt probabilities (libsvm's coupling of pairwise probabilities), liblinear mode, one-class regressors,
every input type."""
from __future__ import annotations

from statistics import NormalDist
from typing import Any

import numpy as np

from .gen import rng
from .harness import Case, Cast

ML = "ai.onnx.ml"
TRANSFORMS = ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT")
FLOAT_OUTPUT = Cast(np.float32, "the output is float32 whatever the input's type: integer features (below 20) are "
                                "exact in float32, float64 ones rounded, compared at float32's precision")
KERNELS = ("LINEAR", "POLY", "RBF", "SIGMOID")


def rounded(r: np.random.Generator, count: int, scale: float = 1.0) -> list[float]:
    return [round(float(v), 3) for v in r.normal(size=count) * scale]


def features(r: np.random.Generator, rows: int, count: int, dtype: Any = np.float32) -> np.ndarray:
    x = r.normal(size=(rows, count)) * 1.5
    return (np.round(x * 2) if np.dtype(dtype).kind in "iu" else x).astype(dtype)


def _labels(r: np.random.Generator, classes: int) -> dict[str, Any]:
    if r.random() < 0.4:
        return {"classlabels_strings": [f"k{c}" for c in range(classes)]}
    return {"classlabels_ints": [int(v) for v in r.choice(50, size=classes, replace=False)]}


def _linear_classifiers() -> list[Case]:
    found = []
    for targets in (1, 3, 4):
        for post in TRANSFORMS:
            if targets == 1 and post == "PROBIT":
                continue  # onnxruntime writes one column of two (its other column is whatever its buffer held)
            r = rng("LinearClassifier", targets, post)
            attrs = {"coefficients": rounded(r, targets * 4, 0.5), "intercepts": rounded(r, targets, 0.3),
                     "post_transform": post, "multi_class": int(r.integers(0, 2)),
                     **_labels(r, 2 if targets == 1 else targets)}
            found.append(Case("LinearClassifier", 1, [features(r, 9, 4)], attrs, outputs=2, domain=ML))
    r = rng("LinearClassifier", "types")
    attrs = {"coefficients": rounded(r, 6), "intercepts": rounded(r, 3), "classlabels_ints": [5, 6, 7]}
    for dtype in (np.float64, np.int64, np.int32):
        found.append(Case("LinearClassifier", 1, [features(r, 5, 2, dtype)], attrs, outputs=2, domain=ML))
    found.append(Case("LinearClassifier", 1, [features(r, 5, 2)[0]], attrs, outputs=2, domain=ML))
    found.append(Case("LinearClassifier", 1, [features(r, 5, 6)], {**attrs, "intercepts": [0.5]}, outputs=2,
                      domain=ML, error="needs exactly 2 class labels"))
    found.append(Case("LinearClassifier", 1, [features(r, 5, 4)], attrs, outputs=2, domain=ML,
                      error="6 coefficients do not make 3 rows"))
    return found


def _linear_regressors() -> list[Case]:
    found = []
    for targets in (1, 3):
        for post in TRANSFORMS:
            r = rng("LinearRegressor", targets, post)
            attrs = {"coefficients": rounded(r, targets * 3, 0.3), "targets": targets, "post_transform": post}
            if post == "PROBIT":  # inputs of probit in (0, 1)
                attrs["coefficients"] = [abs(c) / 10 for c in attrs["coefficients"]]
            if r.random() < 0.7:
                attrs["intercepts"] = [0.25] * targets
            x = np.abs(features(r, 7, 3)) if post == "PROBIT" else features(r, 7, 3)
            found.append(Case("LinearRegressor", 1, [x], attrs, domain=ML))
    r = rng("LinearRegressor", "types")
    attrs = {"coefficients": rounded(r, 4), "intercepts": [1.0, -1.0], "targets": 2}
    for dtype in (np.float64, np.int64, np.int32):  # onnxruntime's kernel takes float only
        found.append(Case("LinearRegressor", 1, [features(r, 5, 2, dtype)], attrs, domain=ML, cast=FLOAT_OUTPUT))
    found.append(Case("LinearRegressor", 1, [features(r, 5, 2)], {**attrs, "intercepts": [3.0]}, domain=ML))
    return found


def _svm(r: np.random.Generator, classes: int, kernel: str, proba: bool, count: int = 3) -> dict[str, Any]:
    per_class = [int(v) for v in r.integers(1, 4, size=classes)]
    total, pairs = sum(per_class), classes * (classes - 1) // 2
    attrs = {"kernel_type": kernel, "kernel_params": [0.4, 0.3, 2.0 if kernel == "POLY" else 3.0],
             "vectors_per_class": per_class, "support_vectors": rounded(r, total * count),
             "coefficients": rounded(r, (classes - 1) * total), "rho": rounded(r, pairs, 0.3), **_labels(r, classes)}
    if proba:
        attrs["prob_a"] = [round(-abs(v) - 0.5, 3) for v in r.normal(size=pairs)]
        attrs["prob_b"] = rounded(r, pairs, 0.2)
    return attrs


def _svm_classifiers() -> list[Case]:
    found = []
    for kernel in KERNELS:
        for classes in (2, 3, 5):
            for proba in (False, True):
                for post in TRANSFORMS:
                    if classes == 2 and not proba and post == "PROBIT":
                        continue  # onnxruntime writes one column of two
                    r = rng("SVMClassifier", kernel, classes, proba, post)
                    attrs = {**_svm(r, classes, kernel, proba), "post_transform": post}
                    # erfinv's approximation takes the log of (1 - y)(1 + y): float32 scores a few ulps apart
                    # differ by up to 1e-3 after it near y = 0
                    tol = {"tol": (1e-4, 1e-3)} if post == "PROBIT" else {}
                    found.append(Case("SVMClassifier", 1, [features(r, 8, 3)], attrs, outputs=2, domain=ML, **tol))
    for classes, signs in ((2, "positive"), (2, "mixed"), (4, "mixed")):  # liblinear: no support vectors
        for post in ("NONE", "LOGISTIC", "SOFTMAX"):
            r = rng("SVMClassifier", "linear", classes, signs, post)
            coefficients = rounded(r, classes * 3)
            if signs == "positive":
                coefficients = [abs(c) / 4 for c in coefficients]
            attrs = {"coefficients": coefficients, "rho": [0.125], "post_transform": post,
                     "kernel_params": [1.0, 0.0, 1.0], **_labels(r, classes)}
            found.append(Case("SVMClassifier", 1, [features(r, 8, 3)], attrs, outputs=2, domain=ML))
    r = rng("SVMClassifier", "types")
    attrs = _svm(r, 3, "RBF", True, count=2)
    for dtype in (np.float64, np.int64, np.int32):
        found.append(Case("SVMClassifier", 1, [features(r, 6, 2, dtype)], attrs, outputs=2, domain=ML))
    found.append(Case("SVMClassifier", 1, [features(r, 6, 3)], attrs, outputs=2, domain=ML,
                      error="do not make"))
    return found


def _svm_regressors() -> list[Case]:
    found = []
    for kernel in KERNELS:
        for one_class in (0, 1):
            r = rng("SVMRegressor", kernel, one_class)
            count = int(r.integers(2, 6))
            attrs = {"kernel_type": kernel, "kernel_params": [0.4, 0.3, 2.0], "n_supports": count,
                     "support_vectors": rounded(r, count * 3), "coefficients": rounded(r, count), "rho": [0.2],
                     "one_class": one_class, "post_transform": "NONE" if one_class else "LOGISTIC"}
            found.append(Case("SVMRegressor", 1, [features(r, 7, 3)], attrs, domain=ML))
    r = rng("SVMRegressor", "linear")
    attrs = {"coefficients": rounded(r, 3), "rho": [0.5], "kernel_params": [1.0, 0.0, 1.0]}
    found.append(Case("SVMRegressor", 1, [features(r, 6, 3)], attrs, domain=ML))
    for dtype in (np.float64, np.int64, np.int32):  # onnxruntime's kernel takes float only
        found.append(Case("SVMRegressor", 1, [features(r, 5, 3, dtype)], attrs, domain=ML, cast=FLOAT_OUTPUT))
    x = np.array([[1.0, 1.0, 0.0], [0.5, 0.0, 1.0]], np.float32)
    probit = {"coefficients": [0.1, 0.2, 0.3], "rho": [0.05], "post_transform": "PROBIT"}
    found.append(Case("SVMRegressor", 1, [x], probit, domain=ML, tol=(5e-3, 5e-3),
                      expected=[np.array([[NormalDist().inv_cdf(0.35)], [NormalDist().inv_cdf(0.4)]], np.float32)],
                      reason="onnxruntime leaves SVMRegressor's post_transform unapplied; the exact probit of "
                             "0.35 and 0.4 (explorer approximates erfinv as onnxruntime's other kernels do)"))
    return found


def _no_intercepts() -> list[Case]:
    """LinearClassifier without intercepts: onnxruntime counts classes by the intercepts (and reads past its
    scores); the spec's scores are X times the coefficients."""
    x = np.array([[1, 2], [-1, 0.5], [0, 0]], np.float32)
    weights = np.array([[0.5, -1], [1, 1], [-0.25, 0.5]], np.float32)
    scores = x @ weights.T
    return [Case("LinearClassifier", 1, [x], {"coefficients": weights.ravel().tolist(), "classlabels_ints": [1, 2, 3]},
                 outputs=2, domain=ML, expected=[np.array([2, 3, 1], np.int64), scores],
                 reason="onnxruntime needs intercepts to count the classes; the spec's value by hand")]


def cases() -> list[Case]:
    return [*_linear_classifiers(), *_linear_regressors(), *_svm_classifiers(), *_svm_regressors(),
            *_no_intercepts()]
