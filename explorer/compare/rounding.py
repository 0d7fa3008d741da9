"""The one rule every comparison judges a value by (compare, its sweeps, the optimizer's proofs): the value's own
precision (precision.py), widened by the rounding its operation can make from inputs that agree: an accumulation
(MatMul, Conv, Gemm, a reduction) by its type's epsilon times the magnitudes it sums (Σ|a|·|b| over the reduced
axis, as Polygraphy and onnxruntime's own tests bound accumulations), a normalized tensor by its own scale for
values near zero (a value 1e-5 out of a tensor of unit scale carries the tensor's rounding, not its own)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .precision import Tolerance
from .stats import OutputDiff, compare_values

# operators whose every output element is a sum of products of their inputs' elements: running them on the
# inputs' magnitudes gives the sum of |a|·|b| each output element accumulates
ACCUMULATING = frozenset({
    "MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum", "ReduceSum", "ReduceMean", "ReduceL1", "CumSum",
    "AveragePool", "GlobalAveragePool", "FusedMatMul", "FusedConv", "FusedGemm", "MatMulNBits", "Attention",
    "MultiHeadAttention",
})
# operators whose output is a tensor divided by its own spread: values near zero carry the tensor's rounding
NORMALIZING = frozenset({
    "BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization",
    "RMSNormalization", "MeanVarianceNormalization", "LpNormalization", "SkipLayerNormalization",
    "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization",
    "Softmax", "LogSoftmax",
})
ROUNDINGS = 2.0  # both sides round: an accumulation's bound counts its epsilon twice


def slack(op_type: str, reference: Any, tolerance: Tolerance, magnitude: Any = None) -> Any:
    """What the operation's rounding adds to the absolute tolerance of its output `reference`: the tensor's
    scale for a normalizing operator, epsilon · the magnitudes accumulated (`magnitude`: the operator run on its
    inputs' absolute values) for an accumulating one; 0 for anything else."""
    extra: Any = 0.0
    if not isinstance(reference, np.ndarray) or reference.dtype.kind not in "fcV" or not reference.size:
        return extra
    if op_type in NORMALIZING:
        finite = np.abs(np.nan_to_num(reference.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0))
        extra = tolerance.rtol * float(np.sqrt(np.mean(finite * finite)))
    if magnitude is not None and op_type in ACCUMULATING:
        size = np.shape(magnitude)
        if size == reference.shape or np.ndim(magnitude) == 0:
            mag = np.nan_to_num(np.abs(np.asarray(magnitude, dtype=np.float64)), nan=0.0, posinf=np.inf)
            extra = extra + ROUNDINGS * tolerance.eps * mag
    return extra


def assess(name: str, ours: Any, theirs: Any, tolerance: Tolerance, op_type: str = "",
          magnitude: Any = None) -> OutputDiff:
    """`ours` against the reference `theirs`, produced by an `op_type` node, within `tolerance` and the rounding
    that operation can make (`magnitude`: see slack). Quantized integers (precision "quantized") may differ by
    the tolerance's steps; other integers must be equal."""
    if tolerance.precision == "quantized" and all(isinstance(v, np.ndarray) and v.dtype.kind in "iu"
                                                  for v in (ours, theirs)):
        ours, theirs = ours.astype(np.float64), theirs.astype(np.float64)
    return compare_values(name, ours, theirs, tolerance.rtol, tolerance.atol,
                          slack(op_type, theirs, tolerance, magnitude))
