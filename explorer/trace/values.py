"""Helpers over runtime values (tensors, sequences, optionals, maps): sizes, summaries, descriptions."""
from __future__ import annotations

import operator
from collections.abc import ItemsView, Iterable, Iterator, Mapping, ValuesView
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..budgets import SUMMARY_CHUNK_ELEMENTS


@dataclass(frozen=True)
class ValueSummary:
    """What the trace keeps of a value once the memory budget is spent."""

    shape: tuple[int, ...]
    dtype: str
    min: float | None
    max: float | None
    mean: float | None
    nan_count: int
    inf_count: int

    @property
    def nbytes(self) -> int:
        return 0


_NBYTES = operator.attrgetter("nbytes")
_DTYPE_NAMES: dict[np.dtype, str] = {}
POINTER_BYTES = 8  # a sequence holds one reference per element, counted so shared elements still cost


@dataclass(frozen=True)
class SequenceSummary:
    """What the trace keeps of a sequence once the memory budget is spent: its length and a summary of its first
    element (constant cost whatever the length, so a loop growing a sequence stays linear)."""

    length: int
    first: Any

    @property
    def nbytes(self) -> int:
        return 0


class TensorSequence(list[Any]):
    """A sequence value that knows its size in bytes. Sequence kernels build one from the sequence they read and
    pass its size on (plus or minus one element), so the size of a sequence a loop grows costs O(1) per event,
    never a sum over its elements. Never changed after it is built (kernels return new sequences); pickled as a
    plain list."""

    __slots__ = ("nbytes",)

    def __init__(self, items: Any = (), nbytes: int | None = None) -> None:
        super().__init__(items)
        self.nbytes: int = elements_bytes(self) if nbytes is None else nbytes

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)


class Deferred:
    """A recorded value the trace keeps as parts it shares with other values (a cache reordered by beams: each
    step's new positions once, and the rows each step continues), made whole each time it is read. Values read
    through an event's `inputs`/`outputs`, an iteration's or the trace's outputs are never Deferred: those
    containers make them whole (`resolved`); `Event.input_values`/`output_values` hold them as recorded."""

    __slots__ = ()

    @property
    def shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def dtype(self) -> np.dtype[Any]:
        raise NotImplementedError

    @property
    def nbytes(self) -> int:
        """The bytes of the whole value (what reading it makes)."""
        return int(np.prod(self.shape)) * self.dtype.itemsize

    def parts(self) -> list[np.ndarray]:
        """The arrays it is made from (shared with other Deferred values)."""
        raise NotImplementedError

    def resolve(self) -> np.ndarray:
        """The whole value, a read-only array made anew at each call."""
        raise NotImplementedError


def resolved(value: Any) -> Any:
    """`value`, made whole when it is Deferred."""
    return value.resolve() if isinstance(value, Deferred) else value


class RecordedValues(dict[str, Any]):
    """A dict of recorded values (an iteration's inputs or outputs, a trace's outputs) some of which are Deferred:
    every read (`[]`, get, values, items, dict(...), ** and copies) makes them whole."""

    def __getitem__(self, name: str) -> Any:
        return resolved(dict.__getitem__(self, name))

    def get(self, name: str, default: Any = None) -> Any:
        return resolved(dict.get(self, name, default))

    def __iter__(self) -> Iterator[str]:  # not dict's own: dict(...) and ** then read through __getitem__
        return iter(list(dict.keys(self)))

    def values(self) -> ValuesView[Any]:  # type: ignore[override]
        return ValuesView(self)

    def items(self) -> ItemsView[str, Any]:  # type: ignore[override]
        return ItemsView(self)

    def copy(self) -> dict[str, Any]:
        return {name: self[name] for name in self}


class NamedValues(Mapping[str, Any]):
    """The values of one event or iteration by name, read-only: a tuple of names shared by every execution of
    the node (or body) and the tuple of values the execution recorded, so recording makes no dict. A Deferred
    value is made whole when read."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: tuple[str, ...], values: tuple[Any, ...]) -> None:
        self._names = names  # distinct, non-empty, as long as `values`
        self._values = values

    def __getitem__(self, name: str) -> Any:
        try:
            return resolved(self._values[self._names.index(name)])
        except ValueError:
            raise KeyError(name) from None

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def values(self) -> ValuesView[Any]:
        return _Values(self)

    def items(self) -> ItemsView[str, Any]:
        return _Items(self)

    def __repr__(self) -> str:
        return repr(dict(zip(self._names, self._values)))


class _Values(ValuesView[Any]):
    _mapping: NamedValues

    def __iter__(self) -> Iterator[Any]:
        return map(resolved, self._mapping._values)


class _Items(ItemsView[str, Any]):
    _mapping: NamedValues

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return zip(self._mapping._names, map(resolved, self._mapping._values))


class MapSequence(list[dict[Any, Any]]):
    """A sequence of maps sharing their keys (ZipMap's output, one map per row): a list of dicts {key: float}, as
    onnxruntime returns it, that also keeps its `keys` [K] and `table` [N, K] for recording, tables and trace
    files. Never changed after it is built; pickled as a plain list."""

    __slots__ = ("keys", "table")

    def __init__(self, keys: np.ndarray, table: np.ndarray) -> None:
        names = keys.tolist()
        super().__init__(dict(zip(names, row)) for row in table.tolist())
        self.keys = keys
        self.table = table

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes) + POINTER_BYTES * (len(self) + self.keys.size)

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)


def map_text(keys: np.ndarray, values: np.dtype | str) -> str:
    """A map's type as explorer writes it: `map(int64 → float32)` (`string` for text keys)."""
    key = "string" if keys.dtype.kind in "OUS" else str(keys.dtype)
    return f"map({key} → {values})"


def elements_bytes(value: list[Any]) -> int:
    """Bytes of a sequence's elements plus one reference each, summed over every element."""
    try:  # a sequence of tensors: summed in C
        return POINTER_BYTES * len(value) + int(sum(map(_NBYTES, value)))
    except AttributeError:
        return POINTER_BYTES * len(value) + sum(nbytes(v) for v in value)


def nbytes(value: Any) -> int:
    """Bytes held by a value (sequences: their elements plus one reference each; O(1) for a TensorSequence)."""
    if isinstance(value, (np.ndarray, Deferred)):
        return value.nbytes
    if isinstance(value, (TensorSequence, MapSequence)):
        return value.nbytes
    if isinstance(value, list):
        return elements_bytes(value)
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    return 0


def _chunks(value: np.ndarray) -> Iterator[np.ndarray]:
    """Views of at most about SUMMARY_CHUNK_ELEMENTS elements covering the array (no copy of the whole)."""
    if value.size <= SUMMARY_CHUNK_ELEMENTS or value.ndim == 0:
        yield value
    elif value.flags.c_contiguous or value.flags.f_contiguous:
        flat = value.reshape(-1, order="A")
        for start in range(0, flat.size, SUMMARY_CHUNK_ELEMENTS):
            yield flat[start:start + SUMMARY_CHUNK_ELEMENTS]
    else:
        for part in value:
            yield from _chunks(part)


def count_nonfinite(value: Any) -> tuple[int, int]:
    """(NaN count, Inf count) of a tensor, a sequence of tensors or a summary."""
    if isinstance(value, ValueSummary):
        return value.nan_count, value.inf_count
    if isinstance(value, MapSequence):
        return count_nonfinite(value.table)
    if isinstance(value, list):
        pairs = [count_nonfinite(v) for v in value]
        return sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    if not isinstance(value, np.ndarray) or not value.size or value.dtype.kind not in "fcV":
        return 0, 0
    nan = inf = 0
    try:
        for chunk in _chunks(value):
            if chunk.dtype.kind == "V":  # ml_dtypes (bfloat16, float8)
                chunk = chunk.astype(np.float32)
            nan += int(np.count_nonzero(np.isnan(chunk)))
            inf += int(np.count_nonzero(np.isinf(chunk)))
    except (TypeError, ValueError):
        return 0, 0
    return nan, inf


def has_nonfinite(value: Any) -> bool:
    nan, inf = count_nonfinite(value)
    return bool(nan or inf)


def summarize(value: Any) -> Any:
    """A ValueSummary for a tensor (computed chunk by chunk: never a copy of the whole); a sequence becomes a
    SequenceSummary; other values are kept as they are."""
    if isinstance(value, list):
        return SequenceSummary(len(value), summarize(value[0]) if value else None)
    if not isinstance(value, np.ndarray):
        return value
    nan, inf = count_nonfinite(value)
    lo = hi = mean = None
    if value.size and value.dtype.kind in "biuf":
        lo, hi, total, count = np.inf, -np.inf, 0.0, 0
        for chunk in _chunks(value):
            if chunk.dtype.kind == "f":
                finite = np.isfinite(chunk)
                kept = int(np.count_nonzero(finite))
                if not kept:
                    continue
                lo = min(lo, float(chunk.min(where=finite, initial=np.inf)))
                hi = max(hi, float(chunk.max(where=finite, initial=-np.inf)))
                total += float(chunk.sum(where=finite, dtype=np.float64))
            else:
                kept = chunk.size
                lo, hi = min(lo, float(chunk.min())), max(hi, float(chunk.max()))
                total += float(chunk.sum(dtype=np.float64))
            count += kept
        if count:
            mean = total / count
        else:
            lo = hi = None
    name = _DTYPE_NAMES.get(value.dtype)
    if name is None:
        name = _DTYPE_NAMES.setdefault(value.dtype, str(value.dtype))
    return ValueSummary(tuple(value.shape), name, lo, hi, mean, nan, inf)


def type_text(dtype: object, shape: Iterable[int]) -> str:
    """A tensor's type as explorer writes it everywhere: `float32[2, 3]` (a scalar: `float32[]`)."""
    return f"{dtype}[{', '.join(map(str, shape))}]"


def describe(value: Any) -> str:
    """Short type/shape text, e.g. `float32[2, 3]`, `seq(3) of float32[4]`, `none`."""
    if value is None:
        return "none"
    if isinstance(value, ValueSummary):
        return f"{type_text(value.dtype, value.shape)} (summary)"
    if isinstance(value, SequenceSummary):
        inner = describe(value.first) if value.first is not None else "?"
        return f"seq({value.length}) of {inner}"
    if isinstance(value, (np.ndarray, Deferred)):
        return type_text(value.dtype, value.shape)
    if isinstance(value, MapSequence):
        return f"seq({len(value)}) of {map_text(value.keys, value.table.dtype)}"
    if isinstance(value, list):
        inner = describe(value[0]) if value else "?"
        return f"seq({len(value)}) of {inner}"
    if isinstance(value, dict):
        return f"map({len(value)})"
    return type(value).__name__
