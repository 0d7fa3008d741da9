"""The map operators of ai.onnx.ml: ZipMap (a [N, C] tensor to N maps {label: score}), DictVectorizer (a map to
a [1, vocabulary] row, absent keys 0 or "") and CastMap (a map of int64 keys to a [1, K] row in key order:
DENSE, or SPARSE at the keys' positions up to max_map, the rest 0 or "0.f" as onnxruntime pads them).

Maps are Python dicts; ZipMap's sequence of maps is a values.MapSequence (a list of dicts, as onnxruntime returns
them, that keeps its labels and [N, C] table for tables and trace files)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...trace.values import MapSequence
from .base import KernelFactory, OpNode, PlainKernel
from .element_types import element_dtype
from .ml_scores import labels_of
from .strings import string_array, text

DOMAIN = "ai.onnx.ml"


def zipmap_kernel(op: OpNode) -> PlainKernel:
    labels, strings = labels_of(op, "classlabels_strings", "classlabels_int64s")
    if labels.size == 0 or (strings and op.attr("classlabels_int64s")):
        raise op.error("exactly one of classlabels_strings and classlabels_int64s must be set")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        (x,) = args
        if x.ndim not in (1, 2) or x.shape[-1] != labels.size:
            raise op.error(f"X must be [N, {labels.size}] (or [{labels.size}]) for {labels.size} labels, "
                           f"got shape {x.shape}")
        return (MapSequence(labels, x.reshape(-1, labels.size).astype(np.float32, copy=False)),)

    return run


def _map_value_dtype(op: OpNode) -> np.dtype | None:
    """The declared value type of the map a node reads (None when not declared)."""
    inputs = op.node.proto.input
    declared = op.value_type(inputs[0]) if inputs else None
    if declared is None or declared.WhichOneof("value") != "map_type":
        return None
    value = declared.map_type.value_type
    if value.WhichOneof("value") != "tensor_type" or not value.tensor_type.elem_type:
        return None
    return element_dtype(value.tensor_type.elem_type)


def _values_dtype(declared: np.dtype | None, values: list[Any]) -> np.dtype:
    if declared is not None:
        return declared
    if values and all(isinstance(v, (str, bytes)) for v in values):
        return np.dtype(object)
    if values and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return np.dtype(np.int64)
    if values and all(isinstance(v, np.generic) for v in values):
        return np.result_type(*values)
    return np.dtype(np.float32)


def _typed(values: list[Any], dtype: np.dtype, count: int) -> np.ndarray:
    if dtype.kind == "O":
        return string_array([text(v) for v in values], (1, count))
    return np.asarray(values, dtype=dtype).reshape(1, count)


def _as_map(op: OpNode, value: Any) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise op.error(f"its input must be a map, got {type(value).__name__}")
    return value


def dict_vectorizer_kernel(op: OpNode) -> PlainKernel:
    words, numbers = op.attr("string_vocabulary"), op.attr("int64_vocabulary")
    if bool(words) == bool(numbers):
        raise op.error("exactly one of string_vocabulary and int64_vocabulary must be set")
    vocabulary = [text(w) for w in words] if words else [int(n) for n in numbers]
    declared = _map_value_dtype(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        given = _as_map(op, args[0])
        keyed = {(text(k) if words else int(k)): v for k, v in given.items()}
        dtype = _values_dtype(declared, list(keyed.values()))
        blank: Any = "" if dtype.kind == "O" else 0
        return (_typed([keyed.get(word, blank) for word in vocabulary], dtype, len(vocabulary)),)

    return run


CAST_TO: dict[str, np.dtype] = {"TO_FLOAT": np.dtype(np.float32), "TO_INT64": np.dtype(np.int64),
                               "TO_STRING": np.dtype(object)}


def _cast_item(value: Any, target: np.dtype) -> Any:
    """One map value cast as onnxruntime casts it: strings parsed (stof, stoll), floats truncated to int64 and
    written with six decimals as text."""
    if target.kind == "O":
        return text(value) if isinstance(value, (str, bytes)) else f"{float(value):f}"
    if isinstance(value, (str, bytes)):
        parsed = float(text(value)) if target.kind == "f" else int(text(value).strip().split(".")[0] or "0")
        return parsed
    return float(value) if target.kind == "f" else int(np.trunc(float(value)))


def cast_map_kernel(op: OpNode) -> PlainKernel:
    target = CAST_TO.get(op.get_str("cast_to"))
    form = op.get_str("map_form")
    width = op.get_int("max_map")
    if target is None or form not in ("DENSE", "SPARSE"):
        raise op.error(f"cast_to ({op.get_str('cast_to')!r}) must be TO_FLOAT, TO_INT64 or TO_STRING and map_form "
                       f"({form!r}) DENSE or SPARSE")
    if form == "SPARSE" and width < 0:
        raise op.error(f"max_map must not be negative, got {width}")
    pad: Any = "0.f" if target.kind == "O" else 0

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        given = {int(k): v for k, v in _as_map(op, args[0]).items()}
        try:
            if form == "DENSE":
                values = [_cast_item(given[k], target) for k in sorted(given)]
            else:
                if given and min(given) < 0:
                    raise op.error(f"SPARSE maps take keys from 0, got {min(given)}")
                values = [_cast_item(given[k], target) if k in given else pad for k in range(width)]
        except ValueError as exc:
            raise op.error(f"a value cannot be cast: {exc}") from None
        return (_typed(values, target, len(values)),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "CastMap": cast_map_kernel,
    "DictVectorizer": dict_vectorizer_kernel,
    "ZipMap": zipmap_kernel,
}
