"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (explorer/executor/ops/losses.py) at every version:
every reduction, with and without weights, ignore_index in and out of the classes, 2-D to 4-D inputs, both
target types, SoftmaxCrossEntropyLoss's log_prob output; targets outside the classes refused."""
from __future__ import annotations

import numpy as np

from .gen import rng, schema_types, since_versions, values
from .harness import Case, Cast

BFLOAT16 = Cast(np.float32, "onnxruntime lacks bfloat16 here: the bfloat16 values computed in float32 and the loss "
                            "rounded to bfloat16, compared at bfloat16's precision")
OPS = ("NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss")
SHAPES = ((5, 3), (2, 4, 3), (2, 3, 2, 2))  # (N, C, d1, ..., dk)
HALF_TOL = {np.dtype(np.float16): (4e-3, 4e-3)}
BFLOAT16_TOL = (1e-2, 1e-2)


def spec_log_prob(scores: np.ndarray) -> np.ndarray:
    """The log of the softmax along the class axis, in float64, rounded to the scores' type."""
    wide = scores.astype(np.float64)
    shifted = wide - wide.max(axis=1, keepdims=True)
    return (shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))).astype(scores.dtype)


def spec_loss(op: str, x: np.ndarray, target: np.ndarray, weight: np.ndarray | None, reduction: str,
              ignore_index: int | None) -> np.ndarray:
    """The spec's loss, element by element in float64 (SoftmaxCrossEntropyLoss's log-probabilities rounded to the
    input's type first, as its log_prob output holds them), rounded to the input's type."""
    wide = (spec_log_prob(x) if op == "SoftmaxCrossEntropyLoss" else x).astype(np.float64)
    loss, weights = np.zeros(target.shape), np.zeros(target.shape)
    for where in np.ndindex(*target.shape):
        c = int(target[where])
        if c != ignore_index:
            weights[where] = 1.0 if weight is None else float(weight[c])
            loss[where] = -wide[(where[0], c, *where[1:])] * weights[where]
    total = {"none": loss, "sum": loss.sum(), "mean": loss.sum() / weights.sum() if weights.sum() else np.nan}
    return np.asarray(total[reduction]).astype(x.dtype)


def _inputs(op: str, r: np.random.Generator, shape: tuple[int, ...], dtype: object,
            tind: object) -> tuple[np.ndarray, np.ndarray]:
    """Scores (SoftmaxCrossEntropyLoss) or log-probabilities (NegativeLogLikelihoodLoss), and targets."""
    classes = shape[1]
    x = values(r, shape, np.float32, -3, 3)
    if op == "NegativeLogLikelihoodLoss":
        x = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    target = r.integers(0, classes, (shape[0], *shape[2:])).astype(tind)
    return x.astype(dtype), target


def _ignored(target: np.ndarray, index: int, r: np.random.Generator) -> np.ndarray:
    """The target with about a third of its entries set to `index`."""
    return np.where(r.random(target.shape) < 0.35, index, target).astype(target.dtype)


def _case(op: str, version: int, inputs: list[np.ndarray], attrs: dict, outputs: int = 1) -> Case:
    """A case of the sweep, with its judge: onnxruntime, at half precision's tolerance for float16; for bfloat16,
    onnxruntime in float32 or, where the spec's own function body cannot run it, the spec's values."""
    dtype = inputs[0].dtype
    if dtype in HALF_TOL:
        return Case(op, version, inputs, attrs, outputs=outputs, dtype_sweep=True, tol=HALF_TOL[dtype])
    if dtype.kind != "V":
        return Case(op, version, inputs, attrs, outputs=outputs, dtype_sweep=True)
    if op == "NegativeLogLikelihoodLoss":
        return Case(op, version, inputs, attrs, outputs=outputs, dtype_sweep=True, cast=BFLOAT16, tol=BFLOAT16_TOL)
    weight = inputs[2] if len(inputs) > 2 else None
    loss = spec_loss(op, inputs[0], inputs[1], weight, attrs.get("reduction", "mean"), attrs.get("ignore_index"))
    return Case(op, version, inputs, attrs, outputs=outputs, dtype_sweep=True, tol=BFLOAT16_TOL,
                expected=[loss, spec_log_prob(inputs[0])][:outputs], reason="onnxruntime runs the spec's function "
                "body, whose NegativeLogLikelihoodLoss-13 takes no bfloat16: the spec's values")


def sweep_cases(op: str, version: int) -> list[Case]:
    """Every reduction, weights or not, ignore_index or not, on each shape, element type and target type."""
    found = []
    for dtype in schema_types(op, version, exotic=True):
        for tind in schema_types(op, version, "Tind"):
            r = rng(op, version, str(dtype), str(tind))
            for shape in SHAPES:
                x, target = _inputs(op, r, shape, dtype, tind)
                weight = values(r, (shape[1],), np.float32, 0.1, 2).astype(dtype)
                for reduction in (None, "none", "sum", "mean"):
                    attrs = {} if reduction is None else {"reduction": reduction}
                    for w in (None, weight):
                        inputs = [x, target] if w is None else [x, target, w]
                        found.append(_case(op, version, inputs, attrs))
                        ignored = _ignored(target, 1, r)  # a class: its targets count nowhere
                        found.append(_case(op, version, [x, ignored, *inputs[2:]], {**attrs, "ignore_index": 1}))
                    if op == "SoftmaxCrossEntropyLoss":
                        found.append(_case(op, version, [x, target, weight], attrs, outputs=2))
    return found


def _empty(op: str, version: int, x: np.ndarray, target: np.ndarray) -> list[Case]:
    """An empty batch summed and unreduced (SoftmaxCrossEntropyLoss: onnxruntime's function body cannot reshape
    it, so the spec's values judge)."""
    if op == "NegativeLogLikelihoodLoss":
        return [Case(op, version, [x, target], {"reduction": "sum"}), Case(op, version, [x, target],
                                                                           {"reduction": "none"})]
    why = "onnxruntime's function body refuses to reshape an empty batch: the spec's values"
    return [Case(op, version, [x, target], {"reduction": "sum"}, expected=[np.array(0, x.dtype)], reason=why),
            Case(op, version, [x, target], {"reduction": "none"}, outputs=2, reason=why,
                 expected=[np.zeros(0, x.dtype), np.zeros(x.shape, x.dtype)])]


def edge_cases(op: str, version: int) -> list[Case]:
    """ignore_index outside the classes, every target ignored, empty batches, wide scores, refused targets."""
    r = rng(op, version, "edges")
    x, target = _inputs(op, r, (6, 4), np.float32, np.int64)
    weight = values(r, (4,), np.float32, 0.5, 2)
    found = [
        Case(op, version, [x, _ignored(target, -1, r)], {"ignore_index": -1, "reduction": "none"}),
        Case(op, version, [x, _ignored(target, -100, r), weight], {"ignore_index": -100}),
        Case(op, version, [x, target], {"ignore_index": 50, "reduction": "sum"}),
        Case(op, version, [x, np.full(6, 2, np.int64), weight], {"ignore_index": 2}),  # 0 / 0
        Case(op, version, [x, np.full(6, 2, np.int32)], {"ignore_index": 2, "reduction": "sum"}),
        *_empty(op, version, x[:0], target[:0]),
        Case(op, version, [x[:0], target[:0]], reason="the mean of no losses is 0 / 0 (as when every target is "
             "ignored); onnxruntime's ReduceMean of an empty tensor gives 0", expected=[np.array(np.nan, np.float32)]),
    ]
    if op == "SoftmaxCrossEntropyLoss":
        found.append(Case(op, version, [x * 1e4, target], {"reduction": "none"}, outputs=2))
    bad = target.copy()
    bad[2] = 4
    found.append(Case(op, version, [x, bad], error="the target holds 4, outside the 4 classes [0, 4)"))
    bad = bad.copy()
    bad[2] = -1
    found.append(Case(op, version, [x, bad], error="the target holds -1, outside the 4 classes"))
    found.append(Case(op, version, [x, bad], {"ignore_index": -2}, error="is not ignore_index (-2)"))
    found.append(Case(op, version, [x, target[:3]], error="the target has shape [3]"))
    found.append(Case(op, version, [x, target, weight[:3]], error="the weight has shape [3]"))
    found.append(Case(op, version, [x, target], {"reduction": "max"}, error="reduction 'max' is not one of"))
    return found


def cases() -> list[Case]:
    found = []
    for op in OPS:
        for version in since_versions(op):
            found += sweep_cases(op, version) + edge_cases(op, version)
    return found
