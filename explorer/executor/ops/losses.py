"""Training losses: NegativeLogLikelihoodLoss (12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13).

The input is (N, C, d1, ..., dk) with k >= 0, the target (N, d1, ..., dk) class indices, the optional weight
(C,). Each element's loss is -input[n, target, d...] * weight[target] (weight 1 without one), and 0 where the
target is `ignore_index`. `reduction` none gives those losses, sum their sum, mean (the default) their sum
divided by the sum of the weights of the targets not ignored (their count without weights): every target
ignored, or none at all, gives 0 / 0, NaN. A target outside [0, C) that is not `ignore_index` is refused
naming the value.

SoftmaxCrossEntropyLoss is that loss of the scores' LogSoftmax along the class axis (1), its optional second
output `log_prob`; the loss is computed from `log_prob` as the output type rounds it. float16 and bfloat16 are
computed in float32."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .shared import compute_dtype
from .softmax import FUNCTIONS

REDUCTIONS = ("none", "sum", "mean")


def _reduction(op: OpNode) -> str:
    reduction = op.get_str("reduction")
    if reduction not in REDUCTIONS:
        raise op.error(f"reduction {reduction!r} is not one of {', '.join(REDUCTIONS)}")
    return reduction


def _classes(target: np.ndarray, classes: int, ignore_index: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(each target as an index into the classes, 0 where ignored; where it is ignored), refusing any other
    target outside [0, classes)."""
    index = target.astype(np.int64)
    ignored = index == ignore_index if ignore_index is not None else np.zeros(index.shape, dtype=bool)
    outside = ~ignored & ((index < 0) | (index >= classes))
    if outside.any():
        bad = int(index[outside][0])
        also = "" if ignore_index is None else f" and is not ignore_index ({ignore_index})"
        raise ValueError(f"the target holds {bad}, outside the {classes} classes [0, {classes}){also}")
    return np.where(ignored, 0, index), ignored


def negative_log_likelihood(log_prob: np.ndarray, target: np.ndarray, weight: np.ndarray | None,
                            reduction: str, ignore_index: int | None) -> np.ndarray:
    """The loss of log-probabilities (N, C, d...) at their targets (N, d...), as the module's docstring says
    (the float16 and bfloat16 ones computed in float32)."""
    if log_prob.ndim < 2:
        raise ValueError(f"the input must be (N, C, d1, ..., dk), got shape {list(log_prob.shape)}")
    expected = (log_prob.shape[0], *log_prob.shape[2:])
    if target.shape != expected:
        raise ValueError(f"the target has shape {list(target.shape)}; an input of shape "
                         f"{list(log_prob.shape)} needs {list(expected)}")
    classes = log_prob.shape[1]
    if weight is not None and weight.shape != (classes,):
        raise ValueError(f"the weight has shape {list(weight.shape)}; it must be ({classes},), one per class")
    work = compute_dtype(log_prob.dtype)
    index, ignored = _classes(target, classes, ignore_index)
    if classes:
        picked = np.take_along_axis(log_prob.astype(work, copy=False), index[:, None], axis=1)[:, 0]
    else:  # no classes: every target is ignored (any other was refused)
        picked = np.zeros(index.shape, dtype=work)
    weights = np.ones(index.shape, dtype=work) if weight is None else weight.astype(work, copy=False)[index]
    weights = np.where(ignored, work.type(0), weights)
    loss = np.where(ignored, work.type(0), -picked * weights)
    if reduction == "sum":
        loss = loss.sum(dtype=work)
    elif reduction == "mean":
        loss = loss.sum(dtype=work) / weights.sum(dtype=work)
    return np.asarray(loss).astype(log_prob.dtype, copy=False)


def negative_log_likelihood_kernel(op: OpNode) -> PlainKernel:
    reduction, ignore_index = _reduction(op), op.attr("ignore_index")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        weight = args[2] if len(args) > 2 else None
        return (negative_log_likelihood(args[0], args[1], weight, reduction, ignore_index),)

    return run


def softmax_cross_entropy_kernel(op: OpNode) -> PlainKernel:
    reduction, ignore_index = _reduction(op), op.attr("ignore_index")
    log_softmax = FUNCTIONS["LogSoftmax"]

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        scores = args[0]
        if scores.ndim < 2:
            raise ValueError(f"the scores must be (N, C, d1, ..., dk), got shape {list(scores.shape)}")
        work = compute_dtype(scores.dtype)
        log_prob = log_softmax(scores.astype(work, copy=False), 1).astype(scores.dtype, copy=False) \
            if scores.size else np.empty_like(scores)
        weight = args[2] if len(args) > 2 else None
        return negative_log_likelihood(log_prob, args[1], weight, reduction, ignore_index), log_prob

    return run


KERNELS: dict[str, KernelFactory] = {
    "NegativeLogLikelihoodLoss": negative_log_likelihood_kernel,
    "SoftmaxCrossEntropyLoss": softmax_cross_entropy_kernel,
}
