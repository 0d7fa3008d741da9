"""QuantizeLinear, DequantizeLinear (every version: per tensor, per axis, blocked; saturate, output_dtype,
precision), DynamicQuantizeLinear, QLinearConv."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .gen import rng, since_versions, values
from .harness import Case

ZERO_TYPES = {10: (np.uint8, np.int8), 13: (np.uint8, np.int8), 19: (np.uint8, np.int8),
              21: (np.uint8, np.int8, np.uint16, np.int16)}


def _zero_types(version: int) -> tuple:
    return ZERO_TYPES[max(v for v in ZERO_TYPES if v <= version)]


def _quantize(version: int) -> list[Case]:
    found = []
    r = rng("QuantizeLinear", version)
    for dtype in _zero_types(version):
        x = values(r, (3, 4), np.float32, -300, 300)
        found.append(Case("QuantizeLinear", version, [x, np.array(0.7, np.float32), values(r, (), dtype, 0, 9)]))
    found.append(Case("QuantizeLinear", version, [values(r, (2, 3), np.float32, -50, 300), np.array(0.9, np.float32)]))
    found.append(Case("QuantizeLinear", version, [np.array([0.5, 1.5, 2.5, -0.5, -1.5], np.float32),
                                                  np.array(1.0, np.float32), np.array(0, np.int8)]))
    if version >= 13:
        x = values(r, (3, 4), np.float32, -100, 100)
        found.append(Case("QuantizeLinear", version, [x, np.array([0.7, 0.3, 1.5], np.float32),
                                                      np.array([10, 20, 30], np.uint8)], attrs={"axis": 0}))
    if version >= 19:
        x = values(r, (3, 4), np.float16, -100, 100)
        found.append(Case("QuantizeLinear", version, [x, np.array(0.5, np.float16), np.array(3, np.uint8)],
                          attrs={"saturate": 1}))
        big = np.array([1e6, -1e6, 3.0, 500.0], np.float32)
        for fp8, saturate in ((ml_dtypes.float8_e4m3fn, 1), (ml_dtypes.float8_e5m2, 0)):
            want = (big / 2).astype(np.float32)
            if saturate:
                want = np.clip(want, -448, 448)
            found.append(Case("QuantizeLinear", version, [big, np.array(2.0, np.float32), np.array(0, fp8)],
                              attrs={"saturate": saturate}, expected=[want.astype(fp8)], tol=(0, 0),
                              reason="onnxruntime cannot take float8 from Python; the spec's saturation table "
                                     "(e4m3fn clips to 448, e5m2 without saturate overflows to inf)"))
    if version >= 21:
        x = values(r, (3, 8), np.float32, -100, 100)
        scale = values(r, (3, 2), np.float32, 0.5, 2)
        zero = values(r, (3, 2), np.uint8, 0, 9)
        found.append(Case("QuantizeLinear", version, [x, scale, zero], attrs={"axis": 1, "block_size": 4}))
        found.append(Case("QuantizeLinear", version, [x, np.array(0.7, np.float32)], attrs={"output_dtype": 3}))
    if version >= 23:
        x = values(r, (2, 3), np.float32, -100, 100)
        want = np.clip(np.rint(x / np.float32(0.7)) + 1, -128, 127).astype(np.int8)
        found.append(Case("QuantizeLinear", version, [x, np.array(0.7, np.float32), np.array(1, np.int8)],
                          attrs={"precision": 1}, expected=[want],
                          reason="onnxruntime does not know precision; saturate(round_half_even(x / scale) + zero "
                                 "point) in float"))
    if version > 21:
        for case in found:
            if case.judge_version is None and case.expected is None and "precision" not in case.attrs:
                case.judge_version = 21
                case.reason = f"onnxruntime implements QuantizeLinear up to 21; {version} adds only types"
    return found


def _dequantize(version: int) -> list[Case]:
    found = []
    r = rng("DequantizeLinear", version)
    for dtype in _zero_types(version):
        found.append(Case("DequantizeLinear", version, [values(r, (3, 4), dtype, -128, 255), np.array(0.7, np.float32),
                                                        values(r, (), dtype, 0, 9)]))
    found.append(Case("DequantizeLinear", version, [values(r, (3, 4), np.int32, -1000, 1000),
                                                    np.array(0.7, np.float32)]))
    for dtype in (np.uint8, np.int8):  # every 8-bit value per tensor (explorer looks them up in a table)
        every = np.arange(256, dtype=np.uint8).view(dtype).reshape(16, 16)
        scale = np.array([0.0371] if version >= 13 else 0.0371, np.float32)
        zero = np.array([3] if version >= 13 else 3, dtype)
        found.append(Case("DequantizeLinear", version, [every, scale, zero], tol=(0, 0)))
        found.append(Case("DequantizeLinear", version, [every[::2, 1:], np.array(1e-3, np.float32)], tol=(0, 0)))
    if version >= 13:
        found.append(Case("DequantizeLinear", version, [values(r, (3, 4), np.int8, -128, 127),
                                                        np.array([0.7, 0.3, 1.5, 2.0], np.float32),
                                                        np.array([1, 2, 3, 4], np.int8)], attrs={"axis": -1}))
    if version >= 19:
        x = np.array([1.5, -3.0, 448.0], np.float32).astype(ml_dtypes.float8_e4m3fn)
        found.append(Case("DequantizeLinear", version, [x, np.array(2.0, np.float32)],
                          expected=[np.array([3.0, -6.0, 896.0], np.float32)], tol=(0, 0),
                          reason="onnxruntime cannot take float8 from Python; x * scale"))
    if version >= 21:
        found.append(Case("DequantizeLinear", version, [values(r, (4, 3), np.uint8, 0, 255),
                                                        values(r, (2, 3), np.float32, 0.5, 2),
                                                        values(r, (2, 3), np.uint8, 0, 9)],
                          attrs={"axis": 0, "block_size": 2}))
    if version >= 23:
        x = values(r, (2, 3), np.uint8, 0, 255)
        found.append(Case("DequantizeLinear", version, [x, np.array(0.5, np.float32)], attrs={"output_dtype": 1},
                          expected=[x.astype(np.float32) * np.float32(0.5)],
                          reason="onnxruntime does not know output_dtype; y = x * scale as float"))
    if version > 21:
        for case in found:
            if case.judge_version is None and case.expected is None:
                case.judge_version = 21
                case.reason = f"onnxruntime implements DequantizeLinear up to 21; {version} adds only types"
    return found


def _qlinear_conv() -> list[Case]:
    r = rng("QLinearConv")
    found = []
    for x_type, w_type in ((np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)):
        x = values(r, (1, 4, 6, 6), x_type, -128, 255)
        w = values(r, (4, 2, 3, 3), w_type, -128, 127)
        per_channel = values(r, (4,), np.float32, 0.01, 0.05)
        found.append(Case("QLinearConv", 10, [x, np.array(0.05, np.float32), values(r, (), x_type, 0, 9), w,
                                              per_channel, np.zeros(4, w_type), np.array(0.2, np.float32),
                                              values(r, (), x_type, 0, 9), values(r, (4,), np.int32, -100, 100)],
                          attrs={"group": 2, "strides": [2, 1], "pads": [1, 1, 0, 1], "dilations": [1, 2],
                                 "kernel_shape": [3, 3]}))
        found.append(Case("QLinearConv", 10, [x, np.array(0.05, np.float32), values(r, (), x_type, 0, 9),
                                              values(r, (3, 4, 2, 2), w_type, -128, 127), np.array(0.02, np.float32),
                                              np.array(0, w_type), np.array(0.3, np.float32),
                                              values(r, (), x_type, 0, 9)], attrs={"auto_pad": "SAME_UPPER"}))
    small = values(r, (6, 4, 3, 3), np.int8, -64, 63)  # within 2 · 255 · 64: onnxruntime exact on any CPU
    found.append(Case("QLinearConv", 10, [values(r, (1, 4, 7, 7), np.uint8, 0, 255), np.array(0.05, np.float32),
                                          np.array(200, np.uint8), small, values(r, (6,), np.float32, 0.01, 0.05),
                                          np.zeros(6, np.int8), np.array(0.5, np.float32), np.array(7, np.uint8)],
                      attrs={"pads": [1, 1, 1, 1]}))
    return found


def cases() -> list[Case]:
    found = []
    for version in since_versions("QuantizeLinear"):
        found += _quantize(version)
    for version in since_versions("DequantizeLinear"):
        found += _dequantize(version)
    for k, x_shape in enumerate([(3, 4), (2, 5)]):
        r = rng("DynamicQuantizeLinear", k)
        found.append(Case("DynamicQuantizeLinear", 11, [values(r, x_shape, np.float32, -3 + 3 * k, 5)], outputs=3))
    return found + _qlinear_conv()
