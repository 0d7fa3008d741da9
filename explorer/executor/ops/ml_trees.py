"""Tree ensembles of ai.onnx.ml: TreeEnsembleRegressor and TreeEnsembleClassifier (1 and 3; 3 adds the double
`*_as_tensor` attributes) and TreeEnsemble (5: leaves apart from nodes, BRANCH_MEMBER, output of X's type).

Every row goes down every tree at once (ml_forest.leaves); leaf weights are aggregated per target with SUM,
AVERAGE, MIN or MAX, base values added and the post transform applied as onnxruntime does, its quirks
included: a target no leaf of a row touched scores 0 whatever its base value; with one target only PROBIT is
applied; the binary classifier's second column and label follow onnxruntime's rules (weights all positive or
mixed, one base value or two). Comparisons run in float32, or float64 when X is float64."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...budgets import TREE_CHUNK_ELEMENTS
from .base import KernelFactory, OpNode, PlainKernel
from .ml_forest import Forest, forest_from_lists, forest_from_v5, leaves
from .ml_scores import F32, check_transform, labels_of, probit, refuse_deprecated, transform, two_columns

DOMAIN = "ai.onnx.ml"
AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
V5_TRANSFORMS = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")  # TreeEnsemble-5's integer codes


def _rows(op: OpNode, x: np.ndarray, forest: Forest) -> np.ndarray:
    if x.ndim not in (1, 2):
        raise op.error(f"X must be [N, F] (or one row [F]), got shape {x.shape}")
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    if forest.max_feature >= rows.shape[1]:
        raise op.error(f"a node reads feature {forest.max_feature} but X has {rows.shape[1]} features")
    return rows


def aggregate(forest: Forest, x: np.ndarray, how: str) -> tuple[np.ndarray, np.ndarray]:
    """(scores, touched) per row and target: the leaves' weights aggregated over the trees."""
    reached = leaves(forest, x)
    n, targets = x.shape[0], forest.weights.shape[1]
    sums = forest.leaf_sums
    if sums is not None and how in ("SUM", "AVERAGE") and reached.size * targets <= TREE_CHUNK_ELEMENTS:
        return sums[reached].sum(axis=1), np.ones((n, targets), dtype=bool)  # in one chunk: fewer NumPy calls
    scores = np.zeros((n, targets), dtype=forest.weights.dtype)
    if how in ("MIN", "MAX"):
        scores[:] = np.inf if how == "MIN" else -np.inf
    touched = np.zeros((n, targets), dtype=bool)
    step = max(1, TREE_CHUNK_ELEMENTS // max(1, n * targets))
    for start in range(0, reached.shape[1], step):
        part = reached[:, start:start + step]
        weights, touches = forest.weights[part], forest.touches[part]
        touched |= touches.any(axis=1)
        if how in ("SUM", "AVERAGE"):
            scores += weights.sum(axis=1)
        elif how == "MIN":
            scores = np.minimum(scores, np.where(touches, weights, np.inf).min(axis=1))
        else:
            scores = np.maximum(scores, np.where(touches, weights, -np.inf).max(axis=1))
    return np.where(touched, scores, 0).astype(scores.dtype), touched


def regress(scores: np.ndarray, touched: np.ndarray, how: str, n_trees: int, base: np.ndarray,
            post: str) -> np.ndarray:
    """A regressor's final scores as onnxruntime computes them (float32 after a transform, else the scores'
    type)."""
    if how == "AVERAGE":
        scores = scores / scores.dtype.type(max(n_trees, 1))
    if scores.shape[1] == 1:
        origin = base[0] if base.size == 1 else 0
        value = scores + scores.dtype.type(origin) if how in ("SUM", "AVERAGE") else \
            np.where(touched, scores + scores.dtype.type(origin), scores.dtype.type(origin))
        return probit(value) if post == "PROBIT" else value
    if base.size == scores.shape[1]:
        scores = scores + base.astype(scores.dtype)
    return transform(np.where(touched, scores, 0), post)


def _base(op: OpNode, count: int) -> np.ndarray:
    """base_values (or base_values_as_tensor): one per target or class, or none; a binary classifier may give
    one (as converters of gradient boosting write it)."""
    base = op.attr("base_values_as_tensor")
    if base is not None and np.asarray(base).size and op.attr("base_values"):
        raise op.error("base_values and base_values_as_tensor are both set")
    base = np.asarray(base if base is not None and np.asarray(base).size else op.attr("base_values") or [])
    base = base.reshape(-1).astype(np.float64)
    binary = op.op_type == "TreeEnsembleClassifier" and count == 2
    if base.size not in (0, count) and not (binary and base.size == 1):
        raise op.error(f"base_values has {base.size} values; it needs 0 or {count}")
    return base


def _forests(build: Any) -> Any:
    """The forest for X's dtype (float64 thresholds for float64 X, else float32), built on first use."""
    built: dict[np.dtype, Forest] = {}

    def forest_for(x: np.ndarray) -> Forest:
        dtype = np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)
        if dtype not in built:
            built[dtype] = build(dtype)
        return built[dtype]

    return forest_for


def regressor_kernel(op: OpNode) -> PlainKernel:
    """TreeEnsembleRegressor-1/3: [N, n_targets] float32."""
    refuse_deprecated(op)
    how = op.get_str("aggregate_function")
    if how not in AGGREGATES:
        raise op.error(f"aggregate_function {how!r} is not one of {', '.join(AGGREGATES)}")
    post = check_transform(op.get_str("post_transform"), op)
    n_targets = op.get_int("n_targets", 0)
    if n_targets < 1:
        raise op.error(f"n_targets must be positive, got {n_targets}")
    base = _base(op, n_targets)
    forest_for = _forests(lambda dtype: forest_from_lists(op, dtype, n_targets, "target"))
    forest_for(np.zeros(0, np.float32))  # malformed trees are refused when the node is compiled

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        (x,) = args
        forest = forest_for(x)
        rows = _rows(op, x, forest).astype(forest.threshold.dtype, copy=False)
        scores, touched = aggregate(forest, rows, how)
        return (regress(scores, touched, how, forest.roots.size, base.astype(scores.dtype), post).astype(F32, copy=False),)

    return run


def tree_ensemble_kernel(op: OpNode) -> PlainKernel:
    """TreeEnsemble-5: [N, n_targets] of X's type."""
    code, post_code = op.get_int("aggregate_function"), op.get_int("post_transform")
    if not 0 <= code < len(AGGREGATES) or not 0 <= post_code < len(V5_TRANSFORMS):
        raise op.error(f"aggregate_function ({code}) must lie in [0, 3] and post_transform ({post_code}) in [0, 4]")
    how, post = AGGREGATES[code], V5_TRANSFORMS[post_code]
    forest_for = _forests(lambda dtype: forest_from_v5(op, dtype))
    forest_for(np.zeros(0, np.float32))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        (x,) = args
        forest = forest_for(x)
        rows = _rows(op, x, forest).astype(forest.threshold.dtype, copy=False)
        scores, touched = aggregate(forest, rows, how)
        empty = np.zeros(0)
        return (regress(scores, touched, how, forest.roots.size, empty, post).astype(x.dtype, copy=False),)

    return run


def classifier_kernel(op: OpNode) -> PlainKernel:
    """TreeEnsembleClassifier-1/3: labels [N] and scores [N, classes] float32."""
    refuse_deprecated(op)
    post = check_transform(op.get_str("post_transform"), op)
    labels, strings = labels_of(op, "classlabels_strings", "classlabels_int64s")
    if labels.size < 2:
        raise op.error(f"a classifier needs at least two class labels, got {labels.size}")
    base = _base(op, labels.size)
    forest_for = _forests(lambda dtype: forest_from_lists(op, dtype, labels.size, "class"))
    forest_for(np.zeros(0, np.float32))
    weights = np.asarray(op.attr("class_weights_as_tensor") if op.attr("class_weights_as_tensor") is not None
                         else op.attr("class_weights") or [], dtype=np.float64)
    binary = labels.size == 2 and len(set(op.attr("class_ids") or [])) == 1
    positive = bool((weights >= 0).all())

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        (x,) = args
        forest = forest_for(x)
        rows = _rows(op, x, forest).astype(forest.threshold.dtype, copy=False)
        scores, touched = aggregate(forest, rows, "SUM")  # a classifier always sums
        base_t = base.astype(scores.dtype)
        if labels.size > 2:
            return _multiclass(op, scores, touched, base_t, labels, post)
        return _binary(scores, touched, base_t, labels, strings, post, binary, positive)

    return run


def _multiclass(op: OpNode, scores: np.ndarray, touched: np.ndarray, base: np.ndarray, labels: np.ndarray,
                post: str) -> tuple[np.ndarray, np.ndarray]:
    k = min(base.size, scores.shape[1])
    scores[:, :k] += base[:k]
    touched[:, :k] = True
    if scores.size and not touched.any(axis=1).all():
        raise op.error("a row reached no leaf with a weight for any class")
    best = np.where(touched, scores, -np.inf).argmax(axis=1) if scores.size else np.zeros(0, np.int64)
    return labels[best], transform(np.where(touched, scores, 0), post).astype(F32)


def _binary(scores: np.ndarray, touched: np.ndarray, base: np.ndarray, labels: np.ndarray, strings: bool,
            post: str, binary: bool, positive: bool) -> tuple[np.ndarray, np.ndarray]:
    """Two classes, as onnxruntime's TreeAggregatorClassifier finalizes them row by row (vectorized): which
    columns it keeps, the score the label is read from and how the second column is made."""
    s0, s1, t0, t1 = scores[:, 0].copy(), scores[:, 1].copy(), touched[:, 0].copy(), touched[:, 1].copy()
    second = np.full(s0.shape, -1)
    if base.size == 2:
        s1 = np.where(t1, base[1] + s0, s1 + base[1])
        s0 = np.where(t1, -s1, s0 + base[0])
    elif base.size == 1:
        s0 = s0 + base[0]
    elif base.size == 0:
        second[:] = 3
    paired = t1 if base.size < 2 else np.ones_like(t1)  # rows that keep both columns
    weight = np.where(paired & t1, s1, np.where(t0, s0, 0))
    if binary:
        high = weight > 0.5 if positive else weight > 0
        second = np.where(high, 0 if positive else 2, 1 if positive else 3)
        label = labels[high.astype(np.int64)]
    else:  # onnxruntime's fixed positive and negative labels: 1 and 0 (for string labels, their indices)
        label = (labels if strings else np.array([0, 1], dtype=np.int64))[(weight > 0).astype(np.int64)]
    both = transform(np.stack([np.where(t0, s0, 0), np.where(t1, s1, 0)], axis=-1), post)
    out = np.empty((s0.size, 2), dtype=F32)
    out[paired] = both[paired]
    single = np.where(t0, s0, 0)[~paired]
    for code in np.unique(second[~paired]):
        pick = ~paired & (second == code)
        out[pick] = two_columns(single[second[~paired] == code], post, int(code))
    return label, out


KERNELS: dict[str, KernelFactory] = {
    "TreeEnsemble": tree_ensemble_kernel,
    "TreeEnsembleClassifier": classifier_kernel,
    "TreeEnsembleRegressor": regressor_kernel,
}
