"""Conversion of a tensor to any ONNX element type, as Cast defines it (and onnxruntime computes it where the spec
leaves room): numpy's types, strings, and the types numpy holds through ml_dtypes (bfloat16, the 8-bit floats,
float8e8m0, the 6- and 4-bit floats, and the 4- and 2-bit integers).

- Floats to the 8-bit floats round to nearest even; with `saturate` out-of-range values and infinities become the
  largest finite value, without it NaN (or infinity, where the type has one).
- To the 6- and 4-bit floats (no infinity, no NaN): nearest even, saturating at their largest value.
- float8e8m0 keeps only a power of two: `round_mode` up, down or nearest (ties up); `saturate` clamps to its range,
  without it zero and values past its range are NaN.
- To the 4- and 2-bit integers: integers keep their low bits (the spec's rule for fixed point); floats round half
  away from zero, and a float then out of the type's range (undefined by the spec's text) is 0, as the spec's
  own cases (onnx 1.23: Cast-28, CastLike-25) and onnx.reference give it; onnxruntime keeps its low bits.
- Numbers print as onnxruntime prints them: floats with 8 significant digits, "INF", "-INF", "NaN"; strings parse
  as decimal or scientific numbers, "INF"/"+INF"/"-INF"/"NaN" in any case.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx

STRING = np.dtype(object)
FLOAT8 = frozenset(np.dtype(t) for t in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
                                         ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz))
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
SMALL_INTS = {np.dtype(ml_dtypes.int4): (4, True), np.dtype(ml_dtypes.uint4): (4, False),
              np.dtype(ml_dtypes.int2): (2, True), np.dtype(ml_dtypes.uint2): (2, False)}
"""dtype -> (bits, signed) of the integer types narrower than a byte (numpy holds one value per byte)."""
FLOAT4 = np.dtype(ml_dtypes.float4_e2m1fn)


def element_dtype(code: int) -> np.dtype:
    """The numpy dtype of a TensorProto element type (strings as object); ValueError for codes it does not name."""
    if code == onnx.TensorProto.STRING:
        return STRING
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code))
    except (KeyError, ValueError, TypeError):
        raise ValueError(f"{code!r} is not a tensor element type") from None


def is_numpy_native(dtype: np.dtype) -> bool:
    """Whether numpy computes in the dtype itself (bool, integers, float16/32/64, complex, strings), unlike the
    ml_dtypes types (whose kind is "V", or "f" for float8e5m2)."""
    return dtype.type.__module__ == "numpy"


def bit_width(dtype: np.dtype) -> int:
    """Bits per element as ONNX counts them (4 for int4, uint4 and float4e2m1; 2 for int2 and uint2)."""
    if dtype in SMALL_INTS:
        return SMALL_INTS[dtype][0]
    return 4 if dtype == FLOAT4 else dtype.itemsize * 8


def convert(x: np.ndarray, target: np.dtype, saturate: bool = True, round_mode: str = "up") -> np.ndarray:
    """x as `target`, by Cast's rules (see the module's docstring)."""
    if x.dtype == target:
        return x
    if target == STRING:
        return _to_string(x)
    if x.dtype.kind in "OUS":
        x = _parse(x, target)
    elif not is_numpy_native(x.dtype):  # every ml_dtypes value is exact in float32 (integers in int8)
        x = x.astype(np.int8 if x.dtype in SMALL_INTS else np.float32)
    if target in SMALL_INTS:
        return _to_small_int(x, target)
    if target == E8M0:
        return _to_e8m0(x, saturate, round_mode)
    if not is_numpy_native(target):  # bfloat16, float8, float6, float4
        if x.dtype.kind in "f":
            x = x.astype(np.float32)  # onnxruntime converts through float
        if target in FLOAT8 and saturate:
            finite = float(ml_dtypes.finfo(target).max)  # type: ignore[no-untyped-call]
            x = np.clip(x, -finite, finite)
    return x.astype(target)


def _to_small_int(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """Integers: their low bits, sign-extended if signed. Floats: rounded half away from zero; NaN, infinities and
    values out of the target's range are 0."""
    bits, signed = SMALL_INTS[target]
    if x.dtype.kind in "fc":
        real = np.nan_to_num(np.real(x).astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        whole = np.trunc(real + np.copysign(0.5, real))
        low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        return np.where((whole >= low) & (whole <= high), whole, 0).astype(np.int8).astype(target)
    values = x.astype(np.int64) & ((1 << bits) - 1)
    if signed:
        values = np.where(values >= 1 << (bits - 1), values - (1 << bits), values)
    return values.astype(target)


def _to_e8m0(x: np.ndarray, saturate: bool, round_mode: str) -> np.ndarray:
    """The power of two float8e8m0 keeps: float32's exponent field, rounded by `round_mode`; 255 is NaN."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    exponent = ((bits >> 23) & 0xFF).astype(np.int32)
    mantissa = bits & 0x7FFFFF
    special = exponent == 0xFF
    if round_mode == "up":
        exponent = exponent + (mantissa > 0)
    elif round_mode == "nearest":
        exponent = exponent + (mantissa >= 0x400000)
    elif round_mode != "down":
        raise ValueError(f"round_mode {round_mode!r} is none of 'up', 'down', 'nearest'")
    if saturate:
        infinite = special & (mantissa == 0)
        code = np.where(infinite, 0xFE, np.where(special, 0xFF, np.minimum(exponent, 0xFE)))
    else:  # zero, values past the largest (2**127) and infinities are NaN
        past = special | (bits & 0x7FFFFFFF == 0) | (((bits >> 23) & 0xFF == 0xFE) & (mantissa > 0))
        code = np.where(past, 0xFF, np.minimum(exponent, 0xFF))
    return code.astype(np.uint8).view(E8M0)


def _format(value: object) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "NaN"
        if np.isinf(value):
            return "INF" if value > 0 else "-INF"
        return f"{float(value):.8g}"
    return str(value)


def _to_string(x: np.ndarray) -> np.ndarray:
    if not is_numpy_native(x.dtype):
        x = x.astype(np.int8 if x.dtype in SMALL_INTS else np.float32)
    texts = [_format(v) for v in x.reshape(-1).tolist()]
    return np.array(texts, dtype=object).reshape(x.shape)


_SPECIAL = {"inf": np.inf, "+inf": np.inf, "-inf": -np.inf, "nan": np.nan, "+nan": np.nan, "-nan": np.nan}


def _number(text: str, integral: bool) -> int | float:
    lowered = text.lower()
    if lowered in _SPECIAL:
        return _SPECIAL[lowered]
    if integral:
        try:
            return int(text)
        except ValueError:
            return int(float(text))  # "2.7" to an integer type: the spec leaves it open; onnxruntime truncates
    return float(text)


def _parse(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """Strings as numbers: int64 for integer and bool targets, float64 otherwise (ValueError names the string)."""
    integral = target.kind in "iub" or target in SMALL_INTS
    parsed = []
    for item in x.reshape(-1).tolist():
        text = (item.decode() if isinstance(item, bytes) else str(item)).strip()
        try:
            parsed.append(_number(text, integral))
        except (ValueError, OverflowError):
            raise ValueError(f"the string {text!r} is not a number") from None
    if integral and all(isinstance(v, int) for v in parsed):
        wide = np.uint64 if target == np.uint64 else np.int64
        return np.array(parsed, dtype=wide).reshape(x.shape)
    return np.array(parsed, dtype=np.float64).reshape(x.shape)
