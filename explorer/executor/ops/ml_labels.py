"""LabelEncoder (ai.onnx.ml 1, 2, 4) and CategoryMapper (1): every element looked up among keys, replaced by its
value or the default.

LabelEncoder-1 maps strings to their index in classes_strings and integers back (default_int64,
default_string); 2 takes keys_* and values_* lists of strings, int64 or floats; 4 adds keys_tensor,
values_tensor and default_tensor (int16, int32, int64, float, double or string). Version 2 compares float keys
bit by bit (a NaN key matches a NaN of its bits; -0.0 is not 0.0); version 4 lets a NaN key match any NaN and
-0.0 match 0.0, and a repeated key's last value wins. CategoryMapper maps cats_strings[i] and cats_int64s[i] to
each other."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .strings import string_array, text

DOMAIN = "ai.onnx.ml"
KINDS = {"strings": np.dtype(object), "int64s": np.dtype(np.int64), "floats": np.dtype(np.float32)}


def _typed(items: Any, dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "O":
        return string_array([text(v) for v in items], (len(items),))
    return np.asarray(items, dtype=dtype).reshape(-1)


class Lookup:
    """Keys to values with a default; a repeated key takes `last` or first value; float keys compared `bitwise`
    or by value."""

    def __init__(self, keys: np.ndarray, values: np.ndarray, default: Any, last: bool, bitwise: bool = False) -> None:
        self.values_dtype = values.dtype
        self.default = default
        self.bits = _bits if bitwise and keys.dtype.kind == "f" else None
        if self.bits is not None:
            keys = self.bits(keys)
        strings = keys.dtype.kind == "O"
        table: dict[Any, int] = {}
        self.nan_at: int | None = None
        for k, key in enumerate(keys.tolist()):
            if not strings and isinstance(key, float) and np.isnan(key):
                self.nan_at = k if last or self.nan_at is None else self.nan_at
                continue
            item = text(key) if strings else key
            if last or item not in table:
                table[item] = k
        self.table, self.strings, self.values = table, strings, values

    def __call__(self, x: np.ndarray) -> np.ndarray:
        flat = x.reshape(-1) if self.bits is None else self.bits(x.reshape(-1))
        if self.strings:
            found = np.array([self.table.get(text(v), -1) for v in flat], dtype=np.int64)
        else:
            found = self._numbers(flat)
        out = np.empty(flat.size, dtype=self.values_dtype)
        hit = found >= 0
        out[hit] = self.values[found[hit]]
        out[~hit] = self.default
        return out.reshape(x.shape)

    def _numbers(self, flat: np.ndarray) -> np.ndarray:
        keys = np.array(list(self.table), dtype=np.float64)
        where = np.array(list(self.table.values()), dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        keys, where = keys[order], where[order]
        wide = flat.astype(np.float64)
        pos = np.clip(np.searchsorted(keys, wide), 0, max(len(keys) - 1, 0))
        found = np.where((pos < len(keys)) & (keys[pos] == wide), where[pos], -1) if len(keys) else \
            np.full(flat.size, -1, np.int64)
        if self.nan_at is not None:
            found = np.where(np.isnan(wide), self.nan_at, found)
        return found


def _bits(values: np.ndarray) -> np.ndarray:
    """Float32 values as the integers of their bits."""
    return values.astype(np.float32).view(np.int32).astype(np.int64)


def _default(op: OpNode, dtype: np.dtype) -> Any:
    tensor = op.attr("default_tensor")
    if tensor is not None:
        array = np.asarray(tensor).reshape(-1)
        if array.size != 1:
            raise op.error(f"default_tensor must hold one value, got {array.size}")
        return text(array[0]) if dtype.kind == "O" else array[0]
    if dtype.kind == "O":
        return op.get_str("default_string")
    return op.get_float("default_float") if dtype.kind == "f" else op.get_int("default_int64")


def _side(op: OpNode, prefix: str) -> np.ndarray:
    """The keys (prefix "keys") or values of a LabelEncoder-2/4 node: one list attribute, or the tensor."""
    given = [(name, op.attr(f"{prefix}_{name}")) for name in KINDS if op.attr(f"{prefix}_{name}")]
    tensor = op.attr(f"{prefix}_tensor")
    if tensor is not None:
        given.append(("tensor", tensor))
    if len(given) != 1:
        raise op.error(f"exactly one of the {prefix}_* attributes must be set, got "
                       f"{[f'{prefix}_{name}' for name, _ in given] or 'none'}")
    name, items = given[0]
    if name == "tensor":
        array = np.asarray(items).reshape(-1)
        return _typed(array.tolist(), np.dtype(object)) if array.dtype.kind in "OUS" else array
    return _typed(list(items), KINDS[name])


def label_encoder_kernel(op: OpNode) -> PlainKernel:
    if op.version == 1:
        return _label_encoder_1(op)
    keys, values = _side(op, "keys"), _side(op, "values")
    if keys.size != values.size:
        raise op.error(f"{keys.size} keys but {values.size} values")
    lookup = Lookup(keys, values, _default(op, values.dtype), last=op.version >= 4, bitwise=op.version == 2)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if (x.dtype.kind == "O") != (keys.dtype.kind == "O"):
            raise op.error(f"X is {x.dtype} but the keys are {'strings' if keys.dtype.kind == 'O' else keys.dtype}")
        return (lookup(x),)

    return run


def _label_encoder_1(op: OpNode) -> PlainKernel:
    classes = _typed(list(op.attr("classes_strings") or []), np.dtype(object))
    to_index = Lookup(classes, np.arange(classes.size, dtype=np.int64), op.get_int("default_int64"), last=False)
    to_class = Lookup(np.arange(classes.size, dtype=np.int64), classes, op.get_str("default_string"), last=False)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        return ((to_index if x.dtype.kind == "O" else to_class)(x),)

    return run


def category_mapper_kernel(op: OpNode) -> PlainKernel:
    words = _typed(list(op.attr("cats_strings") or []), np.dtype(object))
    numbers = np.asarray(op.attr("cats_int64s") or [], dtype=np.int64)
    if words.size != numbers.size:
        raise op.error(f"cats_strings ({words.size}) and cats_int64s ({numbers.size}) differ in length")
    to_number = Lookup(words, numbers, op.get_int("default_int64"), last=False)
    to_word = Lookup(numbers, words, op.get_str("default_string"), last=False)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        return ((to_number if x.dtype.kind == "O" else to_word)(x),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "CategoryMapper": category_mapper_kernel,
    "LabelEncoder": label_encoder_kernel,
}
