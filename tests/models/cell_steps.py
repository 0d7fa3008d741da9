"""A recurrent cell stepped over a sequence in float64 NumPy, for the export recipes' reference gates: each step
function maps (x_t, state) to its gates by ONNX letter and the new state; `run_direction` runs one direction and
lays the gates out as Trace.gates does ([seq, batch, units] by input position, NaN where a mask keeps the
state)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

Step = Callable[[np.ndarray, tuple[np.ndarray, ...]], tuple[dict[str, np.ndarray], tuple[np.ndarray, ...]]]


def sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def run_direction(step: Step, x: np.ndarray, mask: np.ndarray, state: tuple[np.ndarray, ...], reverse: bool,
                  zero_masked: bool = False) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """One direction over x [batch, seq, ...] from `state` (its first member the output): its gates [seq, batch,
    units] by input position (NaN where mask [batch, seq] keeps the state) and its output sequence [batch, seq,
    ...] (a masked step repeats the previous output, or is zero with `zero_masked`)."""
    batch, seq = x.shape[:2]
    gates: dict[str, np.ndarray] = {}
    outputs = np.zeros(state[0].shape[:1] + (seq,) + state[0].shape[1:])
    previous = np.zeros_like(state[0])
    for t in (range(seq - 1, -1, -1) if reverse else range(seq)):
        values, new_state = step(x[:, t], state)
        valid = mask[:, t].reshape((batch,) + (1,) * (state[0].ndim - 1))
        for name, value in values.items():
            gates.setdefault(name, np.full((seq,) + value.shape, np.nan))[t] = np.where(
                mask[:, t, None], value, np.nan)
        state = tuple(np.where(valid, n, s) for n, s in zip(new_state, state))
        previous = np.where(valid, new_state[0], 0.0 if zero_masked else previous)
        outputs[:, t] = previous
    return gates, outputs


def layer_gates(directions: list[tuple[dict[str, np.ndarray], np.ndarray]]) -> dict[str, np.ndarray]:
    """One layer's gates from its directions' (gates [seq, batch, units], mask [batch, seq]), forward first:
    {letter: [seq, num_directions, batch, units], "mask": [seq, num_directions, batch]}."""
    out = {n: np.stack([g[n] for g, _ in directions], axis=1) for n in directions[0][0]}
    out["mask"] = np.stack([m.T for _, m in directions], axis=1)
    return out
