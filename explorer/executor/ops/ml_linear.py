"""LinearClassifier and LinearRegressor (ai.onnx.ml 1): X [N, F] (any numeric type, computed in float32 as
onnxruntime computes it) times the coefficients [targets, F], plus the intercepts.

The classifier's label is the first highest score's class; with one score per row (two labels, as onnxruntime
requires), the second label when the score is positive, and the two columns [1 - s, s]. `multi_class` changes
nothing (onnxruntime reads it for no purpose either)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .ml_scores import (
    F32,
    batched_scores,
    check_transform,
    coefficient_rows,
    feature_rows,
    floats_attr,
    labels_of,
)

DOMAIN = "ai.onnx.ml"


def linear_classifier_kernel(op: OpNode) -> PlainKernel:
    post = check_transform(op.get_str("post_transform"), op)
    coefficients, intercepts = floats_attr(op, "coefficients"), floats_attr(op, "intercepts")
    labels, _ = labels_of(op, "classlabels_strings", "classlabels_ints")
    if labels.size == 0:
        raise op.error("classlabels_ints or classlabels_strings must be set")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = feature_rows(op, args[0])
        targets = intercepts.size or max(coefficients.size // max(x.shape[1], 1), 1)
        scores = x @ coefficient_rows(op, coefficients, targets, x.shape[1]).T
        if intercepts.size:
            scores = scores + intercepts
        if targets == 1:
            if labels.size != 2:
                raise op.error(f"one score per row (binary classification) needs exactly 2 class labels, "
                               f"got {labels.size}")
            label = labels[(scores[:, 0] > 0).astype(np.int64)]
        else:
            if targets > labels.size:
                raise op.error(f"{targets} scores per row but {labels.size} class labels")
            label = labels[scores.argmax(axis=1)] if scores.size else labels[:0]
        return label, batched_scores(scores.astype(F32, copy=False), post, 1 if targets == 1 else -1)

    return run


def linear_regressor_kernel(op: OpNode) -> PlainKernel:
    post = check_transform(op.get_str("post_transform"), op)
    targets = op.get_int("targets")
    coefficients, intercepts = floats_attr(op, "coefficients"), floats_attr(op, "intercepts")
    if targets < 1:
        raise op.error(f"targets must be positive, got {targets}")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = feature_rows(op, args[0])
        scores = x @ coefficient_rows(op, coefficients, targets, x.shape[1]).T
        if intercepts.size == targets:  # onnxruntime drops intercepts of another length
            scores = scores + intercepts
        return (batched_scores(scores.astype(F32, copy=False), post),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "LinearClassifier": linear_classifier_kernel,
    "LinearRegressor": linear_regressor_kernel,
}
