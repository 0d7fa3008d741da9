"""Exact integer arithmetic for the integer-product operators, written from their specs and independent of
explorer's kernels: the docs of MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv (onnx.defs), and of
onnxruntime's MatMulIntegerToFloat, DynamicQuantizeMatMul, QGemm, QAttention, DynamicQuantizeLSTM and MatMulNBits
(explorer/spec/contrib_schemas.json). Products and their sums are int64 numpy arithmetic on the zero-point-shifted
integers, so they are exact; what follows them is as the docs say: a scale (float32 tensors, multiplied in
float32), a bias, rounding half to even and saturation into the output type.

`saturate=True` computes instead what onnxruntime's u8s8 kernel computes on an x86 CPU without VNNI (AVX2, or
AVX512BW without VNNI): MLAS multiplies the raw uint8 A by the raw int8 B with vpmaddubsw, which adds the two
products of each pair of adjacent reduction indices (k = 2i, 2i + 1) into int16 with saturation; the zero points
are corrected afterwards from row and column sums, exactly. So its result is the exact one plus, for every pair,
clip(p, -32768, 32767) - p of the raw pair sum p. Other type pairs (u8u8, s8s8, s8u8) are exact there, and so
are onnxruntime's ConvInteger and its depthwise QLinearConv (one input and one output channel per group), as
measured. The reduction axis's order decides the pairs: a matrix product's K; QLinearConv's (kernel position,
channel) with the channel fastest, as onnxruntime runs it channels-last.
"""
from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

INT16_MIN, INT16_MAX = -32768, 32767
ROWS_PER_CHUNK = 1 << 22  # elements of the pair-sum array made at once

SCHEMAS = Path(__file__).resolve().parents[2] / "explorer" / "spec" / "contrib_schemas.json"


def contrib_doc(op: str) -> str:
    """onnxruntime's own doc of a com.microsoft operator (what the reference below is written from)."""
    operators = json.loads(SCHEMAS.read_text())["operators"]["com.microsoft"]
    return str(operators[f"{op}-1"]["doc"])


def _i64(x: Any) -> np.ndarray:
    return np.asarray(x).astype(np.int64)


def _f32(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def _saturate(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.clip(values, info.min, info.max).astype(dtype)


def may_saturate(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether onnxruntime's u8s8 kernel could saturate on these raw operands, whatever pairs it forms: uint8 A
    times int8 B with 2 · max(A) · max|B| beyond int16."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != np.uint8 or b.dtype != np.int8 or not a.size or not b.size:
        return False
    return 2 * int(a.max()) * int(np.abs(b.astype(np.int64)).max()) > INT16_MAX


def pair_excess(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For raw A [M, K] and B [K, N]: per output, the sum over pairs (k = 2i, 2i + 1) of clip16(p) - p where p is
    the pair's raw sum of products (0 everywhere unless A is uint8 and B int8)."""
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n), np.int64)
    if a.dtype != np.uint8 or b.dtype != np.int8 or not out.size:
        return out
    a, b = _i64(a), _i64(b)
    if k % 2:
        a, b = np.pad(a, ((0, 0), (0, 1))), np.pad(b, ((0, 1), (0, 0)))
    a_even, a_odd, b_even, b_odd = a[:, 0::2], a[:, 1::2], b[0::2], b[1::2]
    rows = max(1, ROWS_PER_CHUNK // max(1, a_even.shape[1] * n))
    for start in range(0, m, rows):
        part = slice(start, start + rows)
        pairs = a_even[part, :, None] * b_even[None] + a_odd[part, :, None] * b_odd[None]
        out[part] = (np.clip(pairs, INT16_MIN, INT16_MAX) - pairs).sum(axis=1)
    return out


def integer_matmul(a: np.ndarray, a_zero: Any, b: np.ndarray, b_zero: Any, saturate: bool = False) -> np.ndarray:
    """(A - a_zero) @ (B - b_zero) in int64 with numpy.matmul's broadcasting (zero points broadcast against A and
    B as given); with `saturate`, plus onnxruntime's u8s8 pair saturation on the raw A and B."""
    exact = np.matmul(_i64(a) - _i64(a_zero), _i64(b) - _i64(b_zero))
    if not saturate or np.asarray(a).dtype != np.uint8 or np.asarray(b).dtype != np.int8:
        return exact
    a, b = np.asarray(a), np.asarray(b)
    a2 = a if a.ndim >= 2 else a[None]
    b2 = b if b.ndim >= 2 else b[:, None]
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a2 = np.broadcast_to(a2, batch + a2.shape[-2:])
    b2 = np.broadcast_to(b2, batch + b2.shape[-2:])
    excess = np.zeros(batch + (a2.shape[-2], b2.shape[-1]), np.int64)
    for index in np.ndindex(*batch):
        excess[index] = pair_excess(a2[index], b2[index])
    if np.asarray(a).ndim == 1:
        excess = excess[..., 0, :]
    if np.asarray(b).ndim == 1:
        excess = excess[..., 0]
    return exact + excess


# ---- matrix products -------------------------------------------------------------------------------------------

def matmul_integer(inputs: list, attrs: dict, saturate: bool = False) -> list:
    """MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) as int32 (a_zero_point per row, b_zero_point per
    column when 1-D)."""
    a, b, a_zero, b_zero = (list(inputs) + [None] * 4)[:4]
    za = 0 if a_zero is None else (_i64(a_zero)[..., None] if np.ndim(a_zero) == 1 else _i64(a_zero))
    zb = 0 if b_zero is None else _i64(b_zero)
    return [integer_matmul(a, za, b, zb, saturate).astype(np.int32)]


def _requantize(acc: np.ndarray, scale: np.ndarray, y_scale: Any, y_zero: Any) -> np.ndarray:
    """saturate(round_half_even(acc · scale / y_scale) + y_zero), the multiplier in float32 (float32 scales)."""
    multiplier = _f32(scale) / _f32(y_scale).reshape(())
    values = np.rint(acc.astype(np.float32) * multiplier) + _f32(0 if y_zero is None else y_zero).reshape(())
    dtype = np.dtype(np.uint8) if y_zero is None else np.asarray(y_zero).dtype
    return _saturate(values, dtype)


def qlinear_matmul(inputs: list, attrs: dict, saturate: bool = False) -> list:
    """QLinearMatMul: y = saturate(round((a - a_zero) @ (b - b_zero) · a_scale · b_scale / y_scale) + y_zero),
    a's scale and zero point per row and b's per column when not scalars."""
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = inputs

    def row(v: Any) -> Any:  # a 1-D per-row parameter of a 2-D a
        return np.asarray(v)[..., None] if np.ndim(v) == 1 else np.asarray(v)

    acc = integer_matmul(a, _i64(row(a_zero)), b, _i64(b_zero), saturate)
    return [_requantize(acc, _f32(row(a_scale)) * _f32(b_scale), y_scale, y_zero)]


def _columns(param: Any, default: float = 0.0) -> np.ndarray:
    return np.asarray(default if param is None else param).reshape(-1)


def matmul_integer_to_float(inputs: list, attrs: dict, saturate: bool = False) -> list:
    """MatMulIntegerToFloat: (A - a_zero_point) @ (B - b_zero_point) · a_scale · b_scale + bias, in float32."""
    a, b, a_scale, b_scale, a_zero, b_zero, bias = (list(inputs) + [None] * 7)[:7]
    zb = _i64(_columns(b_zero)) if b_zero is not None else 0
    acc = integer_matmul(a, 0 if a_zero is None else _i64(a_zero).reshape(()), b, zb, saturate)
    dtype = np.asarray(a_scale).dtype
    y = acc.astype(np.float32) * (_f32(a_scale).reshape(-1) * _f32(b_scale).reshape(-1))
    if bias is not None:
        y = y + _f32(bias)
    return [y.astype(dtype)]


def dynamic_quantize_linear(x: np.ndarray) -> tuple[np.ndarray, np.float32, np.uint8]:
    """DynamicQuantizeLinear as onnx.defs' doc writes it: the range widened to 0, scale (max - min) / 255, zero
    point round(saturate(-min / scale)), y = saturate(round(x / scale) + zero point); a range of 0 has scale 1
    (the doc divides by it; every y is then the zero point, 0, whatever the scale)."""
    x = _f32(x)
    low = np.minimum(np.float32(0), x.min(initial=np.float32(0)))
    high = np.maximum(np.float32(0), x.max(initial=np.float32(0)))
    scale = np.float32((high - low) / np.float32(255)) if high > low else np.float32(1)
    zero = np.uint8(np.rint(np.clip(np.float32(0) - low / scale, 0, 255)))
    return _saturate(np.rint(x / scale) + np.float32(zero), np.dtype(np.uint8)), scale, zero


def dynamic_quantize_matmul(inputs: list, attrs: dict, saturate: bool = False) -> list:
    """DynamicQuantizeMatMul: A quantized to uint8 by DynamicQuantizeLinear, then MatMulIntegerToFloat."""
    a, b, b_scale, b_zero, bias = (list(inputs) + [None] * 5)[:5]
    q, scale, zero = dynamic_quantize_linear(a)
    return matmul_integer_to_float([q, b, np.array(scale), b_scale, np.array(zero), b_zero, bias], attrs, saturate)


def qgemm(inputs: list, attrs: dict, saturate: bool = False) -> list:
    """QGemm: alpha · a_scale · b_scale · ((A' - a_zero) @ (B' - b_zero) + C), C an int32 already at that scale;
    float32 out without y_scale, else saturate(round(· / y_scale) + y_zero)."""
    a, a_scale, a_zero, b, b_scale, b_zero, c, y_scale, y_zero = (list(inputs) + [None] * 9)[:9]
    a = a.T if attrs.get("transA", 0) else a
    b = b.T if attrs.get("transB", 0) else b
    zb = _i64(_columns(b_zero)) if b_zero is not None else 0
    acc = integer_matmul(a, _i64(a_zero).reshape(()), b, zb, saturate)
    if c is not None:
        acc = acc + _i64(c)
    scale = np.float32(attrs.get("alpha", 1.0)) * _f32(a_scale).reshape(()) * _f32(b_scale).reshape(-1)
    if y_scale is None:
        return [(acc.astype(np.float32) * scale).astype(np.float32)]
    return [_requantize(acc, scale, y_scale, y_zero)]


# ---- convolutions ----------------------------------------------------------------------------------------------

def _conv_pads(spatial: tuple[int, ...], kernel: tuple[int, ...], attrs: dict) -> tuple[list[int], list[int]]:
    rank = len(spatial)
    strides = list(attrs.get("strides", [1] * rank))
    dilations = list(attrs.get("dilations", [1] * rank))
    auto_pad = attrs.get("auto_pad", "NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s, d in zip(spatial, kernel, strides, dilations):
            out = -(-size // s)
            total = max(0, (out - 1) * s + d * (k - 1) + 1 - size)
            small = total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else total - small)
            end.append(total - begin[-1])
        return begin, end
    if auto_pad == "VALID":
        return [0] * rank, [0] * rank
    pads = list(attrs.get("pads", [0] * 2 * rank))
    return pads[:rank], pads[rank:]


def integer_conv(x: np.ndarray, x_zero: Any, w: np.ndarray, w_zero: Any, attrs: dict, saturate: bool = False,
                 channels_last: bool = True) -> np.ndarray:
    """conv(x - x_zero, w - w_zero) in int64 (padding with x_zero: a padded place contributes 0), as the ONNX Conv
    doc defines strides, pads, auto_pad, dilations and group; w_zero scalar or per output channel. With
    `saturate`, the pairs of the reduction axis ordered (kernel position, channel) when `channels_last`, else
    (channel, kernel position)."""
    x, w = np.asarray(x), np.asarray(w)
    n, channels, *spatial = x.shape
    m, per_group, *kernel = w.shape
    group = int(attrs.get("group", 1))
    rank = len(spatial)
    strides = list(attrs.get("strides", [1] * rank))
    dilations = list(attrs.get("dilations", [1] * rank))
    begin, end = _conv_pads(tuple(spatial), tuple(kernel), attrs)
    zx = int(np.asarray(0 if x_zero is None else x_zero).reshape(()))
    padded = np.pad(x, [(0, 0), (0, 0)] + list(zip(begin, end)), constant_values=zx)
    out = [(s + b + e - d * (k - 1) - 1) // st + 1
           for s, b, e, d, k, st in zip(spatial, begin, end, dilations, kernel, strides)]
    positions = list(itertools.product(*[range(k) for k in kernel]))
    patches = []
    for offset in positions:  # [n, channels, *out] per kernel position
        index = tuple(slice(o * d, o * d + (size - 1) * st + 1, st)
                      for o, d, size, st in zip(offset, dilations, out, strides))
        patches.append(padded[(slice(None), slice(None)) + index])
    cols = np.stack(patches, axis=2)  # [n, channels, positions, *out]
    cols = np.moveaxis(cols.reshape(n, channels, len(positions), -1), 3, 1)  # [n, pixels, channels, positions]
    zw = np.broadcast_to(_i64(0 if w_zero is None else w_zero).reshape(-1), (m,))
    result = np.zeros((n, m, int(np.prod(out, dtype=np.int64))), np.int64)
    per_out = m // group
    for g in range(group):
        part = cols[:, :, g * per_group:(g + 1) * per_group]  # [n, pixels, per_group, positions]
        weights = w[g * per_out:(g + 1) * per_out].reshape(per_out, per_group, len(positions))
        if channels_last:
            a = part.transpose(0, 1, 3, 2).reshape(-1, len(positions) * per_group)
            b = weights.transpose(2, 1, 0).reshape(len(positions) * per_group, per_out)
        else:
            a = part.reshape(-1, per_group * len(positions))
            b = weights.reshape(per_out, -1).T
        acc = integer_matmul(np.ascontiguousarray(a), zx, np.ascontiguousarray(b),
                             zw[g * per_out:(g + 1) * per_out], saturate)
        result[:, g * per_out:(g + 1) * per_out] = acc.reshape(n, -1, per_out).transpose(0, 2, 1)
    return result.reshape(n, m, *out)


def conv_integer(inputs: list, attrs: dict, saturate: bool = False) -> list:
    """ConvInteger: conv(x - x_zero_point, w - w_zero_point) as int32."""
    x, w, x_zero, w_zero = (list(inputs) + [None] * 4)[:4]
    return [integer_conv(x, x_zero, w, w_zero, attrs).astype(np.int32)]  # onnxruntime's is exact: no `saturate`


def qlinear_conv(inputs: list, attrs: dict, saturate: bool = False) -> list:
    """QLinearConv: y = saturate(round((conv(x - x_zero, w - w_zero) + B) · x_scale · w_scale / y_scale) + y_zero),
    w's scale and zero point per output channel when 1-D."""
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, bias = (list(inputs) + [None] * 9)[:9]
    group = int(attrs.get("group", 1))
    depthwise = np.shape(w)[1] == 1 and np.shape(w)[0] == group  # onnxruntime's depthwise kernel is exact
    acc = integer_conv(x, x_zero, w, w_zero, attrs, saturate and not depthwise)
    if bias is not None:
        acc = acc + _i64(bias).reshape((-1,) + (1,) * (acc.ndim - 2))
    scale = (_f32(x_scale).reshape(()) * _f32(w_scale).reshape(-1)).reshape((-1,) + (1,) * (acc.ndim - 2))
    return [_requantize(acc, scale, y_scale, y_zero)]


# ---- attention and the LSTM ------------------------------------------------------------------------------------

def qattention(inputs: list, attrs: dict, saturate: bool = False,
               attention: Callable[[list, dict], list] | None = None) -> list:
    """QAttention: the doc's "quantization of multi-head self attention": the projection (input - zero point) @
    (weight - zero point) exact in int64, times input_scale · weight_scale (per column when 1-D) in float32, then
    the float Attention of that projection with the bias, mask, past and attributes. `attention` computes that
    float part from [projection, identity weights, bias, mask_index, past] (the projection passed through weights
    that are the identity, which float arithmetic keeps exact)."""
    x, w, bias, x_scale, w_scale, mask, x_zero, w_zero, past = (list(inputs) + [None] * 9)[:9]
    zx = 0 if x_zero is None else _i64(x_zero).reshape(())
    zw = 0 if w_zero is None else _i64(_columns(w_zero))
    acc = integer_matmul(x, zx, w, zw, saturate)
    projection = acc.astype(np.float32) * (_f32(x_scale).reshape(()) * _f32(w_scale).reshape(-1))
    width = projection.shape[-1]
    assert attention is not None, "QAttention's float part needs an attention function"
    return attention([projection.astype(np.float32), np.eye(width, dtype=np.float32), bias, mask, past], attrs)


ACTIVATIONS = {
    "sigmoid": lambda x, a, b: 1.0 / (1.0 + np.exp(-x)),
    "tanh": lambda x, a, b: np.tanh(x),
    "relu": lambda x, a, b: np.maximum(x, 0.0),
    "hardsigmoid": lambda x, a, b: np.clip(a * x + b, 0.0, 1.0),
    "softsign": lambda x, a, b: x / (1.0 + np.abs(x)),
}
ACTIVATION_DEFAULTS = {"hardsigmoid": (0.2, 0.5)}


def _lstm_activations(attrs: dict, directions: int) -> list[Callable[[np.ndarray], np.ndarray]]:
    names = [n.decode() if isinstance(n, bytes) else n for n in attrs.get("activations", [])] or \
        ["Sigmoid", "Tanh", "Tanh"] * directions
    alphas, betas = list(attrs.get("activation_alpha", [])), list(attrs.get("activation_beta", []))
    out = []
    for name in names:
        key = name.lower()
        a, b = ACTIVATION_DEFAULTS.get(key, (0.0, 0.0))
        if key in ACTIVATION_DEFAULTS:
            a = alphas.pop(0) if alphas else a
            b = betas.pop(0) if betas else b
        out.append(lambda x, f=ACTIVATIONS[key], a=a, b=b: f(x, a, b))
    return out


def dynamic_quantize_lstm(inputs: list, attrs: dict, saturate: bool = False) -> list:
    """DynamicQuantizeLSTM: the ONNX LSTM (gates iofc, the spec's equations) whose products with W and R are
    integer: X (all of it) and H before every recurrent product (each batch item's row of each direction) are
    quantized to uint8 by DynamicQuantizeLinear; W and R ([directions, input or hidden, 4 hidden], uint8 or int8)
    come with a scale and zero point per direction or per column. Each product is (q - zero point) · (W - its
    zero point) exact in int64, times the two scales."""
    x, w, r, bias, lens, h0, c0, peep, w_scale, w_zero, r_scale, r_zero = (list(inputs) + [None] * 12)[:12]
    direction = attrs.get("direction", "forward")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    directions = 2 if direction == "bidirectional" else 1
    seq, batch, _ = x.shape
    hidden = int(attrs["hidden_size"])
    clip = attrs.get("clip")
    clipped = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    couple = bool(attrs.get("input_forget", 0))
    acts = _lstm_activations(attrs, directions)
    lengths = np.full(batch, seq) if lens is None else np.asarray(lens)
    qx, sx, zx = dynamic_quantize_linear(x)
    y = np.zeros((seq, directions, batch, hidden), np.float64)
    y_h = np.zeros((directions, batch, hidden))
    y_c = np.zeros((directions, batch, hidden))

    def product(q: np.ndarray, zero: Any, scale: Any, weights: np.ndarray, w_zero_d: Any, w_scale_d: Any) -> Any:
        acc = integer_matmul(q, int(zero), weights, _i64(w_zero_d).reshape(-1), saturate)
        return acc.astype(np.float64) * float(scale) * _f32(w_scale_d).reshape(-1).astype(np.float64)

    for d in range(directions):
        f, g, h_act = acts[3 * d:3 * d + 3]
        b = np.zeros(8 * hidden) if bias is None else np.asarray(bias[d], np.float64)
        p = np.zeros(3 * hidden) if peep is None else np.asarray(peep[d], np.float64)
        pi, po, pf = p[:hidden], p[hidden:2 * hidden], p[2 * hidden:]
        gates_x = product(qx.reshape(seq * batch, -1), zx, sx, w[d], w_zero[d], w_scale[d]).reshape(seq, batch, -1)
        h = np.zeros((batch, hidden)) if h0 is None else np.asarray(h0[d], np.float64)
        c = np.zeros((batch, hidden)) if c0 is None else np.asarray(c0[d], np.float64)
        reverse = direction == "reverse" or d == 1
        for n in range(batch):
            hn, cn = h[n].copy(), c[n].copy()
            steps = range(int(lengths[n]))
            for t in (reversed(steps) if reverse else steps):
                qh, sh, zh = dynamic_quantize_linear(hn.astype(np.float32)[None])
                gates = gates_x[t, n] + product(qh, zh, sh, r[d], r_zero[d], r_scale[d])[0] + b[:4 * hidden] \
                    + b[4 * hidden:]
                i_, o_, f_, c_ = (gates[k * hidden:(k + 1) * hidden] for k in range(4))
                i = f(clipped(i_ + pi * cn))
                forget = 1 - i if couple else f(clipped(f_ + pf * cn))
                cn = forget * cn + i * g(clipped(c_))
                o = f(clipped(o_ + po * cn))
                hn = o * h_act(cn)
                y[t, d, n] = hn
            if lengths[n] > 0:
                y_h[d, n], y_c[d, n] = hn, cn
    return [y.astype(np.float32), y_h.astype(np.float32), y_c.astype(np.float32)]


# ---- MatMulNBits -----------------------------------------------------------------------------------------------

def matmul_nbits(inputs: list, attrs: dict, saturate: bool = False) -> list | None:
    """MatMulNBits: B [N, blocks, blob] packs `bits`-bit values lowest bits first; W[n, k] = (q - zero) · scale
    per block (zero points packed like B, or float, or 2^(bits-1) when absent); Y = A @ Wᵀ + bias, in float64
    (no integer product: A is float), returned in A's type."""
    a, b, scales, zeros, g_idx, bias = (list(inputs) + [None] * 6)[:6]
    if not np.size(b):
        return None  # B given empty: the doc says nothing of it
    k, n, bits, block = (int(attrs[name]) for name in ("K", "N", "bits", "block_size"))
    blocks = -(-k // block)
    per_byte = 8 // bits
    mask = (1 << bits) - 1

    def unpack(packed: np.ndarray) -> np.ndarray:
        shifts = np.arange(per_byte) * bits
        return ((packed.astype(np.int64)[..., None] >> shifts) & mask).reshape(*packed.shape[:-1], -1)

    q = unpack(np.asarray(b).reshape(n, blocks, -1))[..., :block].astype(np.float64)  # [n, blocks, block]
    s = np.asarray(scales, np.float64).reshape(n, blocks)
    if zeros is None:
        z = np.full((n, blocks), float(1 << (bits - 1)))
    elif np.asarray(zeros).dtype == np.uint8:
        z = unpack(np.asarray(zeros).reshape(n, -1))[:, :blocks].astype(np.float64)
    else:
        z = np.asarray(zeros, np.float64).reshape(n, blocks)
    weights = ((q - z[..., None]) * s[..., None]).reshape(n, -1)[:, :k]
    y = np.asarray(a, np.float64) @ weights.T
    if bias is not None:
        y = y + np.asarray(bias, np.float64)
    return [y.astype(np.asarray(a).dtype)]


REFERENCES: dict[tuple[str, str], Callable[..., list | None]] = {
    ("", "MatMulInteger"): matmul_integer,
    ("", "ConvInteger"): conv_integer,
    ("", "QLinearMatMul"): qlinear_matmul,
    ("", "QLinearConv"): qlinear_conv,
    ("com.microsoft", "MatMulIntegerToFloat"): matmul_integer_to_float,
    ("com.microsoft", "DynamicQuantizeMatMul"): dynamic_quantize_matmul,
    ("com.microsoft", "QGemm"): qgemm,
    ("com.microsoft", "QAttention"): qattention,
    ("com.microsoft", "DynamicQuantizeLSTM"): dynamic_quantize_lstm,
    ("com.microsoft", "MatMulNBits"): matmul_nbits,
}


def saturating_operands(domain: str, op: str, inputs: list, attrs: dict) -> list[tuple[Any, Any]]:
    """The raw (A, B) pairs of an integer-product node whose u8s8 products onnxruntime forms (for
    `may_saturate`); DynamicQuantizeMatMul's and DynamicQuantizeLSTM's A is quantized to uint8 at run time, so
    its largest value stands for it (255 unless A is all zero)."""
    given = list(inputs) + [None] * 12
    full = np.array([255], np.uint8)
    if op in ("MatMulInteger", "MatMulIntegerToFloat"):
        return [(given[0], given[1])]
    if op in ("QLinearMatMul", "QLinearConv", "QGemm"):
        return [(given[0], given[3])]
    if op == "QAttention":
        return [(given[0], given[1])]
    if op == "DynamicQuantizeMatMul":
        return [(full, given[1])]
    if op == "DynamicQuantizeLSTM":
        return [(full, given[1]), (full, given[2])]
    return []
