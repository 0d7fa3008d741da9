"""Feature preprocessing of ai.onnx.ml: Normalizer, Scaler, Binarizer, Imputer, OneHotEncoder,
ArrayFeatureExtractor and FeatureVectorizer, as onnxruntime computes them.

Normalizer divides each row of [N, C] (or the vector [C]) by the max, the sum of |x| or the L2 norm, in float32;
a zero norm leaves the values as they are. Scaler is (x - offset) * scale per feature (offset and scale of one
value each, or one per feature), in float32 (float64 for float64 X). Binarizer gives 1 where x > threshold,
else 0 (NaN too). Imputer replaces the values equal to the replaced value (NaN matching NaN) by the imputed one
of their feature, or the first when the imputed values are not one per feature. OneHotEncoder appends an axis of
categories (numbers truncated to int64 before the lookup); an unknown category gives zeros, or an error with
zeros=0. ArrayFeatureExtractor picks indices along the last axis ([1, k] for a vector). FeatureVectorizer
concatenates its inputs' rows, each cut or padded with zeros to its `inputdimensions`."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .ml_scores import F32, floats_attr
from .strings import text

DOMAIN = "ai.onnx.ml"


def _feature_axis(op: Any, x: np.ndarray, most: int = 64) -> int:
    if not 1 <= x.ndim <= most:
        raise op.error(f"X must be [N, C] or [C], got shape {x.shape}" if most == 2 else
                       "X must have at least one axis")
    return 0 if x.ndim == 1 else 1


def normalizer_kernel(op: OpNode) -> PlainKernel:
    norm = op.get_str("norm")
    if norm not in ("MAX", "L1", "L2"):
        raise op.error(f"norm {norm!r} is not one of MAX, L1, L2")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        axis = _feature_axis(op, x, most=2)
        values = x.astype(F32)
        if norm == "MAX":
            # NaN is skipped, as std::max(max, NaN) keeps max
            scale = np.fmax.reduce(values, axis=axis, keepdims=True, initial=np.finfo(F32).min)
        elif norm == "L1":
            scale = np.abs(values).sum(axis=axis, keepdims=True, dtype=F32)
        else:
            squares = (x * x).astype(F32)
            total = squares.sum(axis=axis, keepdims=True, dtype=F32)
            root = np.sqrt(squares / total) * np.where(x < 0, F32(-1), F32(1))  # 0 / 0 where total is 0
            return (np.where(total != 0, root, values).astype(F32),)
        return (np.where(scale != 0, values / scale, values).astype(F32),)

    return run


def scaler_kernel(op: OpNode) -> PlainKernel:
    scale, offset = floats_attr(op, "scale"), floats_attr(op, "offset")
    if scale.size == 0 or scale.size != offset.size:
        raise op.error(f"scale ({scale.size} values) and offset ({offset.size}) must be set and of one length")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        width = x.shape[_feature_axis(op, x)]
        if scale.size not in (1, width):
            raise op.error(f"scale and offset need 1 or {width} values (X's features), got {scale.size}")
        work = np.float64 if x.dtype == np.float64 else F32
        flat = x.reshape(-1).astype(work)
        # onnxruntime pairs element i with feature i % width, whatever the rank
        where = np.arange(flat.size) % width if scale.size > 1 else np.zeros(flat.size, np.int64)
        return (((flat - offset[where].astype(work)) * scale[where].astype(work)).astype(F32).reshape(x.shape),)

    return run


def binarizer_kernel(op: OpNode) -> PlainKernel:
    threshold = F32(op.get_float("threshold"))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        limit = x.dtype.type(threshold) if x.dtype.kind == "f" else threshold
        return ((x > limit).astype(x.dtype),)

    return run


def imputer_kernel(op: OpNode) -> PlainKernel:
    floats = floats_attr(op, "imputed_value_floats")
    ints = np.asarray(op.attr("imputed_value_int64s") or [], dtype=np.int64)
    if bool(floats.size) == bool(ints.size):
        raise op.error("exactly one of imputed_value_floats and imputed_value_int64s must be set")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        width = x.shape[_feature_axis(op, x)]
        if x.dtype.kind == "f":
            imputed, replaced = floats, F32(op.get_float("replaced_value_float"))
        else:
            imputed, replaced = ints, op.get_int("replaced_value_int64")
        if imputed.size == 0:
            raise op.error(f"X is {x.dtype}: it takes imputed_value_"
                           f"{'floats' if x.dtype.kind == 'f' else 'int64s'}")
        flat = x.reshape(-1)
        hit = (np.isnan(flat) if np.isnan(replaced) else flat == replaced) if x.dtype.kind == "f" else \
            flat == replaced
        per = imputed[np.arange(flat.size) % width] if imputed.size == width else imputed[np.zeros(flat.size, int)]
        return (np.where(hit, per.astype(x.dtype), flat).reshape(x.shape),)

    return run


def one_hot_encoder_kernel(op: OpNode) -> PlainKernel:
    words, numbers = op.attr("cats_strings") or [], op.attr("cats_int64s") or []
    if bool(words) == bool(numbers):
        raise op.error("exactly one of cats_int64s and cats_strings must be set")
    position = {(text(w) if words else int(w)): k for k, w in enumerate(words or numbers)}  # the last one wins
    count, zeros = len(words or numbers), bool(op.get_int("zeros"))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        flat = x.reshape(-1)
        keys = [text(v) for v in flat] if x.dtype.kind in "OUS" else np.trunc(flat).astype(np.int64).tolist()
        found = np.array([position.get(k, -1) for k in keys], dtype=np.int64)
        if not zeros and (found < 0).any():
            raise op.error(f"category {keys[int(np.argmax(found < 0))]!r} is unknown and zeros=0")
        out = np.zeros((flat.size, count), F32)
        rows = np.flatnonzero(found >= 0)
        out[rows, found[rows]] = 1
        return (out.reshape(x.shape + (count,)),)

    return run


def array_feature_extractor_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, indices = args
        if x.ndim == 0:
            raise op.error("X must have at least one axis")
        picks = indices.reshape(-1)
        if picks.size == 0 or (picks < 0).any() or (picks >= x.shape[-1]).any():
            raise op.error(f"Y must hold indices in [0, {x.shape[-1]}), got {picks.tolist()}")
        out = np.take(x, picks, axis=-1)
        return (out.reshape(1, -1) if x.ndim == 1 else out,)

    return run


def feature_vectorizer_kernel(op: OpNode) -> PlainKernel:
    widths = op.get_ints("inputdimensions") or []

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        if len(args) != len(widths):
            raise op.error(f"{len(args)} inputs but inputdimensions has {len(widths)} values")
        rows = 1 if args[0].ndim <= 1 else args[0].shape[0]
        out = np.zeros((rows, sum(widths)), F32)
        start = 0
        for x, width in zip(args, widths):
            block = x.reshape(1, -1) if x.ndim <= 1 else x.reshape(x.shape[0], -1)
            if block.shape[0] != rows:
                raise op.error(f"the inputs have {rows} and {block.shape[0]} rows")
            kept = min(width, block.shape[1])
            out[:, start:start + kept] = block[:, :kept]
            start += width
        return (out,)

    return run


KERNELS: dict[str, KernelFactory] = {
    "ArrayFeatureExtractor": array_feature_extractor_kernel,
    "Binarizer": binarizer_kernel,
    "FeatureVectorizer": feature_vectorizer_kernel,
    "Imputer": imputer_kernel,
    "Normalizer": normalizer_kernel,
    "OneHotEncoder": one_hot_encoder_kernel,
    "Scaler": scaler_kernel,
}
