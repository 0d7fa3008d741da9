"""Random draws: RandomNormal and RandomUniform (1, 22) of the `shape` attribute's shape, RandomNormalLike and
RandomUniformLike (1, 22) of their input's shape, Bernoulli (15, 22), Multinomial (7, 22).

Each node draws from its own stream of the run (ops/streams.py: a `seed` makes every run draw the same
values). Values are drawn in float64 and rounded to the output type once: a normal draw is mean + scale * z, a
uniform one low + (high - low) * u with u in [0, 1) (rounding to a narrow type may reach `high`). The output
type is `dtype` (default float; the Like forms' default is their input's type, which must then be one they
make).

Bernoulli gives 1 where a uniform draw in [0, 1) is below the input probability p: 1 with probability p, as
the spec says (its function body, which onnxruntime runs, compares the other way and gives 1 with probability
1 - p). A p below 0 or NaN always gives 0, above 1 always 1.

Multinomial's input is [batch_size, class_size] unnormalized log-probabilities: class c of a row is drawn with
probability exp(x[c]) / sum(exp(x)), `sample_size` times per row, by inverting the row's cumulative
distribution (computed in float64 from the row's maximum, as onnxruntime does). A -inf log-probability is a
class never drawn; a row with NaN or +inf, or with no finite value, is refused naming the row."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from .base import KernelFactory, OpNode, PlainKernel
from .element_types import element_dtype
from .streams import stream


def _allowed(op: OpNode, output: int = 0) -> dict[np.dtype, str]:
    """The element types the schema lets an output take, numpy dtype -> ONNX name."""
    assert op.schema is not None
    param = op.schema.outputs[output].type_str
    texts = next(c.allowed_type_strs for c in op.schema.type_constraints if c.type_param_str == param)
    names = [text[len("tensor("):-1] for text in texts]
    return {element_dtype(getattr(onnx.TensorProto, name.upper())): name for name in names}


def _output_dtype(op: OpNode, default: int | None) -> np.dtype | None:
    """The `dtype` attribute's type (else `default`'s; None: the input's, checked when it arrives), refused
    unless the schema allows it."""
    code = op.attr("dtype", default)
    if code is None:
        return None
    allowed = _allowed(op)
    try:
        dtype = element_dtype(int(code))
    except ValueError:
        dtype = None
    if dtype not in allowed:
        makes = ", ".join(allowed.values())
        raise op.error(f"dtype {code} is not one {op.op_type}-{op.version} makes ({makes})")
    return dtype


def _like_dtype(op: OpNode, dtype: np.dtype | None, x: np.ndarray) -> np.dtype:
    if dtype is not None:
        return dtype
    allowed = _allowed(op)
    if x.dtype not in allowed:
        raise ValueError(f"the input is {x.dtype} and the dtype attribute is not set: {op.op_type} makes "
                         f"{', '.join(allowed.values())} (set dtype)")
    return x.dtype


def _seed(op: OpNode) -> float | None:
    seed = op.attr("seed")
    return None if seed is None else float(seed)


def _shape_attribute(op: OpNode) -> tuple[int, ...]:
    dims = op.get_ints("shape")
    if dims is None:
        raise op.error("attribute 'shape' is not set (it is required)")
    if any(d < 0 for d in dims):
        raise op.error(f"attribute 'shape' {dims} has negative dimensions")
    return tuple(dims)


def random_kernel(op: OpNode) -> PlainKernel:
    """RandomNormal, RandomUniform and their Like forms."""
    normal = op.op_type.startswith("RandomNormal")
    like = op.op_type.endswith("Like")
    dtype = _output_dtype(op, None if like else onnx.TensorProto.FLOAT)
    shape = () if like else _shape_attribute(op)
    first, width = (op.get_float("mean"), op.get_float("scale")) if normal else \
        (op.get_float("low"), op.get_float("high") - op.get_float("low"))
    path, seed = op.path, _seed(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        if like:
            dims, out = args[0].shape, _like_dtype(op, dtype, args[0])
        else:
            dims, out = shape, dtype or np.dtype(np.float32)
        generator = stream(path, seed)
        draws = generator.standard_normal(dims) if normal else generator.random_sample(dims)
        return (np.asarray(first + width * draws).astype(out),)

    return run


def bernoulli_kernel(op: OpNode) -> PlainKernel:
    """Bernoulli: 1 with the input's probability, 0 otherwise, in `dtype` (default: the input's type)."""
    dtype = _output_dtype(op, None)
    path, seed = op.path, _seed(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        p = args[0]
        drawn = stream(path, seed).random_sample(p.shape) < p.astype(np.float64)
        return (drawn.astype(dtype or p.dtype),)

    return run


def multinomial_kernel(op: OpNode) -> PlainKernel:
    """Multinomial: `sample_size` class indices per row of unnormalized log-probabilities."""
    dtype = _output_dtype(op, onnx.TensorProto.INT32)
    samples = op.get_int("sample_size")
    if samples < 1:
        raise op.error(f"sample_size is {samples}; it must be at least 1")
    path, seed = op.path, _seed(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if x.ndim != 2:
            raise ValueError(f"the input must be 2-D [batch_size, class_size], got shape {list(x.shape)}")
        rows, classes = x.shape
        if classes == 0:
            raise ValueError("the input has no classes (class_size 0)")
        logits = x.astype(np.float64)
        bad = np.isnan(logits) | (logits == np.inf)
        if bad.any():
            row = int(np.argmax(bad.any(axis=1)))
            value = logits[row][bad[row]][0]
            raise ValueError(f"row {row} holds {value}: log-probabilities must be finite or -inf")
        peak = logits.max(axis=1, keepdims=True)
        if (peak == -np.inf).any():
            row = int(np.argmax(peak[:, 0] == -np.inf))
            raise ValueError(f"row {row} has no finite log-probability: no class can be drawn")
        cdf = np.cumsum(np.exp(logits - peak), axis=1)
        cdf /= cdf[:, -1:]
        draws = stream(path, seed).random_sample((rows, samples))
        # one sorted array for all rows: row r's cumulative values and draws lie in [2r, 2r + 1]
        offsets = 2.0 * np.arange(rows)[:, None]
        found = np.searchsorted((cdf + offsets).ravel(), (draws + offsets).ravel(), side="right")
        found = found.reshape(rows, samples)
        index = found - classes * np.arange(rows)[:, None]
        # a draw rounded up to its row's 1.0 is the last class that can be drawn
        last = classes - 1 - np.argmax((logits > -np.inf)[:, ::-1], axis=1)
        index = np.minimum(index, last[:, None])
        return (index.astype(dtype),)

    return run


KERNELS: dict[str, KernelFactory] = {
    "RandomNormal": random_kernel,
    "RandomUniform": random_kernel,
    "RandomNormalLike": random_kernel,
    "RandomUniformLike": random_kernel,
    "Bernoulli": bernoulli_kernel,
    "Multinomial": multinomial_kernel,
}
