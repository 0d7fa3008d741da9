"""How an ONNX value is laid out against the framework's tensor it computes, undone before comparing: a
transpose then a reshape (batch first against time first, the direction axis of a recurrent operator's Y folded
into the features as PyTorch returns them), and back (a framework value fed to the ONNX nodes in their layout)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Layout:
    """framework = onnx.transpose(perm).reshape(shape); `name` says it in words ("" for the same layout)."""

    perm: tuple[int, ...] | None = None
    shape: tuple[int, ...] | None = None
    name: str = ""

    def to_framework(self, value: np.ndarray) -> np.ndarray:
        out = np.asarray(value)
        if self.perm is not None:
            out = out.transpose(self.perm)
        return out.reshape(self.shape) if self.shape is not None else out

    def to_onnx(self, value: np.ndarray, onnx_shape: tuple[int, ...]) -> np.ndarray:
        """A framework value in the ONNX value's layout (`onnx_shape`)."""
        out = np.asarray(value)
        if self.perm is None:
            return out.reshape(onnx_shape)
        moved = tuple(onnx_shape[k] for k in self.perm)
        return out.reshape(moved).transpose(np.argsort(self.perm))


SAME = Layout()


def recurrent_y(batch_first: bool, onnx_layout: int, shape: tuple[int, ...]) -> Layout:
    """A GRU/LSTM/RNN operator's Y ([seq, directions, batch, hidden], or [batch, seq, directions, hidden] with
    layout=1) as PyTorch's output of that layer ([batch, seq, directions * hidden] when batch_first)."""
    if onnx_layout:
        perm = (0, 1, 2, 3) if batch_first else (1, 0, 2, 3)
        b, s, d = shape[0], shape[1], shape[2]
    else:
        perm = (2, 0, 1, 3) if batch_first else (0, 2, 1, 3)
        s, d, b = shape[0], shape[1], shape[2]
    features = d * shape[3]
    out = (b, s, features) if batch_first else (s, b, features)
    return Layout(perm, out, f"Y {list(shape)} as {'batch' if batch_first else 'time'}-first {list(out)}")


def fitting_layout(onnx_shape: tuple[int, ...], framework_shape: tuple[int, ...]) -> Layout | None:
    """A layout turning an ONNX value of `onnx_shape` into `framework_shape`: the same; a reshape that only adds or
    drops axes of size 1; else the first transpose (closest to none) that gives it. None when none does."""
    if onnx_shape == framework_shape:
        return SAME
    if int(np.prod(onnx_shape)) != int(np.prod(framework_shape)):
        return None
    if [d for d in onnx_shape if d != 1] == [d for d in framework_shape if d != 1]:
        return Layout(None, framework_shape, f"reshaped {list(onnx_shape)} -> {list(framework_shape)}")
    if len(onnx_shape) == len(framework_shape) and len(onnx_shape) <= 5:
        for perm in itertools.permutations(range(len(onnx_shape))):
            if tuple(onnx_shape[k] for k in perm) == framework_shape:
                return Layout(perm, None, f"transposed {list(perm)}")
    return None
