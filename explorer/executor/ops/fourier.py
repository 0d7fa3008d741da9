"""DFT (17, 20) and STFT (17) by NumPy's FFT, in float64 and cast back to the input's type.

DFT transforms along `axis` (an attribute in 17, an input defaulting to -2 in 20; never the last axis, which holds
the real and imaginary parts: 1 for real input, 2 for complex), over dft_length points (the input cut or padded
with zeros), the inverse divided by the length; onesided (real input) keeps the first length // 2 + 1 bins, and
with inverse reads such bins back into a real signal of dft_length (2 (bins - 1) by default) points. STFT cuts
[batch, length, 1 or 2] signals into frames of frame_length (else the window's length) every frame_step, each
times the window, and transforms them: [batch, frames, bins, 2]."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel


def _complex(op: OpNode, x: np.ndarray) -> np.ndarray:
    """The input as complex values: complex64 for float32 and narrower inputs (NumPy transforms them in single
    precision, as onnxruntime does), complex128 for float64."""
    if x.ndim < 2 or x.shape[-1] not in (1, 2):
        raise op.error(f"the input's last axis must hold 1 (real) or 2 (complex) values, got shape {x.shape}")
    kind = np.complex128 if x.dtype == np.float64 else np.complex64
    values = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
    out = values[..., 0].astype(kind)
    if x.shape[-1] == 2:
        out = out + kind(1j) * values[..., 1].astype(kind)
    return out


def _pairs(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.stack([values.real, values.imag], axis=-1).astype(dtype)


def _scalar(op: OpNode, value: Any, name: str) -> int:
    array = np.asarray(value)
    if array.size != 1 or array.dtype.kind not in "iu":
        raise op.error(f"{name} must be one integer, got {array.dtype} of shape {array.shape}")
    return int(array.reshape(()))


def dft_kernel(op: OpNode) -> PlainKernel:
    inverse, onesided = bool(op.get_int("inverse")), bool(op.get_int("onesided"))
    fixed_axis = op.get_int("axis") if op.version < 20 else None

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        signal = _complex(op, x)
        if onesided and not inverse and x.shape[-1] != 1:
            raise op.error("a one-sided DFT takes real input (the last axis of 1)")
        axis = fixed_axis if fixed_axis is not None else (
            _scalar(op, args[2], "axis") if len(args) > 2 and args[2] is not None else -2)
        axis = axis + x.ndim if axis < 0 else axis
        if not 0 <= axis < x.ndim - 1:
            raise op.error(f"axis {axis} must be one of the input's axes before its last")
        length = 2 * (x.shape[axis] - 1) if inverse and onesided else x.shape[axis]
        if len(args) > 1 and args[1] is not None:
            length = _scalar(op, args[1], "dft_length")
            if length < 1:
                raise op.error(f"dft_length must be positive, got {length}")
        if inverse and onesided:  # a one-sided spectrum back to its real signal
            return (np.fft.irfft(signal, n=length, axis=axis)[..., None].astype(x.dtype),)
        transform = np.fft.ifft if inverse else np.fft.fft
        values = transform(signal, n=length, axis=axis)
        if onesided:
            values = np.take(values, np.arange(length // 2 + 1), axis=axis)
        return (_pairs(values, x.dtype),)

    return run


def stft_kernel(op: OpNode) -> PlainKernel:
    onesided = bool(op.get_int("onesided"))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, step = args[0], _scalar(op, args[1], "frame_step")
        window = args[2] if len(args) > 2 else None
        length = _scalar(op, args[3], "frame_length") if len(args) > 3 and args[3] is not None else \
            (window.size if window is not None else None)
        if x.ndim != 3 or length is None:
            raise op.error("signal must be [batch, length, 1 or 2], and a window or frame_length given")
        if window is not None and window.size != length:
            raise op.error(f"the window has {window.size} values for frames of {length}")
        if step < 1 or not 1 <= length <= x.shape[1]:
            raise op.error(f"frame_step ({step}) must be positive and frame_length ({length}) within the signal's "
                           f"{x.shape[1]} samples")
        signal = _complex(op, x)
        frames = 1 + (x.shape[1] - length) // step
        starts = np.arange(frames)[:, None] * step + np.arange(length)[None, :]
        pieces = signal[:, starts]  # [batch, frames, length]
        if window is not None:
            pieces = pieces * window.astype(np.float64)
        values = np.fft.fft(pieces, axis=-1)
        if onesided:
            values = values[..., :length // 2 + 1]
        return (_pairs(values, x.dtype),)

    return run


KERNELS: dict[str, KernelFactory] = {"DFT": dft_kernel, "STFT": stft_kernel}
