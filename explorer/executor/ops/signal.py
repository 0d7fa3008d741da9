"""Signal processing: HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix (17), cast to
`output_datatype`. A window of `size` points is periodic (its N is size) or symmetric (N is size - 1), computed in
float32 as the spec's function bodies do (float64 for float64 and integer outputs): Hann 0.5 - 0.5 cos(2 pi n / N), Hamming 25/46 - 21/46 cos(2 pi n / N),
Blackman 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N). MelWeightMatrix: triangles between num_mel_bins + 2 points evenly spaced on the mel scale
(mel(f) = 2595 log10(1 + f / 700)), over floor(dft_length / 2) + 1 spectrogram bins."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .element_types import element_dtype
from .shared import node_attributes

_COSINE_TERMS = {  # op -> (a0, a1, a2) of a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N)
    "HannWindow": (0.5, 0.5, 0.0),
    "HammingWindow": (25 / 46, 21 / 46, 0.0),
    "BlackmanWindow": (0.42, 0.5, 0.08),
}


def _scalar_int(value: np.ndarray, name: str) -> int:
    if value.size != 1 or value.dtype.kind not in "iu":
        raise ValueError(f"{name} must be one integer, got {value.dtype} of shape {value.shape}")
    return int(value.reshape(()))


def window_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    terms = _COSINE_TERMS[op.op_type]
    periodic = bool(attrs["periodic"])
    dtype = element_dtype(int(attrs["output_datatype"]))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        size = _scalar_int(args[0], "size")
        if size < 0:
            raise ValueError(f"size must not be negative, got {size}")
        work = np.float32 if dtype.kind == "f" and dtype != np.float64 else np.float64
        a0, a1, a2 = (np.float32(a).astype(work) for a in terms)  # the spec's float constants
        period = work(size if periodic else size - 1)
        step = work(np.float32(2 * np.pi)) / period if period else work(0)
        angle = np.arange(size, dtype=work) * step
        values = a0 - a1 * np.cos(angle) + a2 * np.cos(angle * work(2))
        if dtype.kind in "iu":  # the integer part of the exact value: a peak of 1 - 1e-8 is 1
            values = np.round(values, 6)
        return (values.astype(dtype),)

    return run


def mel_weight_matrix_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    dtype = element_dtype(int(attrs["output_datatype"]))

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        bins, dft_length, sample_rate = (_scalar_int(a, name) for a, name in
                                         zip(args[:3], ("num_mel_bins", "dft_length", "sample_rate")))
        low, high = (float(np.asarray(a).reshape(())) for a in args[3:5])
        if bins < 1 or dft_length < 1 or sample_rate < 1:
            raise ValueError("num_mel_bins, dft_length and sample_rate must be positive")
        low_mel, high_mel = (2595 * np.log10(1 + f / 700) for f in (low, high))
        points = np.arange(bins + 2) * ((high_mel - low_mel) / (bins + 2)) + low_mel
        hertz = 700 * (10 ** (points / 2595) - 1)
        edges = (((dft_length + 1) * hertz) // sample_rate).astype(np.int64)
        lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
        j = np.arange(dft_length // 2 + 1)[:, None]
        rising = np.where(center > lower, (j - lower) / np.maximum(center - lower, 1), (j == center) * 1.0)
        falling = (upper - j) / np.maximum(upper - center, 1)
        weights = np.where((j >= center) & (j < upper) & (upper > center), falling,
                           np.where((j >= lower) & (j <= center), rising, 0.0))
        return (weights.astype(dtype),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "BlackmanWindow": window_kernel,
    "HammingWindow": window_kernel,
    "HannWindow": window_kernel,
    "MelWeightMatrix": mel_weight_matrix_kernel,
}
