"""SVMClassifier and SVMRegressor (ai.onnx.ml 1) as libsvm and onnxruntime compute them, in float32.

With support vectors (SVC), each row's kernel values against them (LINEAR x.v, POLY (gamma x.v + coef0)^degree,
RBF exp(-gamma |x - v|^2), SIGMOID tanh(gamma x.v + coef0)) give one score per pair of classes i < j (one-vs-one:
class i's coefficients in row j - 1, class j's in row i, plus rho); each score votes for i when positive, else
for j, and the label is the class with most votes. With prob_a and prob_b, the pairwise scores become Platt
probabilities (1 - logistic(A s + B), clipped to [1e-7, 1 - 1e-7]) coupled into class probabilities by libsvm's
`multiclass_probability` (Wu, Lin and Weng's second method: 100 rounds at most, every row until its error is
below 0.005 / classes). Without support vectors (liblinear), scores are X times the coefficients plus rho[0].
The regressor sums its kernel values times the coefficients plus rho[0] (one_class: the sign, as 1 or -1)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...budgets import SVM_CHUNK_ELEMENTS
from .base import KernelFactory, OpNode, PlainKernel
from .ml_scores import (
    F32,
    batched_scores,
    check_transform,
    coefficient_rows,
    feature_rows,
    floats_attr,
    labels_of,
    logistic,
    probit,
)

DOMAIN = "ai.onnx.ml"
KERNEL_TYPES = ("LINEAR", "POLY", "RBF", "SIGMOID")


def _kernel(op: OpNode) -> Any:
    """fn(x [N, F], vectors [V, F]) -> [N, V] float32 kernel values."""
    kind = op.get_str("kernel_type")
    if kind not in KERNEL_TYPES:
        raise op.error(f"kernel_type {kind!r} is not one of {', '.join(KERNEL_TYPES)}")
    params = list(floats_attr(op, "kernel_params")) + [F32(0)] * 3
    gamma, coef0, degree = (F32(p) for p in params[:3])

    def apply(x: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        if kind == "RBF":
            # the differences laid out [feature, row, vector], C-contiguous: the sum over the features adds whole
            # planes in the features' order, as onnxruntime's loop adds them, where a sum over a short last axis
            # runs a strided loop per (row, vector) at ten times the cost
            step = max(1, SVM_CHUNK_ELEMENTS // max(1, vectors.size))
            columns = np.ascontiguousarray(vectors.T)[:, None, :]
            parts = []
            for k in range(0, len(x), step):
                differences = np.subtract(np.ascontiguousarray(x[k:k + step].T)[:, :, None], columns)
                np.multiply(differences, differences, out=differences)
                parts.append(differences.sum(axis=0))
            squared = np.concatenate(parts) if len(parts) > 1 else parts[0] if parts else \
                np.zeros((0, len(vectors)), F32)
            return np.exp(-gamma * squared).astype(F32, copy=False)
        dot = x @ vectors.T
        if kind == "LINEAR":
            return dot
        value = gamma * dot + coef0
        return (value ** degree if kind == "POLY" else np.tanh(value)).astype(F32)

    return apply


def _vectors(op: OpNode, x: np.ndarray, vectors: np.ndarray, count: int) -> np.ndarray:
    if count == 0 or vectors.size != count * x.shape[1]:
        raise op.error(f"{vectors.size} support vector values do not make {count} vectors of X's "
                       f"{x.shape[1]} features")
    return vectors.reshape(count, x.shape[1])


def pairwise(kernels: np.ndarray, coefficients: np.ndarray, per_class: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """One-vs-one scores [N, pairs] (pairs i < j in order), summed in float64 as onnxruntime sums them."""
    starts = np.r_[0, np.cumsum(per_class)[:-1]]
    k64, c64 = kernels.astype(np.float64), coefficients.astype(np.float64)
    scores, index = [], 0
    for i in range(len(per_class) - 1):
        own_i = slice(starts[i], starts[i] + per_class[i])
        for j in range(i + 1, len(per_class)):
            own_j = slice(starts[j], starts[j] + per_class[j])
            total = k64[:, own_i] @ c64[j - 1, own_i] + k64[:, own_j] @ c64[i, own_j] + rho[index]
            scores.append(total.astype(F32))
            index += 1
    return np.stack(scores, axis=1) if scores else np.zeros((len(kernels), 0), F32)


def coupled_probabilities(pair_probability: np.ndarray, classes: int) -> np.ndarray:
    """libsvm's multiclass_probability for every row at once (float32, onnxruntime's order of operations):
    `pair_probability` [N, pairs] is P(i beats j) for i < j."""
    n = len(pair_probability)
    r = np.zeros((n, classes, classes), F32)
    index = 0
    for i in range(classes - 1):
        for j in range(i + 1, classes):
            r[:, i, j] = pair_probability[:, index]
            r[:, j, i] = F32(1) - pair_probability[:, index]
            index += 1
    q = -r.transpose(0, 2, 1) * r  # q[i, j] = -r[j, i] r[i, j] off the diagonal
    diagonal = (r ** 2).sum(axis=1)  # sum over j != i of r[j, i]^2 (r[i, i] is 0)
    idx = np.arange(classes)
    q[:, idx, idx] = diagonal
    p = np.full((n, classes), F32(1) / F32(classes), F32)
    eps = F32(0.005) / F32(classes)
    active = np.ones(n, dtype=bool)
    for _ in range(100):
        qp = np.einsum("nij,nj->ni", q, p).astype(F32)
        pqp = (p * qp).sum(axis=1, dtype=F32)
        active &= np.abs(qp - pqp[:, None]).max(axis=1, initial=0) >= eps
        if not active.any():
            break
        for i in range(classes):
            diff = np.where(active, (-qp[:, i] + pqp) / q[:, i, i], F32(0)).astype(F32)
            p[:, i] += diff
            one = F32(1) + diff
            pqp = ((pqp + diff * (diff * q[:, i, i] + F32(2) * qp[:, i])) / one / one).astype(F32)
            qp = ((qp + diff[:, None] * q[:, i, :]) / one[:, None]).astype(F32)
            p = (p / one[:, None]).astype(F32)
    return p


def svm_classifier_kernel(op: OpNode) -> PlainKernel:
    post = check_transform(op.get_str("post_transform"), op)
    kernel = _kernel(op)
    labels, _ = labels_of(op, "classlabels_strings", "classlabels_ints")
    classes = max(labels.size, 1)
    per_class = np.asarray(op.attr("vectors_per_class") or [], dtype=np.int64)
    vectors, coefficients, rho = (floats_attr(op, name) for name in ("support_vectors", "coefficients", "rho"))
    prob_a, prob_b = floats_attr(op, "prob_a"), floats_attr(op, "prob_b")
    if prob_a.size != prob_b.size:
        raise op.error("prob_a and prob_b differ in length")
    if labels.size == 0 or coefficients.size == 0:
        raise op.error("coefficients and classlabels_ints or classlabels_strings must be set")
    svc = int(per_class.sum()) > 0
    pairs = classes * (classes - 1) // 2
    if svc and (per_class.size != classes or coefficients.size != (classes - 1) * per_class.sum()):
        raise op.error(f"vectors_per_class ({per_class.size} classes) and {coefficients.size} coefficients do not "
                       f"fit {classes} classes of {int(per_class.sum())} support vectors")
    if svc and rho.size < pairs or (prob_a.size and prob_a.size < pairs):
        raise op.error(f"{classes} classes need {pairs} values of rho (and of prob_a, prob_b when set)")
    positive = bool((coefficients >= 0).all())

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = feature_rows(op, args[0])
        if not svc:
            scores = x @ coefficient_rows(op, coefficients, classes, x.shape[1]).T + (rho[0] if rho.size else F32(0))
            best = scores.argmax(axis=1) if scores.size else np.zeros(0, np.int64)
            return _linear_label(labels, scores, best, positive), batched_scores(scores.astype(F32), post)
        count = int(per_class.sum())
        kernels = kernel(x, _vectors(op, x, vectors, count))
        scores = pairwise(kernels, coefficients.reshape(classes - 1, count), per_class, rho)
        votes = np.zeros((len(x), classes), np.int64)
        index = 0
        for i in range(classes - 1):
            for j in range(i + 1, classes):
                np.add.at(votes, (np.arange(len(x)), np.where(scores[:, index] > 0, i, j)), 1)
                index += 1
        label = labels[votes.argmax(axis=1)] if len(x) else labels[:0]
        if prob_a.size:
            platt = F32(1) - logistic(scores * prob_a[:pairs] + prob_b[:pairs])
            clipped = np.clip(platt, F32(1e-7), F32(1) - F32(1e-7)).astype(F32)
            return label, batched_scores(coupled_probabilities(clipped, classes), post)
        second = (2 if post == "NONE" else 0) if classes <= 2 else -1
        return label, batched_scores(scores, post, second)

    return run


def _linear_label(labels: np.ndarray, scores: np.ndarray, best: np.ndarray, positive: bool) -> np.ndarray:
    """A liblinear classifier's label: with two classes the second when its top score says so (>= 0.5 with
    weights all positive, > 0 otherwise), else the top-scoring class."""
    if labels.size != 2 or not scores.size:
        return labels[best] if scores.size else labels[:0]
    top = scores.max(axis=1)
    second = (top >= 0.5) if positive else (top > 0)
    return labels[np.where(second, 1, best)]


def svm_regressor_kernel(op: OpNode) -> PlainKernel:
    post = check_transform(op.get_str("post_transform"), op)
    kernel = _kernel(op)
    count, one_class = op.get_int("n_supports"), bool(op.get_int("one_class"))
    vectors, coefficients, rho = (floats_attr(op, name) for name in ("support_vectors", "coefficients", "rho"))
    if coefficients.size == 0 or rho.size == 0:
        raise op.error("coefficients and rho must be set")
    if count > 0 and coefficients.size != count:
        raise op.error(f"{coefficients.size} coefficients for {count} support vectors")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = feature_rows(op, args[0])
        if count > 0:
            values = kernel(x, _vectors(op, x, vectors, count)) @ coefficients + rho[0]
        else:
            values = x @ coefficient_rows(op, coefficients, 1, x.shape[1])[0] + rho[0]
        values = values.astype(F32).reshape(-1, 1)
        if one_class:
            values = np.where(values > 0, F32(1), F32(-1))
        return (probit(values) if post == "PROBIT" else values,)

    return run


KERNELS: dict[str, KernelFactory] = {
    "SVMClassifier": svm_classifier_kernel,
    "SVMRegressor": svm_regressor_kernel,
}
