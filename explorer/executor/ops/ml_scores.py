"""What the ai.onnx.ml families share: the post transforms of classifier and regressor scores, computed in float32
as onnxruntime computes them (its PROBIT is the Winitzki approximation of erfinv, not the exact inverse), the
binary case's second column, and reading the string and integer lists of a node's attributes."""
from __future__ import annotations

from typing import Any

import numpy as np

TRANSFORMS = ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT")
F32 = np.float32


def logistic(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) in float32 without overflow."""
    x = np.asarray(x, dtype=F32)
    v = F32(1) / (F32(1) + np.exp(-np.abs(x)))
    return np.where(x < 0, F32(1) - v, v).astype(F32)


def probit(x: np.ndarray) -> np.ndarray:
    """sqrt(2) * erfinv(2x - 1) with erfinv approximated as onnxruntime does (a = 0.147)."""
    y = F32(2) * np.asarray(x, dtype=F32) - F32(1)
    sign = np.where(y < 0, F32(-1), F32(1))
    log = np.log((F32(1) - y) * (F32(1) + y))  # -inf at x = 0 or 1: the run ignores floating-point errors
    v = F32(2) / (F32(np.pi) * F32(0.147)) + F32(0.5) * log
    v2 = F32(1) / F32(0.147) * log
    return (F32(np.sqrt(2)) * sign * np.sqrt(-v + np.sqrt(v * v - v2))).astype(F32)


def softmax(rows: np.ndarray) -> np.ndarray:
    e = np.exp(rows - rows.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(rows.dtype)


def softmax_zero(rows: np.ndarray) -> np.ndarray:
    """Softmax where values within 1e-7 of zero stay (about) zero instead of weighing exp(0)."""
    top = rows.max(axis=-1, keepdims=True)
    zero = np.abs(rows) <= F32(1e-7)
    e = np.where(zero, rows * np.exp(-top), np.exp(rows - top))
    total = np.where(zero, 0, e).sum(axis=-1, keepdims=True)
    return (e / total).astype(rows.dtype)


def transform(scores: np.ndarray, post: str) -> np.ndarray:
    """The post transform of rows of two or more scores, in float32 (NONE keeps the scores' type)."""
    if post == "NONE":
        return scores
    scores = scores.astype(F32, copy=False)
    if post == "LOGISTIC":
        return logistic(scores)
    if post == "SOFTMAX":
        return softmax(scores)
    if post == "SOFTMAX_ZERO":
        return softmax_zero(scores)
    return probit(scores)


def two_columns(score: np.ndarray, post: str, second: int) -> np.ndarray:
    """A binary classifier's one score per row made two columns, as onnxruntime writes them: `second` 0 or 1
    (positive weights) gives [1 - s, s], 2 or 3 (mixed weights) [-s, s]; after LOGISTIC both give
    [1 - logistic(s), logistic(s)]. PROBIT gives probit(s), any other `second` s: onnxruntime leaves the second
    column unwritten (whatever its buffer held), explorer writes 0."""
    s = score.astype(F32, copy=False)
    zero = np.zeros_like(s)
    if post == "PROBIT":
        return np.stack([probit(s), zero], axis=-1)
    if second not in (0, 1, 2, 3):
        return np.stack([s, zero], axis=-1)
    if post == "LOGISTIC":
        positive = logistic(s)
        return np.stack([F32(1) - positive, positive], axis=-1)
    return np.stack([F32(1) - s if second in (0, 1) else -s, s], axis=-1)


def feature_rows(op: Any, x: np.ndarray) -> np.ndarray:
    """X as float32 rows [N, F] (one row when X is [F]), as onnxruntime casts the inputs of its linear and SVM
    kernels."""
    if x.ndim not in (1, 2):
        raise op.error(f"X must be [N, F] (or one row [F]), got shape {x.shape}")
    return (x.reshape(1, -1) if x.ndim == 1 else x).astype(F32, copy=False)


def coefficient_rows(op: Any, coefficients: np.ndarray, rows: int, features: int) -> np.ndarray:
    """The coefficients as [rows, features], refused when their count does not fit X's features."""
    if coefficients.size != rows * features:
        raise op.error(f"{coefficients.size} coefficients do not make {rows} rows of X's {features} features")
    return coefficients.reshape(rows, features)


def floats_attr(op: Any, name: str) -> np.ndarray:
    """A FLOATS attribute as float32 (empty when not set)."""
    return np.asarray(op.attr(name) or [], dtype=F32)


def batched_scores(scores: np.ndarray, post: str, second: int = -1) -> np.ndarray:
    """onnxruntime's scores update of linear and SVM models: rows of two or more scores transformed; one score
    per row only PROBIT transforms, or is made two columns by `second` (see two_columns)."""
    if scores.shape[1] > 1:
        return transform(scores, post)
    if second >= 0:
        return two_columns(scores[:, 0], post, second)
    return probit(scores) if post == "PROBIT" else scores


def refuse_deprecated(op: Any) -> None:
    """Refuses a node whose operator the model's opset marks deprecated (as onnxruntime does)."""
    if op.schema is not None and op.schema.deprecated:
        raise op.error(f"{op.op_type} is deprecated in {op.domain} {op.opset}; TreeEnsemble replaces it")


def check_transform(post: str, op: Any) -> str:
    if post not in TRANSFORMS:
        raise op.error(f"post_transform {post!r} is not one of {', '.join(TRANSFORMS)}")
    return post


def labels_of(op: Any, strings: str, ints: str) -> tuple[np.ndarray, bool]:
    """The class labels a node sets (string ones as an object array, else int64) and whether they are strings."""
    texts = op.attr(strings)
    if texts:
        out = np.empty(len(texts), dtype=object)
        out[:] = [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in texts]
        return out, True
    return np.asarray(op.attr(ints) or [], dtype=np.int64), False
