"""An LSTM step as one matrix product: [Xt, Ht-1, 1] · [Wᵀ; Rᵀ; Wb + Rb] gives the step's four gates.

onnxruntime projects every step's input in one product up front and adds H·Rᵀ into it at each step (its GEMM
accumulates). NumPy's matmul cannot accumulate, so that order costs a projection, a copy of it into the gates'
layout and an add at every step. With X and H side by side in the left operand, one product per step writes the
gates where they are recorded: a larger product, one NumPy call and two passes over the gates less. It pays while
the input is small beside the hidden state (`pays`): each step's product then grows by less than it saves.

`StepRows` holds those left operands for a chunk of steps, [row, lane, batch, input + hidden (+ 1)]: the input
columns are copied in per chunk, the ones column once, and each step copies its H into the next row."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..aligned import aligned_empty


class StepRows:
    """The left operands of the steps of every lane, in processing order. Step s reads `rows[s - start]` and
    copies its H into `h[s - start + 1]`; before step `end`, `next_chunk()`."""

    def __init__(self, sources: Sequence[np.ndarray], h0: np.ndarray, bias: bool, chunk_bytes: int) -> None:
        """`sources`: each lane's X in its processing order ([seq, batch, input]); `h0` [lanes, batch, hidden];
        `chunk_bytes`: what the rows may take at once."""
        seq, batch, size = sources[0].shape
        lanes, _, hidden = h0.shape
        self._sources, self._seq, self._size = sources, seq, size
        width = size + hidden + bias
        self._chunk = max(1, min(seq, chunk_bytes // (lanes * batch * width * h0.itemsize)))
        self.rows = aligned_empty((self._chunk + 1, lanes, batch, width), h0.dtype)
        self.h = self.rows[..., size:size + hidden]
        if bias:
            self.rows[..., -1] = 1
        self.h[0] = h0
        self.start, self.end = 0, 0
        self._fill()

    def _fill(self) -> None:
        """The input columns of the rows of the chunk from `end` on."""
        self.start, self.end = self.end, min(self._seq, self.end + self._chunk)
        for k, source in enumerate(self._sources):
            self.rows[:self.end - self.start, k, :, :self._size] = source[self.start:self.end]

    @staticmethod
    def pays(size: int, hidden: int, batch: int) -> bool:
        """Whether a node's steps are faster as one product each: for batches of 4 or more (smaller ones take one
        product over all gates, kernel.run_cells) with an input at most half the hidden size. On 2 cores with
        T = 200 and B = 8: 0.92 × the time with I = 64 and H = 128, 0.96 × with I = 32; 1.08 × with I = H, and
        1.3 × with I = 2H."""
        return batch >= 4 and 2 * size <= hidden

    def next_chunk(self) -> None:
        """After the chunk's last step: its last H into row 0, the next chunk's inputs."""
        self.h[0] = self.h[self.end - self.start]
        self._fill()


def joined_weights(w: np.ndarray, r: np.ndarray, biases: np.ndarray | None, scales: np.ndarray | None,
                   n_gates: int) -> np.ndarray:
    """[Wᵀ; Rᵀ; biases] per gate and lane ([gates, lanes, width, hidden], C order), every gate's columns times
    `scales`: the right operand of the products of StepRows' rows, which it turns into [gate, lane, batch, hidden]
    directly. `w` [lanes, gates * hidden, input], `r` [lanes, gates * hidden, hidden], `biases` [lanes,
    gates * hidden] (Wb + Rb)."""
    lanes, blocks, size = w.shape
    hidden = r.shape[2]
    width = size + hidden + (biases is not None)
    joined = np.empty((lanes, width, blocks), w.dtype)
    joined[:, :size] = w.transpose(0, 2, 1)
    joined[:, size:size + hidden] = r.transpose(0, 2, 1)
    if biases is not None:
        joined[:, -1] = biases
    if scales is not None:
        joined *= scales
    per_gate = aligned_empty((n_gates, lanes, width, hidden), w.dtype)
    per_gate[...] = joined.reshape(lanes, width, n_gates, hidden).transpose(2, 0, 1, 3)
    return per_gate
