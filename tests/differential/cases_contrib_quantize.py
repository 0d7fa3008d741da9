"""onnxruntime's QuantizeLinear, DequantizeLinear, MatMulIntegerToFloat, DynamicQuantizeMatMul, MatMulNBits and
GatherBlockQuantized (explorer/executor/ops/contrib_quantize.py)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
from onnx import helper

from .contrib_support import DOMAIN, ort_graph
from .gen import rng, values
from .harness import Case

F32 = np.dtype(np.float32)
TOL = (1e-4, 1e-4)
INT8S = (np.uint8, np.int8)


def _case(op: str, inputs: list, attrs: dict | None = None, **kw) -> Case:
    return Case(op, 1, inputs, attrs or {}, domain=DOMAIN, **kw)


def cases() -> list[Case]:
    return _linear() + _integer_products() + _nbits() + _gather()


def _linear() -> list[Case]:
    found = []
    r = rng("QuantizeLinear", "com.microsoft")
    for dtype in (np.uint8, np.int8, np.uint16, np.int16, ml_dtypes.int4, ml_dtypes.uint4):
        dtype = np.dtype(dtype)
        x = values(r, (2, 3, 4), np.float32, -20, 20)
        x.reshape(-1)[:4] = [0.5, 1.5, -2.5, 2.5]  # ties go to even
        zero = np.array(1 if "u" in dtype.name else -1).astype(dtype)
        found.append(_case("QuantizeLinear", [x, np.float32(0.5), zero]))
        found.append(_case("DequantizeLinear", [values(r, (2, 3, 4), dtype, -8, 8), np.float32(0.25), zero]))
        per_axis = [np.array([0.5, 0.25, 2.0], np.float32), np.array([1, 2, 0]).astype(dtype)]
        found.append(_case("QuantizeLinear", [x, *per_axis], {"axis": 1}))
        found.append(_case("DequantizeLinear", [values(r, (2, 3, 4), dtype, 0, 7), *per_axis], {"axis": -2}))
    x = values(r, (5,), np.float16, -50, 50)
    found.append(_case("QuantizeLinear", [x, np.float16(0.5)]))
    found.append(_case("DequantizeLinear", [values(r, (5,), np.int32, -90, 90), np.float32(0.1)]))
    found.append(_case("DequantizeLinear", [values(r, (2, 3), np.uint8, 0, 255), np.float16(0.5), np.uint8(128)]))
    found.append(_case("QuantizeLinear", [x.astype(np.float32), np.array([0.5, 1.0], np.float32)],
                       error="must be a scalar when the node sets no axis"))
    return found


def _integer_products() -> list[Case]:
    found = []
    r = rng("MatMulIntegerToFloat")
    for a_type, b_type in ((np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)):  # onnxruntime's pairs
        a, b = values(r, (2, 3, 4), a_type, -128, 255), values(r, (4, 5), b_type, -128, 255)
        scales = [np.float32(0.05), np.float32(0.02)]
        zeros = [np.array(3).astype(a_type), np.array(-2 if b_type == np.int8 else 7).astype(b_type)]
        found.append(_case("MatMulIntegerToFloat", [a, b, *scales], tol=TOL))
        found.append(_case("MatMulIntegerToFloat", [a, b, *scales, *zeros, values(r, (5,), F32)], tol=TOL))
        per_column = [np.float32(0.05), values(r, (5,), F32, 0.01, 0.1)]
        found.append(_case("MatMulIntegerToFloat",
                           [a, b, *per_column, zeros[0], values(r, (5,), b_type, 0, 9)], tol=TOL))
    found.append(_case("MatMulIntegerToFloat", [values(r, (3, 4), np.uint8, 0, 255), values(r, (4, 2), np.int8),
                                                np.float16(0.05), np.float16(0.02)], tol=(1e-2, 1e-2)))
    small = values(r, (40, 6), np.int8, -64, 63)  # within 2 · 255 · 64: onnxruntime exact on any CPU
    found.append(_case("MatMulIntegerToFloat", [values(r, (3, 40), np.uint8, 0, 255), small, np.float32(0.05),
                                                values(r, (6,), F32, 0.01, 0.1), np.uint8(128),
                                                np.zeros(6, np.int8), values(r, (6,), F32)], tol=TOL))
    found.append(_case("DynamicQuantizeMatMul", [values(r, (4, 40), F32, -2, 3), small, np.float32(0.03)], tol=TOL))
    for b_type in INT8S:
        for a in (values(r, (3, 4), F32, -3, 3), values(r, (2, 2, 4), F32, 0.5, 3), np.zeros((2, 4), np.float32)):
            b = values(r, (4, 6), b_type, -128, 255)
            found.append(_case("DynamicQuantizeMatMul", [a, b, np.float32(0.03)], tol=TOL))
            found.append(_case("DynamicQuantizeMatMul", [a, b, values(r, (6,), F32, 0.01, 0.1),
                                                         values(r, (6,), b_type, 0, 9), values(r, (6,), F32)],
                               tol=TOL))
    return found


def _pack(q: np.ndarray, bits: int) -> np.ndarray:
    """Values along the last axis packed lowest bits first, 8 / bits to a byte."""
    per_byte = 8 // bits
    q = q.reshape(*q.shape[:-1], -1, per_byte).astype(np.uint8)
    return np.bitwise_or.reduce(q << (np.arange(per_byte, dtype=np.uint8) * bits), axis=-1).astype(np.uint8)


def _nbits_case(r: np.random.Generator, bits: int, k: int, n: int, block: int, zeros: str, bias: bool = False,
                dtype: np.dtype = F32, rows: tuple[int, ...] = (3,), **attrs) -> Case:
    blocks = -(-k // block)
    q = r.integers(0, 1 << bits, (n, blocks, block))
    b = _pack(q, bits)
    scales = values(r, (n, blocks), dtype, 0.01, 0.1)
    inputs: list = [values(r, (*rows, k), dtype, -1, 1), b, scales]
    if zeros == "packed":
        z = r.integers(0, 1 << bits, (n, -(-blocks // (8 // bits)) * (8 // bits)))
        inputs.append(_pack(z, bits))
    elif zeros == "float":
        inputs.append(values(r, (n, blocks), dtype, 0, (1 << bits) - 1))
    else:
        inputs.append(None)
    inputs += [None, values(r, (n,), dtype)] if bias else []
    while inputs[-1] is None:
        inputs.pop()
    return _case("MatMulNBits", inputs, {"K": k, "N": n, "bits": bits, "block_size": block, **attrs},
                 tol=(1e-2, 1e-2) if dtype != F32 else TOL)


def _nbits() -> list[Case]:
    r = rng("MatMulNBits")
    found = []
    for bits in (2, 4, 8):
        for zeros in ("none", "packed", "float") if bits < 8 else ("none", "packed"):
            found.append(_nbits_case(r, bits, 64, 6, 32, zeros, bias=zeros == "packed"))
    found.append(_eight_bits_float_zeros(r))
    found += [
        _nbits_case(r, 4, 40, 5, 16, "packed", rows=(2, 3)),  # K not a multiple of the block
        _nbits_case(r, 4, 48, 7, 16, "packed", accuracy_level=4),
        _nbits_case(r, 4, 32, 4, 16, "none", accuracy_level=1, weight_prepacked=0),
        _nbits_case(r, 4, 64, 8, 32, "float", dtype=np.dtype(np.float16), bias=True),
        _nbits_case(r, 8, 32, 3, 16, "none", rows=(0,)),
    ]
    omitted = _nbits_case(r, 4, 32, 3, 16, "none", bias=True)
    omitted.inputs[1] = np.zeros((3, 0, 8), np.uint8)
    found.append(omitted)
    return found


def _eight_bits_float_zeros(r: np.random.Generator) -> Case:
    """onnxruntime's CPU kernel refuses 8-bit weights with float zero points: judged by onnxruntime on the
    dequantization written out ((q - zero point) × scale, then MatMul)."""
    case = _nbits_case(r, 8, 64, 6, 32, "float")
    a, b, scales, zeros = case.inputs
    nodes = [helper.make_node("Cast", ["b"], ["q"], to=onnx.TensorProto.FLOAT),
             helper.make_node("Reshape", ["q", "blocked"], ["qb"]), helper.make_node("Sub", ["qb", "z"], ["c"]),
             helper.make_node("Mul", ["c", "s"], ["w"]), helper.make_node("Reshape", ["w", "flat"], ["wf"]),
             helper.make_node("Transpose", ["wf"], ["wt"]), helper.make_node("MatMul", ["a", "wt"], ["y"])]
    feeds = {"a": a, "b": b, "blocked": np.array([6, 2, 32], np.int64), "z": zeros[..., None],
             "s": scales[..., None], "flat": np.array([6, 64], np.int64)}
    case.expected = ort_graph(nodes, feeds, ["y"])
    case.reason = "onnxruntime's CPU kernel refuses 8-bit weights with float zero points: judged by onnxruntime " \
                  "on the dequantization written out"
    return case


def _gather() -> list[Case]:
    r = rng("GatherBlockQuantized")
    found = []
    rows, width, block = 5, 32, 16
    indices = [np.array([[0, 4], [-1, 7]], np.int64), np.array([2, -6, 3], np.int32)]  # 7 and -6 are out of range
    scales = values(r, (rows, width // block), F32, 0.01, 0.1)
    for dtype in (ml_dtypes.int4, ml_dtypes.uint4):
        data = values(r, (rows, width), dtype, -8, 15)
        zeros = values(r, (rows, width // block), dtype, -8, 15)
        for index in indices:
            found.append(_case("GatherBlockQuantized", [data, index, scales], {"block_size": block}))
            found.append(_case("GatherBlockQuantized", [data, index, scales, zeros],
                               {"block_size": block, "bits": 4, "gather_axis": 0, "quantize_axis": 1}))
        columns = np.array([1, 30, -2], np.int64)
        found.append(_case("GatherBlockQuantized", [data.T.copy(), columns, values(r, (width // block, rows), F32)],
                           {"block_size": block, "gather_axis": 0, "quantize_axis": 0}))
        found.append(_case("GatherBlockQuantized", [values(r, (2, rows, width), dtype, -8, 15), indices[1],
                                                    values(r, (2, rows, width // block), np.float16, 0.01, 0.1)],
                           {"block_size": block, "gather_axis": 1, "quantize_axis": -1}))
    for bits in (2, 4, 8):
        per_byte = 8 // bits
        q = r.integers(0, 1 << bits, (rows, width))
        packed = _pack(q, bits)
        z = _pack(r.integers(0, 1 << bits, (rows, -(-(width // block) // per_byte) * per_byte)), bits)
        found.append(_case("GatherBlockQuantized", [packed, indices[0], scales], {"block_size": block, "bits": bits}))
        found.append(_case("GatherBlockQuantized", [packed, indices[1], scales, z],
                           {"block_size": block, "bits": bits}))
    for dtype in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2):
        data = values(r, (rows, width), dtype, -4, 4)
        found.append(_case("GatherBlockQuantized", [data, indices[0], scales], {"block_size": block}))
        found.append(_case("GatherBlockQuantized", [data, indices[1], values(r, (1, 1), F32, 0.1, 1)],
                           {"block_size": 0}))
    found.append(_case("GatherBlockQuantized", [values(r, (rows, width), ml_dtypes.int4), indices[1], scales],
                       {"block_size": 12}, error="must be a power of 2"))
    return found
