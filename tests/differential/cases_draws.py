"""RandomNormal, RandomUniform, their Like forms, Bernoulli and Multinomial (explorer/executor/ops/draws.py)
at every version, judged by their types, shapes and the statistics of their values (sampled.py)."""
from __future__ import annotations

from functools import partial

import ml_dtypes
import numpy as np
from onnx import helper

from .gen import float16_at_opset1, rng, schema_types, since_versions
from .harness import Case
from .sampled import Sampled, Statistic

DRAWS = (100, 200)  # 20,000 values a case: six standard errors of a mean are 4% of a standard deviation
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def _code(dtype: object) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _types(op: str, version: int, param: str) -> tuple[np.dtype, ...]:
    """The schema's types, bfloat16 included where it allows it."""
    return schema_types(op, version, param, exotic=True)


def _rounding(dtype: object, size: float) -> float:
    """How far rounding values of magnitude `size` to `dtype` may move a statistic of them."""
    dtype = np.dtype(dtype)
    return float(ml_dtypes.finfo(dtype).eps) * size if dtype.kind in "fV" else 0.0


def _fraction(low: float, high: float, y: np.ndarray) -> float:
    return float(np.mean((y >= low) & (y <= high)))


def _within(name: str, want: float, error: float, of, slack: float = 0.0) -> Statistic:
    """A statistic within six standard errors (`error` each) of the spec's value, plus `slack` for rounding."""
    return Statistic(name, of, want - 6 * error - slack, want + 6 * error + slack)


def normal_statistics(mean: float, scale: float, dtype: object, count: int) -> tuple[Statistic, ...]:
    """A normal sample's mean and standard deviation, and its share within one standard deviation of the mean."""
    slack = _rounding(dtype, abs(mean) + abs(scale))
    spread = abs(scale)
    inside = 0.6826894921370859
    return (_within("mean", mean, spread / np.sqrt(count), np.mean, slack),
            _within("standard deviation", spread, spread / np.sqrt(2 * count), np.std, slack),
            _within("share within one standard deviation", inside, np.sqrt(inside * (1 - inside) / count),
                    partial(_fraction, mean - spread, mean + spread), 2 * slack))


def uniform_statistics(low: float, high: float, dtype: object, count: int) -> tuple[Statistic, ...]:
    """A uniform sample's bounds, mean, standard deviation and share in its first quarter."""
    width = high - low
    slack = _rounding(dtype, max(abs(low), abs(high)))
    return (Statistic("smallest value", np.min, low, high), Statistic("largest value", np.max, low, high),
            _within("mean", (low + high) / 2, width / np.sqrt(12 * count), np.mean, slack),
            _within("standard deviation", width / np.sqrt(12), width / np.sqrt(12) / np.sqrt(count), np.std, slack),
            _within("share in the first quarter", 0.25, np.sqrt(0.25 * 0.75 / count),
                    partial(_fraction, low, low + width / 4), slack))


def _row_rate(row: int, y: np.ndarray) -> float:
    return float(np.mean(y[row]))


def _not_binary(y: np.ndarray) -> float:
    return float(np.sum((y != 0) & (y != 1)))


def bernoulli_statistics(p: np.ndarray) -> tuple[Statistic, ...]:
    """Each row's rate of ones against its probability (rows of one probability each), and only 0s and 1s."""
    count = p.shape[1]
    found = [Statistic("values other than 0 and 1", _not_binary, 0, 0)]
    for row, q in enumerate(p[:, 0].astype(np.float64)):
        found.append(_within(f"rate of ones in row {row} (p={q:.4g})", q, np.sqrt(q * (1 - q) / count),
                             partial(_row_rate, row)))
    return tuple(found)


def _class_share(row: int, klass: int, y: np.ndarray) -> float:
    return float(np.mean(y[row] == klass))


def _outside(classes: int, y: np.ndarray) -> float:
    return float(np.sum((y < 0) | (y >= classes)))


def multinomial_statistics(logits: np.ndarray, count: int) -> tuple[Statistic, ...]:
    """Each class's share of its row's draws against exp(x) / sum(exp(x)), and no index outside the classes."""
    wide = logits.astype(np.float64)
    p = np.exp(wide - wide.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    found = [Statistic("indices outside the classes", partial(_outside, logits.shape[1]), 0, 0)]
    for (row, klass), q in np.ndenumerate(p):
        found.append(_within(f"share of class {klass} in row {row} (p={q:.4g})", q, np.sqrt(q * (1 - q) / count),
                             partial(_class_share, row, klass)))
    return tuple(found)


def random_cases() -> list[Case]:
    found = []
    for op, first, second, statistics in (("RandomNormal", "mean", "scale", normal_statistics),
                                          ("RandomUniform", "low", "high", uniform_statistics)):
        default = (0.0, 1.0)
        for version in since_versions(op):
            count = int(np.prod(DRAWS))
            found.append(Case(op, version, [], {"shape": list(DRAWS)},
                              sampled=Sampled(np.float32, DRAWS, statistics(*default, np.float32, count))))
            for k, dtype in enumerate(_types(op, version, "T")):
                a, b = (2.5, 0.5) if op == "RandomNormal" else (-3.0, 5.0)
                attrs = {"shape": list(DRAWS), "dtype": _code(dtype), first: a, second: b, "seed": float(k + 1)}
                found.append(Case(op, version, [], attrs, sampled=Sampled(dtype, DRAWS, statistics(a, b, dtype,
                                                                                                    count))))
            for shape in ([0, 3], [2, 1, 3]):
                found.append(Case(op, version, [], {"shape": shape, "seed": -3.5},
                                  sampled=Sampled(np.float32, tuple(shape), ())))
            found.append(Case(op, version, [], {"shape": [2], "dtype": _code(np.int32)}, error="is not one"))
            found.append(Case(op, version, [], {"shape": [2, -1]}, error="negative dimensions"))
        like = f"{op}Like"
        for version in since_versions(like):
            count = int(np.prod(DRAWS))
            r = rng(like, version)
            for dtype in _types(like, version, "T1"):  # the input gives the shape, and the type unless dtype is set
                x = np.zeros(DRAWS, dtype) if dtype.kind != "O" else np.full(DRAWS, "a", dtype=object)
                makes = dtype in _types(like, version, "T2")
                attrs = {} if makes else {"dtype": _code(np.float64)}
                out = dtype if makes else np.dtype(np.float64)
                found.append(Case(like, version, [x], attrs, dtype_sweep=True, **float16_at_opset1(like, version, dtype),
                                  sampled=Sampled(out, DRAWS, statistics(*default, out, count))))
            for k, dtype in enumerate(_types(like, version, "T2")):
                a, b = (-1.5, 2.0) if op == "RandomNormal" else (10.0, 10.5)
                x = r.integers(0, 5, DRAWS).astype(np.int32)
                attrs = {"dtype": _code(dtype), first: a, second: b, "seed": 7.0 + k}
                found.append(Case(like, version, [x], attrs, sampled=Sampled(dtype, DRAWS, statistics(a, b, dtype,
                                                                                                      count))))
            found.append(Case(like, version, [np.zeros((2, 0), np.float32)], {"seed": 1.0},
                              sampled=Sampled(np.float32, (2, 0), ())))
            found.append(Case(like, version, [np.zeros(3, np.int64)], error="the dtype attribute is not set"))
    return found


def bernoulli_cases() -> list[Case]:
    found = []
    rates = np.array([0.0, 0.1, 0.5, 0.9, 1.0])
    for version in since_versions("Bernoulli"):
        for k, dtype in enumerate(_types("Bernoulli", version, "T1")):
            p = np.repeat(rates[:, None], 4000, axis=1).astype(dtype)
            found.append(Case("Bernoulli", version, [p], dtype_sweep=True,
                              sampled=Sampled(dtype, p.shape, bernoulli_statistics(p))))
            for j, out in enumerate(_types("Bernoulli", version, "T2")):
                found.append(Case("Bernoulli", version, [p], {"dtype": _code(out), "seed": float(10 * k + j)},
                                  sampled=Sampled(out, p.shape, bernoulli_statistics(p))))
        found.append(Case("Bernoulli", version, [np.full((0, 2), 0.5, np.float32)], {"seed": 2.0},
                          sampled=Sampled(np.float32, (0, 2), ())))
        found.append(Case("Bernoulli", version, [np.zeros(2, np.float32)], {"dtype": _code(np.object_)},
                          error="is not one"))
    return found


def multinomial_cases() -> list[Case]:
    found = []
    samples = 20000
    # unnormalized log-probabilities: shifted rows, a class never drawn (-inf), a row of almost one class
    logits = np.array([np.log([0.2, 0.3, 0.5, 1e-300]) + 7, np.log([0.25] * 4) - 2, [0, 0, 0, 10]])
    logits[0, 3] = -np.inf
    for version in since_versions("Multinomial"):
        for k, dtype in enumerate(_types("Multinomial", version, "T1")):
            x = logits.astype(dtype)
            found.append(Case("Multinomial", version, [x], {"sample_size": samples}, dtype_sweep=True,
                              sampled=Sampled(np.int32, (3, samples), multinomial_statistics(x, samples))))
            found.append(Case("Multinomial", version, [x], {"sample_size": samples, "dtype": _code(np.int64),
                                                             "seed": float(k)},
                              sampled=Sampled(np.int64, (3, samples), multinomial_statistics(x, samples))))
        x = logits.astype(np.float32)
        found.append(Case("Multinomial", version, [x], {"dtype": _code(np.int32), "seed": 3.0},
                          sampled=Sampled(np.int32, (3, 1), multinomial_statistics(x, 1)[:1])))
        found.append(Case("Multinomial", version, [x], {"dtype": _code(np.float32)}, error="is not one"))
        found.append(Case("Multinomial", version, [x], {"sample_size": 0}, error="sample_size is 0"))
        found.append(Case("Multinomial", version, [x[0]], error="must be 2-D"))
        found.append(Case("Multinomial", version, [np.array([[0, 1], [np.nan, 0]], np.float32)],
                          error="row 1 holds nan"))
        found.append(Case("Multinomial", version, [np.full((1, 3), -np.inf, np.float32)],
                          error="row 0 has no finite log-probability"))
    return found


def cases() -> list[Case]:
    return [*random_cases(), *bernoulli_cases(), *multinomial_cases()]
