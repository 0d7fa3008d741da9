"""The judge of a random operator's case (RandomNormal, RandomUniform, their Like forms, Bernoulli,
Multinomial): its values cannot equal onnxruntime's, drawn by another generator. Its outputs' element types
and shapes must be the spec's and onnxruntime's (where onnxruntime implements the case's types: where it
lacks them, the spec's alone), and statistics of its values must lie in the ranges the spec's distribution
gives them (a mean within six standard errors of the spec's, every value within [low, high], a rate within
six standard errors of its probability): a case with a seed draws the same values on every run, so its
statistics are the same every time."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

NOT_IMPLEMENTED = "NOT_IMPLEMENTED"


@dataclass(frozen=True)
class Statistic:
    """A function of the first output and the range the spec's distribution gives it."""

    name: str
    of: Callable[[np.ndarray], float]
    low: float
    high: float


@dataclass(frozen=True)
class Sampled:
    """The spec's element type and shape of the first output, and the statistics its values must satisfy."""

    dtype: Any
    shape: tuple[int, ...]
    statistics: tuple[Statistic, ...]


def _as_returned(dtype: np.dtype) -> np.dtype:
    """The type onnxruntime returns an output of `dtype` as: the ml_dtypes types come back cast to float32."""
    return np.dtype(np.float32) if dtype.type.__module__ == "ml_dtypes" else dtype


def sampled_problem(sampled: Sampled, got: list[Any] | Exception, ort: list[Any] | str) -> str | None:
    """What is wrong with explorer's outputs `got` of a sampled case, given onnxruntime's (or its refusal); None
    when nothing is."""
    if isinstance(got, Exception):
        return f"explorer failed: {got}"
    if isinstance(ort, str):
        if NOT_IMPLEMENTED not in ort:
            return f"onnxruntime refuses it: {ort}"
    else:
        kinds = [(_as_returned(np.asarray(v).dtype), np.shape(v)) for v in got]
        theirs = [(np.asarray(v).dtype, np.shape(v)) for v in ort]
        if kinds != theirs:
            return f"outputs {kinds}, onnxruntime's {theirs}"
    value = got[0]
    if not isinstance(value, np.ndarray) or (value.dtype, value.shape) != (np.dtype(sampled.dtype), sampled.shape):
        return f"output {np.asarray(value).dtype}{list(np.shape(value))}, the spec's " \
               f"{np.dtype(sampled.dtype)}{list(sampled.shape)}"
    wide = value.astype(np.float64)
    for statistic in sampled.statistics:
        found = float(statistic.of(wide))
        if not statistic.low <= found <= statistic.high:
            return f"{statistic.name} is {found:.6g}, outside [{statistic.low:.6g}, {statistic.high:.6g}]"
    return None
