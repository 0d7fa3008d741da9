"""Seeded generation of case inputs: the same cases on every run (the seed is derived from a name)."""
from __future__ import annotations

import zlib
from functools import cache

import ml_dtypes
import numpy as np
import onnx
from onnx import helper

from explorer.spec.contrib import CONTRIB_DOMAIN, contrib_versions
from explorer.spec.schema import schema_at

from .harness import Cast

FLOATS = (np.float32, np.float64, np.float16)
SIGNED = (np.int8, np.int16, np.int32, np.int64)
UNSIGNED = (np.uint8, np.uint16, np.uint32, np.uint64)
INTS = SIGNED + UNSIGNED


def rng(*key: object) -> np.random.Generator:
    """A generator seeded by `key` (e.g. the op, version and dtype of a case)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def shape(r: np.random.Generator, rank: int | None = None, low: int = 1, high: int = 5) -> tuple[int, ...]:
    rank = int(r.integers(0, 4)) if rank is None else rank
    return tuple(int(d) for d in r.integers(low, high, size=rank))


def broadcast_pair(r: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that broadcast: the second drops leading axes and sets some of the others to 1."""
    full = shape(r, int(r.integers(1, 4)))
    other = list(full[int(r.integers(0, len(full) + 1)):])
    for k in range(len(other)):
        if r.random() < 0.4:
            other[k] = 1
    if r.random() < 0.5:
        return full, tuple(other)
    return tuple(other), full


def values(r: np.random.Generator, dims: tuple[int, ...], dtype: object, low: float = -4, high: float = 4,
           special: bool = False) -> np.ndarray:
    """Random values of `dtype`; for floats with `special`, some NaN, +-Inf and -0.0 among them."""
    dtype = np.dtype(dtype)
    if dtype.type.__module__ == "ml_dtypes":  # in range for the type (floats saturate, integers clip)
        info = ml_dtypes.iinfo(dtype) if "int" in dtype.name else None
        if info is not None:
            return values(r, dims, np.int8, max(low, info.min), min(high, info.max)).astype(dtype)
        wide = values(r, dims, np.float32, low, high, special)
        finite = float(ml_dtypes.finfo(dtype).max)
        return np.where(np.isinf(wide), wide, np.clip(wide, -finite, finite)).astype(dtype)
    if dtype == np.bool_:
        return np.asarray(r.random(dims) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(int(low), info.min), min(int(high), info.max)
        return np.asarray(r.integers(lo, hi + 1, size=dims), dtype=dtype)
    x = np.asarray(r.uniform(low, high, size=dims), dtype=dtype)
    if special and x.size:
        flat = x.reshape(-1)
        picks = r.integers(0, flat.size, size=min(4, flat.size))
        for pick, value in zip(picks, (np.nan, np.inf, -np.inf, -0.0)):
            flat[pick] = value
    return x


@cache
def schema_types(op: str, version: int, param: str = "T", domain: str = "",
                 exotic: bool = False) -> tuple[np.dtype, ...]:
    """The numpy dtypes the schema of `op` at `version` allows for type parameter `param` (tensor types only;
    complex left out, and unless `exotic`, the types numpy holds through ml_dtypes: bfloat16, float8, float4, the
    4- and 2-bit integers)."""
    schema = schema_at(op, version, domain)
    assert schema is not None, f"{domain}.{op}-{version} has no schema"
    constraint = next(c for c in schema.type_constraints if c.type_param_str == param)
    found = []
    for text in constraint.allowed_type_strs:
        if not text.startswith("tensor("):
            continue
        name = text[len("tensor("):-1]
        elem = getattr(onnx.TensorProto, name.upper(), None)
        if elem is None or name in ("complex64", "complex128"):
            continue
        if name == "string":
            found.append(np.dtype(object))
            continue
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem))
        if exotic or dtype.type.__module__ == "numpy":
            found.append(dtype)
    return tuple(found)


@cache
def since_versions(op: str, domain: str = "") -> tuple[int, ...]:
    """Every since_version of an operator in onnx.defs and among onnxruntime's own schemas (com.microsoft, and
    the layer norms it defines in the default domain where onnx has none)."""
    if domain == CONTRIB_DOMAIN:
        return contrib_versions(op)
    return tuple(sorted({s.since_version for s in onnx.defs.get_all_schemas_with_history()
                         if s.name == op and s.domain == domain} | set(contrib_versions(op, domain))))


def float16_at_opset1(op: str, version: int, dtype: object) -> dict:
    """onnxruntime rejects float16 models at opset 1 (the Cast it inserts is invalid there): such cases are judged
    by onnxruntime at the op's next version, which computes the same for them."""
    if version != 1 or np.dtype(dtype) != np.float16:
        return {}
    later = since_versions(op)[1]
    return {"judge_version": later, "reason": f"onnxruntime rejects float16 at opset 1; {op}-{later} computes alike"}


NARROWED = Cast(np.float32, "onnxruntime lacks float64 here: the values rounded to float32, compared at float32's "
                            "precision")


def narrowed(dtype: object) -> dict:
    """The cast judge for a float64 case of an op onnxruntime has only in float32 (none for other types)."""
    return {"cast": NARROWED} if np.dtype(dtype) == np.float64 else {}
