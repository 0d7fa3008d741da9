"""The activations of GRU/LSTM/RNN cells as in-place NumPy functions, with their alpha/beta bound (which
activations exist and their defaults: explorer/spec/rnn.py)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...spec.rnn import Activation
from ..ops.activation import ONE, sigmoid_into

ActivationFn = Callable[[np.ndarray, np.ndarray], object]
"""fn(x, out) writes the activation of x into out; `out` may be `x`."""


def sigmoid_of_negated(u: np.ndarray, out: np.ndarray) -> None:
    """sigmoid(x) from u = -x (the cells negate the weights of their sigmoid gates: kernel._gate_scales)."""
    np.exp(u, out=out)  # overflows to inf for x << 0, giving exactly 0 below
    np.add(out, ONE, out=out)
    np.reciprocal(out, out=out)


def relu(x: np.ndarray, out: np.ndarray) -> None:
    """max(x, 0) into `out` (the cells' loops call np.maximum themselves when they see this one)."""
    np.maximum(x, 0.0, out=out)


def activation_fn(activation: Activation) -> ActivationFn:
    """The in-place implementation of one spec activation with its alpha/beta bound."""
    a = 0.0 if activation.alpha is None else activation.alpha
    b = 0.0 if activation.beta is None else activation.beta

    def affine(x: np.ndarray, out: np.ndarray) -> None:
        np.multiply(x, a, out=out)
        np.add(out, b, out=out)

    def scaled_tanh(x: np.ndarray, out: np.ndarray) -> None:
        np.multiply(x, b, out=out)
        np.tanh(out, out=out)
        np.multiply(out, a, out=out)

    def hard_sigmoid(x: np.ndarray, out: np.ndarray) -> None:
        np.multiply(x, a, out=out)
        np.add(out, b, out=out)
        np.clip(out, 0.0, 1.0, out=out)

    def softsign(x: np.ndarray, out: np.ndarray) -> None:
        np.copyto(out, x / (1.0 + np.abs(x)))

    table: dict[str, ActivationFn] = {
        "Sigmoid": sigmoid_into,
        "Tanh": np.tanh,  # tanh(x, out): a ufunc takes `out` by position
        "Relu": relu,
        "Affine": affine,
        "LeakyRelu": lambda x, out: np.copyto(out, np.where(x >= 0, x, x * a)),
        "ThresholdedRelu": lambda x, out: np.copyto(out, np.where(x >= a, x, 0.0)),
        "ScaledTanh": scaled_tanh,
        "HardSigmoid": hard_sigmoid,
        "Elu": lambda x, out: np.copyto(out, np.where(x >= 0, x, a * np.expm1(np.minimum(x, 0.0)))),
        "Softsign": softsign,
        "Softplus": lambda x, out: np.logaddexp(0.0, x, out=out),
    }
    return table[activation.name]


def lane_activations(per_direction: tuple[tuple[Activation, ...], ...]) -> tuple[ActivationFn, ...]:
    """f, g[, h] applied to arrays [..., direction, batch, hidden]: one call for every direction when they all use
    the same activations (the usual case), else each direction's own on its slice."""
    if all(acts == per_direction[0] for acts in per_direction):
        return tuple(activation_fn(a) for a in per_direction[0])

    def per_lane(fns: tuple[ActivationFn, ...]) -> ActivationFn:
        def apply(x: np.ndarray, out: np.ndarray) -> None:
            for k, fn in enumerate(fns):
                fn(x[..., k, :, :], out[..., k, :, :])
        return apply

    return tuple(per_lane(tuple(activation_fn(d[j]) for d in per_direction))
                 for j in range(len(per_direction[0])))
