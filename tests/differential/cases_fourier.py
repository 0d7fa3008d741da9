"""DFT (17, 20) and STFT (explorer/executor/ops/fourier.py): real and complex input, every axis, dft_length
shorter and longer than the signal, inverse, onesided, STFT with and without window and frame_length."""
from __future__ import annotations

import numpy as np

from .gen import rng
from .harness import Case

# onnxruntime's own FFT (float twiddle factors) against NumPy's in float64
TOL = {np.dtype(np.float32): (1e-4, 1e-4), np.dtype(np.float64): (1e-6, 1e-6)}


def _dft() -> list[Case]:
    found = []
    for version in (17, 20):
        for dtype in (np.float32, np.float64):
            r = rng("DFT", version, np.dtype(dtype).name)
            for parts in (1, 2):
                x = r.normal(size=(2, 6, 5, parts)).astype(dtype)
                for axis in (1, 2, -2):
                    for inverse, onesided in ((0, 0), (1, 0), (0, 1))[:3 if parts == 1 else 2]:
                        for length in (None, 4, 9):
                            inputs = [x, None if length is None else np.array(length, np.int64)]
                            attrs = {"inverse": inverse, "onesided": onesided}
                            if version == 17:
                                if axis < 0:
                                    continue  # DFT-17 reads its axis as given; 20 wraps negative ones
                                attrs["axis"] = axis
                            else:
                                inputs.append(np.array(axis, np.int64))
                            found.append(Case("DFT", version, inputs, attrs, tol=TOL[np.dtype(dtype)]))
    found.append(Case("DFT", 20, [np.zeros((2, 3, 2), np.float32)], {"onesided": 1}, error="one-sided"))
    return found


def _stft() -> list[Case]:
    found = []
    for dtype in (np.float32, np.float64):
        r = rng("STFT", np.dtype(dtype).name)
        for parts in (1, 2):
            signal = r.normal(size=(2, 40, parts)).astype(dtype)
            window = np.hanning(16).astype(dtype)
            for onesided in (0, 1):
                if parts == 2 and onesided:
                    continue  # a complex signal has no one-sided spectrum
                step = np.array(6, np.int64)
                found.append(Case("STFT", 17, [signal, step, window, None], {"onesided": onesided},
                                  tol=TOL[np.dtype(dtype)]))
                found.append(Case("STFT", 17, [signal, step, None, np.array(10, np.int64)],
                                  {"onesided": onesided}, tol=TOL[np.dtype(dtype)]))
                found.append(Case("STFT", 17, [signal, np.array(8, np.int32), window, np.array(16, np.int32)],
                                  {"onesided": onesided}, tol=TOL[np.dtype(dtype)]))
    return found


def cases() -> list[Case]:
    return [*_dft(), *_stft()]
