"""Cast, CastLike and BitCast (explorer/executor/ops/cast.py) between every pair of element types their schemas
allow, bfloat16, float8, float6, float4 and the 4- and 2-bit integers included (harness.py passes those through
initializers and float32 casts)."""
from __future__ import annotations

import struct

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper

from .gen import rng, schema_types, since_versions, values
from .harness import Case

E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
FLOAT8 = [np.dtype(t) for t in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2,
                                ml_dtypes.float8_e5m2fnuz)]


def _code(dtype: np.dtype) -> int:
    return TensorProto.STRING if dtype.kind == "O" else helper.np_dtype_to_tensor_dtype(dtype)


def _integral(dtype: np.dtype) -> bool:
    return dtype.kind in "iub" or "int" in dtype.name


SMALL_INT_RANGES = {"int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1), "uint2": (0, 3)}


def _source(r: np.random.Generator, src: np.dtype, dst: np.dtype) -> np.ndarray:
    """Values whose cast the spec defines: floats go to integers only in range, nothing negative to float8e8m0,
    strings hold numbers."""
    low = 0.0 if src.kind == "u" or src == E8M0 or dst == E8M0 or dst.kind == "u" or dst.name.startswith("uint") \
        else -100.0
    if dst.name in SMALL_INT_RANGES and not _integral(src):  # out of range, the spec leaves the value undefined
        least, most = SMALL_INT_RANGES[dst.name]
        low, high = least - 0.49, most + 0.49
    elif _integral(dst) and not _integral(src) and dst.kind in "iu":
        low, high = max(low, -8.0), 8.0 if dst.itemsize == 1 else 100.0
    else:
        high = 100.0
    if src.kind == "O":
        kind = np.int32 if _integral(dst) else np.float32
        texts = [str(v) for v in values(r, (2, 3), kind, low, high).reshape(-1)]
        if not _integral(dst):
            texts[:3] = ["-INF", "nan", "1e-5"] if dst != E8M0 else ["+INF", "NaN", "1E-5"]
        return np.array(texts, dtype=object).reshape(2, 3)
    special = not _integral(src) and not _integral(dst) and E8M0 not in (src, dst)
    x = values(r, (2, 3), src, low, high, special=special)
    if dst.name in SMALL_INT_RANGES and not _integral(src):  # src's own rounding may carry a value out of range
        least, most = SMALL_INT_RANGES[dst.name]
        wide = x.astype(np.float64)
        whole = np.trunc(wide + np.copysign(0.5, wide))
        x = np.where((whole >= least) & (whole <= most), wide, 0).astype(src)
    return x


FLOAT4 = np.dtype(ml_dtypes.float4_e2m1fn)


def _grid(exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """Every magnitude of a float without infinities or NaN (bias 2**(e-1) - 1), in code order."""
    bias, steps = 2 ** (exponent_bits - 1) - 1, 2 ** mantissa_bits
    subnormal = [m / steps * 2.0 ** (1 - bias) for m in range(steps)]
    normal = [(1 + m / steps) * 2.0 ** (e - bias) for e in range(1, 2 ** exponent_bits) for m in range(steps)]
    return np.array(subnormal + normal)


SMALL_FLOATS = {FLOAT4: _grid(2, 1), np.dtype(ml_dtypes.float6_e2m3fn): _grid(2, 3),
                np.dtype(ml_dtypes.float6_e3m2fn): _grid(3, 2)}
OUT_OF_RANGE = ("a float out of a 4- or 2-bit integer's range: undefined by the spec's text, 0 in its cases "
                "(onnx 1.23's Cast-28 and CastLike-25); onnxruntime keeps the low bits")
NO_SMALL_FLOAT = "onnxruntime has no Cast to or from float4/float6: nearest value, ties to even, saturating"


def _nearest(x: np.ndarray, dst: np.dtype) -> np.ndarray:
    """The value of `dst` (a float4/float6 type) nearest to x, ties to the even code, saturating."""
    grid = SMALL_FLOATS[dst]
    magnitude = np.minimum(np.abs(x.astype(np.float64)), grid[-1])[..., None]
    distance = np.abs(grid - magnitude) + np.arange(len(grid)) % 2 * 1e-12
    return (np.sign(x) * grid[np.argmin(distance, axis=-1)]).astype(np.float32).astype(dst)


def _from_small_by_hand(x: np.ndarray, dst: np.dtype) -> np.ndarray:
    if dst in SMALL_FLOATS:
        return _nearest(x, dst)
    if dst.kind == "O":
        return np.array([f"{v:.8g}" for v in x.reshape(-1)], dtype=object).reshape(x.shape)
    if dst.name in SMALL_INT_RANGES:  # half away from zero; out of range 0, as the spec's cases give it
        least, most = SMALL_INT_RANGES[dst.name]
        whole = np.trunc(x + np.copysign(0.5, x))
        return np.where((whole >= least) & (whole <= most), whole, 0).astype(np.int8).astype(dst)
    return x.astype(np.int64 if _integral(dst) and dst.kind != "b" else np.float32).astype(dst)


def _unsigned(dtype: np.dtype) -> bool:
    return dtype.kind == "u" or dtype.name.startswith("uint") or dtype == E8M0


def _small_float_case(op: str, version: int, src: np.dtype, dst: np.dtype) -> Case:
    """A pair with a float4/float6 type, which onnxruntime lacks: the spec's values, by hand."""
    if src in SMALL_FLOATS:
        grid = SMALL_FLOATS[src]
        wide = np.concatenate([grid[::3], -grid[1::4]]) if not _unsigned(dst) else grid[::3]
        if dst == E8M0:
            wide = grid[(grid > 0) & (np.log2(np.maximum(grid, 1e-9)) % 1 == 0)]  # powers of two: exact
        if dst.name in ("int2", "uint2", "int4", "uint4") or dst.kind in "iu":
            wide = wide[np.abs(wide) <= 7]
        x, want = wide.astype(src), _from_small_by_hand(wide.astype(np.float32), dst)
    else:
        grid = SMALL_FLOATS[dst]
        mids = (grid[:-1] + grid[1:]) / 2
        plain = np.concatenate([grid[::5], mids[::2], [grid[-1] * 1.5, 100, -mids[3], -grid[-2], np.inf, -np.inf]])
        if _integral(src):
            plain = np.array([0, 1, 2, 3, 5, 7, 9, 100, -3])
        if _unsigned(src):
            plain = plain[plain > 0]
        if src.name.startswith(("int2", "uint2", "int4", "uint4")):
            plain = plain[np.abs(plain) <= 1]
        if src.kind == "b":
            plain = np.array([0, 1])
        if src.kind != "O" and not _integral(src) and src != E8M0:
            plain = plain[np.isinf(plain) | (np.abs(plain) <= float(ml_dtypes.finfo(src).max))]
        if src == E8M0:
            plain = np.array([0.25, 0.5, 1, 2, 4, 8, 64])
        if src.kind == "O":
            x = np.array([("INF" if v > 0 else "-INF") if np.isinf(v) else repr(float(v)) for v in plain], object)
            want = _nearest(plain, dst)
        else:
            x = plain.astype(src)
            want = _nearest(x.astype(np.float64), dst)
    inputs, attrs = ([x], {"to": _code(dst)}) if op == "Cast" else ([x, np.array([], dst)], {})
    return Case(op, version, inputs, attrs, expected=[want], reason=NO_SMALL_FLOAT)


def _sweep(op: str, version: int) -> list[Case]:
    found = []
    for src in schema_types(op, version, "T1", exotic=True):
        for dst in schema_types(op, version, "T2", exotic=True):
            if src in SMALL_FLOATS or dst in SMALL_FLOATS:
                found.append(_small_float_case(op, version, src, dst))
                continue
            x = _source(rng(op, version, str(src), str(dst)), src, dst)
            if op == "Cast":
                inputs, attrs = [x], {"to": _code(dst)}
            else:
                inputs, attrs = [x, np.array([], dtype=dst)], {}
            found.append(Case(op, version, inputs, attrs, dtype_sweep=True))
    return found


def _float8_cases(op: str, version: int) -> list[Case]:
    """saturate 0 and 1 (and left to its default, 1) on out-of-range values, infinities and NaN for every 8-bit
    float type."""
    found = []
    wide = np.array([1000, -1000, 1e6, np.inf, -np.inf, np.nan, -0.0, 0.3, 500, 57344, 70000, 449], np.float32)
    for saturate in (None, 0, 1):
        given = {} if saturate is None else {"saturate": saturate}
        for dst in FLOAT8:
            for src in (np.float32, np.float16, np.float64):
                with np.errstate(over="ignore"):
                    x = wide.astype(src)  # float16: 1e6 and 70000 become infinities
                if op == "Cast":
                    found.append(Case(op, version, [x], {"to": _code(dst), **given}))
                else:
                    found.append(Case(op, version, [x, np.array([], dst)], given))
    return found


E8M0_INPUT = np.array([0.0, 1.0, 1.5, 3.0, 0.75, 2.7, 1e38, 3e38, np.inf, np.nan, 1e-38, 6.0, 1.25, 1.75], np.float32)
E8M0_EXPONENTS = {  # round_mode -> the power of two each input becomes (None: past the range)
    "down": [-127, 0, 0, 1, -1, 1, 126, None, None, None, -127, 2, 0, 0],
    "nearest": [-127, 0, 1, 2, 0, 1, 126, None, None, None, -126, 3, 0, 1],
}
NO_ROUND_MODE = "onnxruntime's CastLike rounds up whatever round_mode says; by hand, as the spec's table"


def _e8m0_by_hand(mode: str, saturate: int) -> np.ndarray:
    """float8e8m0 holds 2**-127 .. 2**127: saturating, past the range is the largest (NaN stays NaN); otherwise
    zero and past the range are NaN."""
    powers = [np.nan if e is None else 2.0 ** e for e in E8M0_EXPONENTS[mode]]
    if saturate:
        powers[7] = powers[8] = 2.0 ** 127
    else:
        powers[0] = np.nan
    return np.array(powers, np.float32).astype(E8M0)


def _e8m0_cases(op: str, version: int) -> list[Case]:
    """float8e8m0 under every round_mode, saturating or not."""
    found = []
    for saturate in (0, 1):
        for mode in ("up", "down", "nearest"):
            attrs = {"saturate": saturate, "round_mode": mode}
            if op == "Cast":
                found.append(Case(op, version, [E8M0_INPUT], {"to": TensorProto.FLOAT8E8M0, **attrs}))
            elif mode == "up":
                found.append(Case(op, version, [E8M0_INPUT, np.array([], E8M0)], attrs))
            else:
                found.append(Case(op, version, [E8M0_INPUT, np.array([], E8M0)], attrs,
                                  expected=[_e8m0_by_hand(mode, saturate)], reason=NO_ROUND_MODE))
    return found


CAST_1 = "onnxruntime implements Cast from 6; at 1 `to` is a type name"


def _cast() -> list[Case]:
    found = []
    for version in since_versions("Cast")[1:]:
        found += _sweep("Cast", version)
        if version >= 19:
            found += _float8_cases("Cast", version)
        if version >= 24:
            found += _e8m0_cases("Cast", version)
        found.append(Case("Cast", version, [np.array(2.5, np.float32)], {"to": TensorProto.INT64}))  # a scalar
    x = np.array([1.7, -2.2, 3.0, 0.0], np.float32)
    found.append(Case("Cast", 1, [x], {"to": "INT32"}, expected=[np.array([1, -2, 3, 0], np.int32)], reason=CAST_1))
    found.append(Case("Cast", 1, [x], {"to": "DOUBLE"}, expected=[x.astype(np.float64)], reason=CAST_1))
    found.append(Case("Cast", 21, [np.array([0.1, 1 / 3, 123456789, 1e-7, -0.0, np.inf, -np.inf, np.nan], np.float32)],
                      {"to": TensorProto.STRING}))
    found.append(Case("Cast", 21, [np.array([" 7", "-2E2", "+inf", "-Nan", "1e-5", "3.25"], dtype=object)],
                      {"to": TensorProto.FLOAT}))
    found.append(Case("Cast", 21, [np.array([200, -200, 70000], np.int32)], {"to": TensorProto.INT8}))
    found.append(Case("Cast", 21, [np.array([7, 8, 9, -9, 16, -1, 200], np.int32)], {"to": TensorProto.INT4}))
    found.append(Case("Cast", 25, [np.array([7, 8, 9, -9, 16, -1, 200], np.int64)], {"to": TensorProto.UINT2}))
    found.append(Case("Cast", 21, [np.array([2.5, -2.5, 3.5, 0.5, -0.5, 7.4], np.float32)], {"to": TensorProto.INT4}))
    beyond = np.array([-9, -8.5, -8.4, 7.4, 7.5, 8, 15, 100, np.inf, np.nan], np.float32)
    for version in (21, 25):  # every version: the spec's own cases (Cast-28, CastLike-25) give 0, onnxruntime wraps
        found.append(Case("Cast", version, [beyond], {"to": TensorProto.INT4}, reason=OUT_OF_RANGE,
                          expected=[np.array([0, 0, -8, 7, 0, 0, 0, 0, 0, 0], ml_dtypes.int4)]))
        found.append(Case("Cast", version, [beyond], {"to": TensorProto.UINT2}, reason=OUT_OF_RANGE,
                          expected=[np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0], ml_dtypes.uint2)]))
    found.append(Case("Cast", 13, [x], {"to": 999}, error="is not a tensor element type"))
    found.append(Case("Cast", 13, [np.array(["1.5", "one"], dtype=object)], {"to": TensorProto.FLOAT},
                      error="'one' is not a number"))
    return found


def _cast_like() -> list[Case]:
    found = []
    for version in since_versions("CastLike"):
        found += _sweep("CastLike", version)
        if version >= 19:
            found += _float8_cases("CastLike", version)
        if version >= 24:
            found += _e8m0_cases("CastLike", version)
        found.append(Case("CastLike", version, [np.array(-3.5, np.float64), np.array(0, np.int16)]))  # scalars
    return found


def _width(dtype: np.dtype) -> int:
    return {"int4": 4, "uint4": 4, "float4_e2m1fn": 4, "int2": 2, "uint2": 2}.get(dtype.name, dtype.itemsize * 8)


NO_BYTE_BITCAST = "onnxruntime has no BitCast between 8-bit types: each byte read as the other type"
NO_SMALL_BITCAST = "onnxruntime has no BitCast between 2-bit types: the patterns 0..3 read as each type"
NO_COMPLEX = "onnxruntime has no complex types: the little-endian bytes read by hand"


def _bit_cast() -> list[Case]:
    found = []
    types = schema_types("BitCast", 26, "T1", exotic=True)
    for src in types:
        for dst in types:
            if _width(src) != _width(dst):
                continue
            r = rng("BitCast", str(src), str(dst))
            low = 0 if src == E8M0 else -50
            x = values(r, (2, 3), src, *((0, 1) if "b" in src.kind + dst.kind else (low, 50)))  # bools: 0 or 1
            if src == FLOAT4 or dst == FLOAT4 or _width(src) == 4:
                found.append(_bit_cast_float4(src, dst))
                continue
            if _width(src) == 2:
                codes = np.array([0, 1, 2, 3, 3, 0])
                as_type = {"int2": np.where(codes >= 2, codes - 4, codes), "uint2": codes}
                found.append(Case("BitCast", 26, [as_type[src.name].astype(src)], {"to": _code(dst)},
                                  expected=[as_type[dst.name].astype(dst)], reason=NO_SMALL_BITCAST))
                continue
            if _width(src) == 8:  # each byte, as stored, read as the other type
                x = np.frombuffer(bytes([0, 1, 127, 128, 200, 255]), dtype=src if src.kind != "b" else np.uint8)
                x = x.astype(np.bool_) if src.kind == "b" else x.copy()
                want = np.frombuffer(x.astype(np.uint8).tobytes() if src.kind == "b" else x.tobytes(), dtype=dst)
                if dst.kind == "b" or src.kind == "b":
                    x, want = x[:2].copy(), want[:2].copy()  # bools hold 0 or 1
                found.append(Case("BitCast", 26, [x.reshape(2, -1)], {"to": _code(dst)},
                                  expected=[want.reshape(2, -1)], reason=NO_BYTE_BITCAST))
                continue
            found.append(Case("BitCast", 26, [x], {"to": _code(dst)}, dtype_sweep=True))
    pairs = [(1.0, 2.0), (0.0, -0.5)]
    raw = b"".join(struct.pack("<ff", re, im) for re, im in pairs)  # complex64: real then imaginary, little endian
    complex_bits = np.array([complex(re, im) for re, im in pairs], np.complex64)
    for code, fmt, dst in ((TensorProto.INT64, "<q", np.int64), (TensorProto.DOUBLE, "<d", np.float64),
                           (TensorProto.UINT64, "<Q", np.uint64)):
        words = np.array([struct.unpack(fmt, raw[8 * k:8 * k + 8])[0] for k in range(2)], dst)
        found.append(Case("BitCast", 26, [complex_bits], {"to": code}, expected=[words], reason=NO_COMPLEX))
        found.append(Case("BitCast", 26, [words], {"to": TensorProto.COMPLEX64}, expected=[complex_bits],
                          reason=NO_COMPLEX))
    found.append(Case("BitCast", 26, [np.array(1.0, np.float32)], {"to": TensorProto.INT32}))  # a scalar
    found.append(Case("BitCast", 26, [np.array([1, 2], np.int32)], {"to": TensorProto.INT64},
                      error="differ in width"))
    return found


def _bit_cast_float4(src: np.dtype, dst: np.dtype) -> Case:
    """The 16 bit patterns of a 4-bit type read as another (onnxruntime has no 4-bit BitCast)."""
    codes = np.arange(16)
    as_type = {"float4_e2m1fn": lambda c: (np.where(c & 8, -1, 1) * SMALL_FLOATS[FLOAT4][c & 7]).astype(FLOAT4),
               "int4": lambda c: np.where(c >= 8, c - 16, c).astype(ml_dtypes.int4),
               "uint4": lambda c: c.astype(ml_dtypes.uint4)}
    return Case("BitCast", 26, [as_type[src.name](codes)], {"to": _code(dst)}, expected=[as_type[dst.name](codes)],
                reason="onnxruntime has no 4-bit BitCast: the bit patterns 0..15 read as each type")


def cases() -> list[Case]:
    return _cast() + _cast_like() + _bit_cast()
