"""onnxruntime's quantization operators (com.microsoft), as its CPU kernels compute them:

- QuantizeLinear / DequantizeLinear: per tensor, or per `axis` when the node sets it (8-, 16- and 4-bit types);
- MatMulIntegerToFloat: (A - a_zero_point)·(B - b_zero_point) exactly, times a_scale · b_scale (B's per column),
  plus bias, in float32;
- DynamicQuantizeMatMul: A quantized to uint8 over its own range (as DynamicQuantizeLinear), then the same;
- MatMulNBits: A·Wᵀ (+ bias) with W (N, K) unpacked from 2-, 4- or 8-bit blocks along K ((q - zero point) × scale
  per block; zero points packed like the weights, or floats; 2^(bits-1) without);
- GatherBlockQuantized: Gather of a block-quantized table, dequantized ((q - zero point) × scale per block along
  quantize_axis), an index out of range giving zeros.

Weights unpacked from the same initializers are kept between runs (a node's weights never change)."""
from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .linalg import _exact_matmul
from .quantize import dynamic_quantize, saturate_cast

DOMAIN = "com.microsoft"


def _per_axis(param: np.ndarray, rank: int, axis: int | None, what: str) -> np.ndarray:
    """A scale or zero point against an input of `rank`: a scalar without axis, one value per index of `axis`."""
    if axis is None or param.size == 1 and param.ndim <= 1 and rank == 0:
        if param.size != 1:
            raise ValueError(f"{what} {param.shape} must be a scalar when the node sets no axis")
        return param.reshape(())
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for an input of rank {rank}")
    if param.ndim != 1:
        raise ValueError(f"{what} {param.shape} must be 1-D with axis {axis}")
    return param.reshape([-1 if i == axis % rank else 1 for i in range(rank)])


def quantize_linear_kernel(op: OpNode) -> PlainKernel:
    axis = op.attr("axis")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, scale = args[:2]
        zero = args[2] if len(args) > 2 else None
        dtype = np.dtype(np.uint8) if zero is None else zero.dtype
        values = np.rint(x.astype(np.float32) / _per_axis(scale, x.ndim, axis, "y_scale").astype(np.float32))
        if zero is not None:
            values = values + _per_axis(zero, x.ndim, axis, "y_zero_point").astype(np.float32)
        return (saturate_cast(values, dtype),)

    return run


def dequantize_linear_kernel(op: OpNode) -> PlainKernel:
    axis = op.attr("axis")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, scale = args[:2]
        zero = args[2] if len(args) > 2 else None
        values = x.astype(np.float32)
        if zero is not None:
            values = values - _per_axis(zero, x.ndim, axis, "x_zero_point").astype(np.float32)
        y = values * _per_axis(scale, x.ndim, axis, "x_scale").astype(np.float32)
        return (y.astype(scale.dtype),)

    return run


def _columns(param: np.ndarray | None, columns: int, what: str) -> np.ndarray | float:
    """A per-tensor or per-column (of B) parameter as a scalar or a (columns,) row."""
    if param is None:
        return 0.0
    if param.size == 1:
        return float(param.reshape(-1)[0])
    if param.ndim != 1 or param.shape[0] != columns:
        raise ValueError(f"{what} {param.shape} must be a scalar or 1-D with B's {columns} columns")
    return param.astype(np.float64)


def integer_product_to_float(a: np.ndarray, a_scale: np.ndarray, a_zero: np.ndarray | None, b: np.ndarray,
                             b_scale: np.ndarray, b_zero: np.ndarray | None, bias: np.ndarray | None) -> np.ndarray:
    """(A - a_zero)·(B - b_zero), exact, times a_scale · b_scale (per column of B), plus bias, in b_scale's type."""
    if a_scale.size != 1 or (a_zero is not None and a_zero.size != 1):
        raise ValueError(f"a_scale {a_scale.shape} and a_zero_point must be scalars (per tensor)")
    columns = b.shape[-1]
    product = _exact_matmul(a.astype(np.float64) - _columns(a_zero, 1, "a_zero_point"),
                            b.astype(np.float64) - _columns(b_zero, columns, "b_zero_point"))
    scale = np.float32(a_scale.reshape(-1)[0]) * np.asarray(_columns(b_scale, columns, "b_scale"), np.float32)
    y = product.astype(np.float32) * scale
    if bias is not None:
        if bias.shape != (columns,):
            raise ValueError(f"bias {bias.shape} must be 1-D with B's {columns} columns")
        y = y + bias.astype(np.float32)
    return y.astype(b_scale.dtype)


def matmul_integer_to_float_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b, a_scale, b_scale, a_zero, b_zero, bias = (list(args) + [None] * 7)[:7]
        return (integer_product_to_float(a, a_scale, a_zero, b, b_scale, b_zero, bias),)

    return run


def dynamic_quantize_matmul_kernel(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b, b_scale, b_zero, bias = (list(args) + [None] * 5)[:5]
        quantized, scale, zero = dynamic_quantize(a)
        return (integer_product_to_float(quantized, scale, zero, b, b_scale, b_zero, bias),)

    return run


def unpack_bits(packed: np.ndarray, bits: int) -> np.ndarray:
    """uint8 bytes holding 8 / bits values each, lowest bits first, as one uint8 value per element along the last
    axis (which grows by that factor)."""
    if bits == 8:
        return packed
    per_byte = 8 // bits
    shifts = np.arange(per_byte, dtype=np.uint8) * bits
    values = (packed[..., None] >> shifts) & np.uint8((1 << bits) - 1)
    return values.reshape(*packed.shape[:-1], packed.shape[-1] * per_byte)


class _Memo:
    """The last result computed from some arrays, kept while they are the same (live) objects."""

    def __init__(self) -> None:
        self._keys: tuple[weakref.ref[np.ndarray] | None, ...] = ()
        self._value: Any = None

    def get(self, arrays: tuple[np.ndarray | None, ...], compute: Callable[[], Any]) -> Any:
        same = len(arrays) == len(self._keys) and all(
            (a is None and k is None) or (a is not None and k is not None and k() is a)
            for a, k in zip(arrays, self._keys))
        if not same:
            self._value = compute()
            self._keys = tuple(None if a is None else weakref.ref(a) for a in arrays)
        return self._value


def _nbits_weights(b: np.ndarray, scales: np.ndarray, zeros: np.ndarray | None, k: int, n: int,
                   bits: int, block: int) -> np.ndarray:
    """The dequantized weight (N, K) of MatMulNBits."""
    blocks = -(-k // block)
    if b.shape != (n, blocks, block * bits // 8):
        raise ValueError(f"B {b.shape} must be (N, k_blocks, blob_size) = ({n}, {blocks}, {block * bits // 8})")
    q = unpack_bits(b, bits).reshape(n, blocks, block).astype(np.float32)
    scale = scales.reshape(n, blocks, 1).astype(np.float32)
    if zeros is None:
        zero: np.ndarray | float = float(1 << (bits - 1))
    elif zeros.dtype == np.uint8:
        zero = unpack_bits(zeros.reshape(n, -1), bits)[:, :blocks, None].astype(np.float32)
    else:
        zero = zeros.reshape(n, blocks, 1).astype(np.float32)
    return ((q - zero) * scale).reshape(n, blocks * block)[:, :k]


def matmul_nbits_kernel(op: OpNode) -> PlainKernel:
    k, n, bits, block = op.get_int("K"), op.get_int("N"), op.get_int("bits"), op.get_int("block_size")
    if bits not in (2, 4, 8) or block < 16 or block & (block - 1):
        raise op.error(f"bits={bits} (2, 4 or 8) and block_size={block} (a power of 2, at least 16) are not valid")
    if op.get_int("weight_prepacked"):
        raise op.error("weight_prepacked: weights in an execution provider's own layout are not supported")
    memo = _Memo()

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        a, b, scales, zeros, g_idx, bias = (list(args) + [None] * 6)[:6]
        if g_idx is not None:
            raise ValueError("g_idx (deprecated) is not supported by explorer")
        if a.shape[-1] != k:
            raise ValueError(f"A {a.shape} must end in K={k}")
        if 0 in b.shape:  # an omitted projection: zeros, or the bias
            y = np.zeros((*a.shape[:-1], n), np.float32)
        else:
            weights = memo.get((b, scales, zeros), lambda: _nbits_weights(b, scales, zeros, k, n, bits, block))
            y = np.matmul(a.astype(np.float32), weights.T)
        if bias is not None:
            y = y + bias.astype(np.float32)
        return (y.astype(a.dtype),)

    return run


def gather_block_quantized_kernel(op: OpNode) -> PlainKernel:
    bits, block = op.get_int("bits"), op.get_int("block_size")
    gather_setting, quantize_setting = op.get_int("gather_axis"), op.get_int("quantize_axis")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data, indices, scales = args[:3]
        zeros = args[3] if len(args) > 3 else None
        rank = data.ndim
        gather_axis, quantize_axis = gather_setting % rank, quantize_setting % rank
        fp = data.dtype.type.__module__ == "ml_dtypes" and "float" in data.dtype.name
        packed = data.dtype == np.uint8 and bits < 8
        if data.dtype == np.uint8 and (gather_axis != 0 or quantize_axis != rank - 1 or rank < 2):
            raise ValueError("uint8 data is gathered along axis 0 and quantized along its last, another axis")
        if fp and zeros is not None:
            raise ValueError("zero_points must not be given with FP8 or FP4 data")
        length = data.shape[quantize_axis] * (8 // bits if packed else 1)
        step = length if fp and block == 0 else block
        if not (fp and block == 0) and (block < 16 or block & (block - 1)):
            raise ValueError(f"block_size={block} must be a power of 2, at least 16")
        blocks = -(-length // max(step, 1))
        size = data.shape[gather_axis]
        valid = (indices >= -size) & (indices < size)
        at = np.where(valid, indices % max(size, 1), 0).astype(np.int64)
        q = np.take(data, at, axis=gather_axis)
        q = unpack_bits(q, bits) if packed else q
        out_axis = quantize_axis if quantize_axis < gather_axis else quantize_axis + indices.ndim - 1

        def gathered(table: np.ndarray) -> np.ndarray:
            """A per-block table as one value per element of the output."""
            if gather_axis == quantize_axis:
                return np.take(table, at // step, axis=gather_axis)
            table = table.take(np.arange(blocks), axis=quantize_axis)
            rows = np.zeros_like(at) if table.shape[gather_axis] == 1 and size != 1 else at
            picked = np.take(table, rows, axis=gather_axis)
            return np.repeat(picked, step, axis=out_axis).take(np.arange(length), axis=out_axis)

        values = q.astype(np.float32)
        if zeros is not None:
            values = values - gathered(unpack_bits(zeros, bits) if packed else zeros).astype(np.float32)
        elif data.dtype == np.uint8:
            values = values - np.float32(1 << (bits - 1))
        y = values * gathered(scales).astype(np.float32)
        y = np.where(valid.reshape(valid.shape + (1,) * (rank - gather_axis - 1)), y, 0)
        return (y.astype(scales.dtype),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "DequantizeLinear": dequantize_linear_kernel,
    "DynamicQuantizeMatMul": dynamic_quantize_matmul_kernel,
    "GatherBlockQuantized": gather_block_quantized_kernel,
    "MatMulIntegerToFloat": matmul_integer_to_float_kernel,
    "MatMulNBits": matmul_nbits_kernel,
    "QuantizeLinear": quantize_linear_kernel,
}
