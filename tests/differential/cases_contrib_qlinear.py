"""onnxruntime's quantized uint8/int8 operators (explorer/executor/ops/contrib_qlinear.py) and QAttention
(explorer/executor/ops/contrib_attention.py)."""
from __future__ import annotations

import copy

import numpy as np

from .contrib_support import DOMAIN
from .gen import rng, values
from .harness import Case, run_onnxruntime

INT8S = (np.dtype(np.uint8), np.dtype(np.int8))
F32 = np.dtype(np.float32)


def _case(op: str, inputs: list, attrs: dict | None = None, **kw) -> Case:
    return Case(op, 1, inputs, attrs or {}, domain=DOMAIN, **kw)


def _q(r: np.random.Generator, dims: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return values(r, dims, dtype, -128, 255)


def _zero(dtype: np.dtype, value: int) -> np.ndarray:
    return np.array(value if dtype == np.uint8 else value - 128).astype(dtype)


def _defaulted(case: Case) -> Case:
    """A case omitting zero points, which onnxruntime refuses (or crashes on, without the last one): judged by
    onnxruntime on the same inputs with them given as 0, the schema's default."""
    explicit = copy.copy(case)
    dtype = case.inputs[0].dtype
    slots = {"QLinearAdd": (2, 5, 7), "QLinearMul": (2, 5, 7)}.get(case.op, (2, 4))
    inputs = list(case.inputs) + [None] * (max(slots) + 1 - len(case.inputs))
    explicit.inputs = [np.zeros((), dtype) if i in slots and v is None else v for i, v in enumerate(inputs)]
    case.expected = run_onnxruntime([explicit])[0]
    case.reason = "onnxruntime refuses omitted zero points (and crashes without the last one): judged by " \
                  "onnxruntime with them given as 0, their default"
    return case


def cases() -> list[Case]:
    return _elementwise() + _concat() + _pools() + _softmax() + _qgemm() + _qattention()


def _elementwise() -> list[Case]:
    found = []
    for dtype in INT8S:
        r = rng("QLinear elementwise", dtype.name)
        for a_dims, b_dims in (((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((0, 2), (2,))):
            for op in ("QLinearAdd", "QLinearMul"):
                inputs = [_q(r, a_dims, dtype), np.float32(0.03), _zero(dtype, 120), _q(r, b_dims, dtype),
                          np.float32(0.07), _zero(dtype, 131), np.float32(0.05 if op == "QLinearAdd" else 0.6),
                          _zero(dtype, 128)]
                found.append(_case(op, inputs))
        found.append(_defaulted(_case("QLinearAdd", [inputs[0], inputs[1], None, inputs[3], inputs[4], None,
                                                     inputs[6]])))
        x = _q(r, (2, 3, 5), dtype)
        for op, attrs in (("QLinearSigmoid", {}), ("QLinearLeakyRelu", {}), ("QLinearLeakyRelu", {"alpha": 0.3})):
            found.append(_case(op, [x, np.float32(0.05), _zero(dtype, 100), np.float32(1 / 256), _zero(dtype, 0)],
                               attrs))
            found.append(_defaulted(_case(op, [x, np.float32(0.1), None, np.float32(0.02)], attrs)))
    return found


def _concat() -> list[Case]:
    found = []
    for dtype in INT8S:
        r = rng("QLinearConcat", dtype.name)
        parts = [_q(r, (2, 3), dtype), np.float32(0.05), _zero(dtype, 128),
                 _q(r, (2, 4), dtype), np.float32(0.1), _zero(dtype, 120),
                 _q(r, (2, 1), dtype), np.float32(0.05), _zero(dtype, 128)]
        found.append(_case("QLinearConcat", [np.float32(0.05), _zero(dtype, 128), *parts], {"axis": 1}))
        found.append(_case("QLinearConcat", [np.float32(0.02), _zero(dtype, 140), parts[0], parts[1], parts[2],
                                             _q(r, (1, 3), dtype), np.float32(0.2), _zero(dtype, 100)],
                           {"axis": -2}))
    return found


def _pools() -> list[Case]:
    found = []
    for dtype in INT8S:
        r = rng("QLinear pools", dtype.name)
        x = _q(r, (2, 3, 5, 6), dtype)
        params = [np.float32(0.05), _zero(dtype, 120), np.float32(0.04), _zero(dtype, 130)]
        for attrs in ({"kernel_shape": [2, 2]},
                      {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1], "count_include_pad": 1},
                      {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "ceil_mode": 1, "strides": [2, 2]},
                      {"kernel_shape": [2, 3], "auto_pad": "SAME_UPPER"}):
            found.append(_case("QLinearAveragePool", [x, *params], attrs))
        found.append(_case("QLinearAveragePool", [x.transpose(0, 2, 3, 1).copy(), *params],
                           {"kernel_shape": [2, 2], "channels_last": 1}))
        found.append(_defaulted(_case("QLinearAveragePool", [_q(r, (1, 2, 7), dtype), params[0], None, params[2]],
                                      {"kernel_shape": [3]})))
        for channels_last in (0, 1):
            found.append(_case("QLinearGlobalAveragePool", [x, *params], {"channels_last": channels_last}))
        found.append(_case("QLinearGlobalAveragePool", [_q(r, (2, 4, 9), dtype), *params]))
    return found


def _softmax() -> list[Case]:
    found = []
    for dtype in INT8S:
        r = rng("QLinearSoftmax", dtype.name)
        x = _q(r, (2, 3, 5), dtype)
        out_zero = _zero(dtype, 0)
        for attrs in ({"opset": 13}, {"opset": 13, "axis": 1}, {"opset": 12}, {"opset": 11, "axis": 2},
                      {"opset": 12, "axis": 0}):
            for scale in (0.1, 0.02):
                found.append(_case("QLinearSoftmax", [x, np.float32(scale), _zero(dtype, 128), np.float32(1 / 256),
                                                      out_zero], attrs))
    return found


def _qgemm() -> list[Case]:
    found = []
    for a_type, b_type in ((INT8S[0], INT8S[0]), (INT8S[0], INT8S[1]), (INT8S[1], INT8S[1])):
        r = rng("QGemm", a_type.name, b_type.name)
        a, b = _q(r, (3, 4), a_type), _q(r, (4, 5), b_type)
        head = [a, np.float32(0.02), _zero(a_type, 125), b]
        for b_scale, b_zero in ((np.float32(0.03), _zero(b_type, 128)),
                                (values(r, (5,), F32, 0.01, 0.05), np.full(5, 128 if b_type == np.uint8 else 0,
                                                                           b_type))):
            c = values(r, (5,), np.int32, -500, 500)
            found.append(_case("QGemm", [*head, b_scale, b_zero], {"alpha": 0.5}, tol=(1e-5, 1e-5)))
            found.append(_case("QGemm", [*head, b_scale, b_zero, c, np.float32(0.1), _zero(a_type, 120)]))
        found.append(_case("QGemm", [a.T.copy(), np.float32(0.02), _zero(a_type, 125), b.T.copy(), np.float32(0.03),
                                     _zero(b_type, 128), None, np.float32(0.2), _zero(a_type, 128)],
                           {"transA": 1, "transB": 1}))
    r = rng("QGemm", "cannot saturate")  # uint8 × int8 within 2 · 255 · 64: onnxruntime exact on any CPU
    a, b = _q(r, (4, 33), INT8S[0]), values(r, (33, 6), INT8S[1], -64, 63)
    found.append(_case("QGemm", [a, np.float32(0.02), _zero(INT8S[0], 125), b, values(r, (6,), F32, 0.01, 0.05),
                                 np.zeros(6, np.int8), values(r, (6,), np.int32, -500, 500), np.float32(0.5),
                                 _zero(INT8S[0], 120)]))
    return found


def _qattention() -> list[Case]:
    found = []
    batch, seq, hidden, heads = 2, 3, 8, 2
    for w_type in INT8S:
        r = rng("QAttention", w_type.name)
        x, w = _q(r, (batch, seq, hidden), INT8S[0]), _q(r, (hidden, 3 * hidden), w_type)
        bias = values(r, (3 * hidden,), F32, -1, 1)
        head = [x, w, bias, np.float32(0.02), np.float32(0.01)]
        zeros = [_zero(INT8S[0], 128), _zero(w_type, 128)]
        found.append(_case("QAttention", head, {"num_heads": heads}, tol=(1e-4, 1e-5)))
        found.append(_case("QAttention", head + [np.array([2, 3], np.int32)] + zeros,
                           {"num_heads": heads, "unidirectional": 1}, tol=(1e-4, 1e-5)))
        per_column = [x, w, bias, np.float32(0.02), values(r, (3 * hidden,), F32, 0.005, 0.02)]
        past = values(r, (2, batch, heads, 4, hidden // heads), F32, -1, 1)
        found.append(_case("QAttention", per_column + [None, zeros[0], None, past],
                           {"num_heads": heads, "scale": 0.3, "mask_filter_value": -1000.0, "do_rotary": 0,
                            "past_present_share_buffer": 0}, outputs=2, tol=(1e-4, 1e-5)))
    r = rng("QAttention", "cannot saturate")  # uint8 × int8 within 2 · 255 · 64: onnxruntime exact on any CPU
    x, w = _q(r, (batch, seq, hidden), INT8S[0]), values(r, (hidden, 3 * hidden), INT8S[1], -64, 63)
    found.append(_case("QAttention", [x, w, values(r, (3 * hidden,), F32, -1, 1), np.float32(0.02), np.float32(0.01),
                                      None, _zero(INT8S[0], 128), np.int8(0)], {"num_heads": heads}, tol=(1e-4, 1e-5)))
    return found
