"""Shape kernels: Reshape, Shape, Size, Flatten, Squeeze, Unsqueeze, Transpose, Expand.

Results are views of their input where NumPy gives one: values are never mutated in place, so sharing is safe.
"""
from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

from .axes import ConstantInputs, axes_of, broadcast_dims, int_list, shape_of
from .base import KernelFactory, OpNode, PlainKernel


def reshape(op: OpNode) -> PlainKernel:
    """Reshape-1 (shape attribute), 5 (shape input), 14 (allowzero: a 0 is a real zero, not 'copy')."""
    allowzero = op.version >= 14 and op.get_int("allowzero") == 1
    fixed = op.get_ints("shape") if op.version < 5 else None
    if op.version < 5 and fixed is None:
        raise op.error("Reshape-1 needs its 'shape' attribute")

    last = ConstantInputs()

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data = args[0]
        shape_input = args[1:]
        dims = last.get(shape_input, data.shape)
        if dims is None:
            shape = fixed if fixed is not None else int_list(args[1], "shape")
            dims = target_shape(data.shape, shape, allowzero)
            last.keep(shape_input, data.shape, dims)
        return (data.reshape(dims),)

    return run


def target_shape(current: tuple[int, ...], shape: list[int], allowzero: bool) -> tuple[int, ...]:
    """Reshape's output shape: 0 copies the input's dimension (unless allowzero), one -1 is inferred."""
    dims = list(shape)
    if dims.count(-1) > 1:
        raise ValueError(f"shape {shape} has more than one -1")
    if any(d < -1 for d in dims):
        raise ValueError(f"shape {shape} has a dimension below -1")
    if allowzero and 0 in dims and -1 in dims:
        raise ValueError(f"shape {shape} has both 0 and -1, which allowzero=1 does not allow")
    if not allowzero:
        for i, d in enumerate(dims):
            if d == 0:
                if i >= len(current):
                    raise ValueError(f"shape {shape} copies dimension {i}, which the input "
                                     f"{list(current)} does not have")
                dims[i] = current[i]
    total = prod(current)
    if -1 in dims:
        known = prod(d for d in dims if d != -1)
        if known == 0 or total % known:
            raise ValueError(f"cannot reshape {list(current)} to {shape}: the -1 cannot be inferred")
        dims[dims.index(-1)] = total // known
    if prod(dims) != total:
        raise ValueError(f"cannot reshape {list(current)} ({total} elements) to {shape}")
    return tuple(dims)


def shape(op: OpNode) -> PlainKernel:
    """Shape-1, 13; 15 adds start/end (clamped to the rank, negative counting from the back)."""
    start = op.get_int("start", 0) if op.version >= 15 else 0
    end = op.attr("end") if op.version >= 15 else None

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        dims = np.asarray(args[0]).shape
        return (np.array(dims[_clamp(start, len(dims)):_clamp(end, len(dims))], dtype=np.int64),)

    return run


def _clamp(bound: int | None, rank: int) -> int:
    if bound is None:
        return rank
    bound = int(bound)
    return min(max(bound + rank if bound < 0 else bound, 0), rank)


def size(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (np.array(np.asarray(args[0]).size, dtype=np.int64),)

    return run


def flatten(op: OpNode) -> PlainKernel:
    """Flatten: a 2-D view, dimensions before `axis` (in [-r, r]) times the ones from it."""
    axis = op.get_int("axis")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data = args[0]
        rank = data.ndim
        if not -rank <= axis <= rank:
            raise ValueError(f"axis {axis} is out of range for a tensor of rank {rank} (allowed: {-rank} to {rank})")
        cut = axis + rank if axis < 0 else axis
        return (data.reshape(prod(data.shape[:cut]), prod(data.shape[cut:])),)

    return run


def squeeze(op: OpNode) -> PlainKernel:
    """Squeeze-1, 11 (axes attribute), 13 (optional axes input); no axes squeezes every dimension of size 1."""
    fixed = op.get_ints("axes") if op.version < 13 else None
    last = ConstantInputs()

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data = args[0]
        axes_input = args[1:]
        found = last.get(axes_input, data.shape)
        if found is None:
            found = (squeezed(data, axes_input),)
            last.keep(axes_input, data.shape, found)
        dims = found[0]
        return (data if dims is None else data.reshape(dims),)

    def squeezed(data: np.ndarray, axes_input: Sequence[Any]) -> tuple[int, ...] | None:
        """The output's shape; None when the input is a scalar and stays as it is."""
        wanted = fixed if op.version < 13 else (
            None if not axes_input or axes_input[0] is None else int_list(axes_input[0], "axes"))
        if wanted is None:
            return tuple(d for d in data.shape if d != 1)
        if data.ndim == 0 and set(wanted) <= {0, -1}:
            # a scalar where the graph declares [1] (e.g. a Loop's iteration number): nothing to squeeze
            return None
        axes = axes_of(wanted, data.ndim)
        wrong = [a for a in axes if data.shape[a] != 1]
        if wrong:
            raise ValueError(f"cannot squeeze axes {wrong} of shape {list(data.shape)}: their size is not 1")
        return tuple(d for i, d in enumerate(data.shape) if i not in axes)

    return run


def unsqueeze(op: OpNode) -> PlainKernel:
    """Unsqueeze-1, 11 (axes attribute), 13 (axes input); axes index the output, of rank r + len(axes)."""
    fixed = op.get_ints("axes") if op.version < 13 else None

    last = ConstantInputs()

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data = args[0]
        axes_input = args[1:]
        shape = last.get(axes_input, data.shape)
        if shape is None:
            wanted = fixed if fixed is not None else int_list(args[1] if len(args) > 1 else None, "axes")
            rank = data.ndim + len(wanted)
            axes = set(axes_of(wanted, rank))
            dims = iter(data.shape)
            shape = tuple([1 if i in axes else next(dims) for i in range(rank)])
            last.keep(axes_input, data.shape, shape)
        return (data.reshape(shape),)

    return run


def transpose(op: OpNode) -> PlainKernel:
    """Transpose: `perm` (default: the axes reversed) must be a permutation of the input's axes."""
    perm = op.get_ints("perm")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data = args[0]
        if perm is None:
            return (data.transpose(),)
        if sorted(perm) != list(range(data.ndim)):
            raise ValueError(f"perm {perm} is not a permutation of the {data.ndim} axes of the input")
        return (data.transpose(perm),)

    return run


def expand(op: OpNode) -> PlainKernel:
    """Expand: the input broadcast with `shape` both ways (a dimension of 1 in `shape` keeps the input's)."""

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data, dims = args[0], shape_of(args[1])
        try:
            target = broadcast_dims(data.shape, dims)
        except ValueError:
            raise ValueError(f"cannot expand {list(data.shape)} to {list(dims)}: the shapes do not broadcast") \
                from None
        out = np.empty(target, data.dtype)
        out[...] = data
        return (out,)

    return run


KERNELS: dict[str, KernelFactory] = {
    "Reshape": reshape,
    "Shape": shape,
    "Size": size,
    "Flatten": flatten,
    "Squeeze": squeeze,
    "Unsqueeze": unsqueeze,
    "Transpose": transpose,
    "Expand": expand,
}
