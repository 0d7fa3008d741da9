"""String operators: StringNormalizer (10), StringConcat, StringSplit and RegexFullMatch (20). Strings are object
arrays of Python str, as explorer holds every ONNX string tensor.

StringNormalizer drops stopwords (compared in the case the output is changed to, or in lower case, when
is_case_sensitive=0) then changes case one character at a time, as onnxruntime does; it takes [C] and [1, C],
and an output with nothing left is one empty string ([1] or [1, 1]). StringSplit without a delimiter splits on
runs of spaces, dropping leading and trailing ones (onnxruntime's reading of the spec's "whitespace"); an empty
string has no substrings.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel


def text(value: Any) -> str:
    """A string attribute's or element's text (bytes decoded as UTF-8)."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def texts(values: Any) -> list[str]:
    return [text(v) for v in values or ()]


def string_array(items: list[str], shape: tuple[int, ...]) -> np.ndarray:
    """An object array of str of `shape`."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _per_character(change: str) -> Any:
    """str.lower/str.upper one character at a time: a character whose case mapping is longer stays as it is (as
    towupper keeps 'ß')."""
    def changed(s: str) -> str:
        out = [getattr(c, change)() for c in s]
        return "".join(new if len(new) == 1 else old for new, old in zip(out, s))
    return changed


def string_normalizer_kernel(op: OpNode) -> PlainKernel:
    action = op.get_str("case_change_action")
    if action not in ("LOWER", "UPPER", "NONE"):
        raise op.error(f"case_change_action must be LOWER, UPPER or NONE, got {action!r}")
    sensitive = bool(op.get_int("is_case_sensitive"))
    change = None if action == "NONE" else _per_character(action.lower())
    compare = (lambda s: s) if sensitive else _per_character("upper" if action == "UPPER" else "lower")
    stopwords = texts(op.attr("stopwords"))
    if any(not word for word in stopwords):
        raise op.error("stopwords may not be empty strings")
    if len(set(map(compare, stopwords))) != len(stopwords):
        raise op.error("stopwords hold the same word twice")
    stops = set(map(compare, stopwords))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        (x,) = args
        if not (x.ndim == 1 or (x.ndim == 2 and x.shape[0] == 1)) or x.shape[-1] < 1:
            raise op.error(f"X must be [C] or [1, C] with C > 0, got shape {x.shape}")
        kept = [s for s in map(text, x.reshape(-1)) if compare(s) not in stops]
        if change is not None:
            kept = [change(s) for s in kept]
        lead = x.shape[:-1]
        return (string_array(kept or [""], lead + (max(len(kept), 1),)),)

    return run


def string_concat_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, y = (np.asarray(a, dtype=object) for a in args)
        shape = np.broadcast_shapes(x.shape, y.shape)
        pairs = zip(np.broadcast_to(x, shape).reshape(-1), np.broadcast_to(y, shape).reshape(-1))
        return (string_array([text(a) + text(b) for a, b in pairs], shape),)

    return run


def _split(s: str, delimiter: str, maxsplit: int | None) -> list[str]:
    if not s:
        return []
    if delimiter:
        return s.split(delimiter, -1 if maxsplit is None else maxsplit)
    words = [w for w in s.split(" ") if w]
    if maxsplit is None or len(words) <= maxsplit + 1:
        return words
    head = words[:maxsplit]
    rest = s.strip(" ")
    for word in head:  # the remainder as it stands in the string, after the first maxsplit words
        rest = rest[len(word):].lstrip(" ")
    return [*head, rest]


def string_split_kernel(op: OpNode) -> PlainKernel:
    delimiter = text(op.attr("delimiter", ""))
    maxsplit = op.attr("maxsplit")
    limit = None if maxsplit is None else int(maxsplit)
    if limit is not None and limit < 0:
        raise op.error(f"maxsplit must not be negative, got {limit}")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        (x,) = args
        parts = [_split(text(s), delimiter, limit) for s in x.reshape(-1)]
        width = max((len(p) for p in parts), default=0)
        padded = [p + [""] * (width - len(p)) for p in parts]
        counts = np.array([len(p) for p in parts], dtype=np.int64).reshape(x.shape)
        return string_array([s for p in padded for s in p], x.shape + (width,)), counts

    return run


def regex_full_match_kernel(op: OpNode) -> PlainKernel:
    source = text(op.attr("pattern", ""))
    try:
        pattern = re.compile(source)
    except re.error as exc:
        raise op.error(f"pattern {source!r} is not a regular expression: {exc}") from None

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        (x,) = args
        found = [pattern.fullmatch(text(s)) is not None for s in x.reshape(-1)]
        return (np.array(found, dtype=bool).reshape(x.shape),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "RegexFullMatch": regex_full_match_kernel,
    "StringConcat": string_concat_kernel,
    "StringNormalizer": string_normalizer_kernel,
    "StringSplit": string_split_kernel,
}
