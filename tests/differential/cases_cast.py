"""Cast and CastLike (explorer/executor/ops/cast.py)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from .gen import rng, schema_types, since_versions, values
from .harness import Case


def _source(r: np.random.Generator, src: np.dtype, dst: np.dtype) -> np.ndarray:
    """Values whose cast the spec defines: floats go to integers only in range, strings hold numbers."""
    if src.kind == "O":
        numbers = values(r, (2, 3), np.int32, -50, 50) if dst.kind in "iub" else values(r, (2, 3), np.float32)
        texts = [str(v) for v in numbers.reshape(-1)]
        if dst.kind == "f":
            texts[:3] = ["-INF", "nan", "1e-5"]
        return np.array(texts, dtype=object).reshape(2, 3)
    if src.kind == "f" and dst.kind in "iu":
        return values(r, (2, 3), src, 0, 100)
    low = 0 if src.kind == "u" else -100
    return values(r, (2, 3), src, low, 100, special=src.kind == "f" and dst.kind in "fbO")


NO_FLOAT8 = "onnxruntime takes saturate/round_mode only for 8-bit float targets; elsewhere they change nothing"


def _options(version: int) -> list[dict]:
    found: list[dict] = [{}]
    if version >= 19:
        found.append({"saturate": 0})
    if version >= 24:
        found.append({"round_mode": "nearest", "saturate": 1})
    return found


def cases() -> list[Case]:
    found = []
    for version in since_versions("Cast"):
        if version == 1:
            continue  # below: `to` is a type name
        for src in schema_types("Cast", version, "T1"):
            for dst in schema_types("Cast", version, "T2"):
                r = rng("Cast", version, str(src), str(dst))
                to = TensorProto.STRING if dst.kind == "O" else helper.np_dtype_to_tensor_dtype(dst)
                found.append(Case("Cast", version, [_source(r, src, dst)], {"to": to}, dtype_sweep=True))
        x = values(rng("Cast", version, "options"), (2, 3), np.float32, special=True)
        for options in _options(version)[1:]:
            found.append(Case("Cast", version, [x], {"to": TensorProto.FLOAT16, **options}, reason=NO_FLOAT8,
                              expected=[x.astype(np.float16)]))
    for version in since_versions("CastLike"):
        for src in schema_types("CastLike", version, "T1"):
            for dst in schema_types("CastLike", version, "T2"):
                r = rng("CastLike", version, str(src), str(dst))
                like = np.array([], dtype=dst)
                found.append(Case("CastLike", version, [_source(r, src, dst), like], dtype_sweep=True))
        x = values(rng("CastLike", version, "options"), (2, 3), np.float32, special=True)
        for options in _options(version)[1:]:
            found.append(Case("CastLike", version, [x, np.array([], np.float16)], options, reason=NO_FLOAT8,
                              expected=[x.astype(np.float16)]))
    x = np.array([1.7, -2.2, 3.0, 0.0], np.float32)
    found.append(Case("Cast", 1, [x], {"to": "INT32"}, expected=[np.array([1, -2, 3, 0], np.int32)],
                      reason="onnxruntime implements Cast from 6; at 1 `to` is a type name"))
    found.append(Case("Cast", 1, [x], {"to": "DOUBLE"}, expected=[x.astype(np.float64)],
                      reason="onnxruntime implements Cast from 6; at 1 `to` is a type name"))
    found.append(Case("Cast", 21, [np.array([0.1, 1 / 3, 123456789, 1e-7, -0.0, np.inf, np.nan], np.float32)],
                      {"to": TensorProto.STRING}))
    found.append(Case("Cast", 21, [np.array([200, -200], np.int16)], {"to": TensorProto.INT8}))
    found.append(Case("Cast", 13, [x], {"to": 999}, error="not a tensor type"))
    return found
