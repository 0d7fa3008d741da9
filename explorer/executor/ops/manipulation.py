"""Joining, cutting and repeating tensors: Concat, Split, Slice, Tile."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .axes import ConstantInputs, axes_of, axis_of, int_list
from .base import KernelFactory, OpNode, PlainKernel


def concat(op: OpNode) -> PlainKernel:
    """Concat: `axis` is optional (default 1) at version 1, required from 4."""
    axis = op.get_int("axis", 1 if op.version < 4 else None)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        parts = [a for a in args if a is not None]
        if not parts:
            raise ValueError("Concat needs at least one input")
        first = parts[0]
        at = axis_of(axis, first.ndim)
        for k, part in enumerate(parts[1:], 1):
            if part.ndim != first.ndim or part.shape[:at] + part.shape[at + 1:] != \
                    first.shape[:at] + first.shape[at + 1:]:
                raise ValueError(f"input {k} {list(part.shape)} does not match input 0 {list(first.shape)} "
                                 f"outside axis {axis}")
            if part.dtype != first.dtype:
                raise ValueError(f"input {k} is {part.dtype}, input 0 is {first.dtype}")
        return (np.concatenate(parts, axis=at),)

    return run


def split(op: OpNode) -> PlainKernel:
    """Split-1 (split attribute or second input), 2 and 11 (attribute), 13 (input), 18 (the input or
    num_outputs: equal parts, the last one smaller). Before 18, with neither, the parts are equal, one per output."""
    axis = op.get_int("axis", 0)
    outputs = len(op.node.proto.output)
    fixed = op.get_ints("split") if op.version < 13 else None
    num_outputs = op.attr("num_outputs") if op.version >= 18 else None
    if num_outputs is not None:
        if int(num_outputs) < 1:
            raise op.error(f"num_outputs={num_outputs} must be at least 1")
        if int(num_outputs) != outputs:
            raise op.error(f"num_outputs={num_outputs} but the node has {outputs} outputs")
        if op.input_count() > 1:
            raise op.error("'split' and 'num_outputs' are both given; Split-18 takes one of them")
    input_split = op.version >= 13 or (op.version == 1 and fixed is None)
    if op.version >= 18 and num_outputs is None and op.input_count() < 2:
        raise op.error("Split-18 needs the 'split' input or the 'num_outputs' attribute")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data = args[0]
        at = axis_of(axis, data.ndim)
        dim = data.shape[at]
        sizes = fixed
        if input_split and len(args) > 1 and args[1] is not None:
            sizes = int_list(args[1], "split")
        if sizes is None:
            if num_outputs is not None:
                chunk = -(-dim // outputs)
                if chunk * (outputs - 1) > dim:
                    raise ValueError(f"dimension {dim} does not split into {outputs} parts of {chunk} "
                                     "with only the last one smaller")
                sizes = [chunk] * (outputs - 1) + [dim - chunk * (outputs - 1)]
            elif dim % outputs:
                raise ValueError(f"dimension {dim} of axis {axis} does not split evenly into {outputs} outputs")
            else:
                sizes = [dim // outputs] * outputs
        if len(sizes) != outputs or sum(sizes) != dim or min(sizes, default=0) < 0:
            raise ValueError(f"split {sizes} does not cut dimension {dim} of axis {axis} into {outputs} parts")
        index: list[slice] = [slice(None)] * data.ndim
        parts, start = [], 0
        for size in sizes:  # views, as np.split makes them, without its Python wrappers
            index[at] = slice(start, start + size)
            parts.append(data[tuple(index)])
            start += size
        return tuple(parts)

    return run


def slice_(op: OpNode) -> PlainKernel:
    """Slice-1 (starts/ends/axes attributes), 10 (inputs, with steps), 11, 13. Bounds are clamped as Python
    slices clamp them; the result is a view."""
    if op.version < 10:
        starts, ends, axes = op.get_ints("starts"), op.get_ints("ends"), op.get_ints("axes")

        def run_attributes(args: Sequence[Any]) -> tuple[Any, ...]:
            return (sliced(args[0], starts, ends, axes, None),)

        return run_attributes

    last = ConstantInputs()

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data = args[0]
        bounds = args[1:]
        index = last.get(bounds, data.shape)
        if index is None:
            axes = int_list(args[3], "axes") if len(args) > 3 and args[3] is not None else None
            steps = int_list(args[4], "steps") if len(args) > 4 and args[4] is not None else None
            index = slice_index(data.shape, int_list(args[1], "starts"), int_list(args[2], "ends"), axes, steps)
            last.keep(bounds, data.shape, index)
        return (data[index],)

    return run


def sliced(data: np.ndarray, starts: list[int] | None, ends: list[int] | None, axes: list[int] | None,
           steps: list[int] | None) -> np.ndarray:
    """data[...] for ONNX Slice's starts, ends, axes (default: the first len(starts)) and steps (default 1)."""
    return data[slice_index(data.shape, starts, ends, axes, steps)]


def slice_index(shape: tuple[int, ...], starts: list[int] | None, ends: list[int] | None, axes: list[int] | None,
                steps: list[int] | None) -> tuple[slice, ...]:
    """The index of ONNX Slice's starts, ends, axes and steps into an array of `shape`."""
    starts, ends = starts or [], ends or []
    if len(starts) != len(ends):
        raise ValueError(f"starts {starts} and ends {ends} differ in length")
    axes = axes_of(axes if axes is not None else list(range(len(starts))), len(shape))
    steps = steps if steps is not None else [1] * len(starts)
    if len(axes) != len(starts) or len(steps) != len(starts):
        raise ValueError(f"starts, ends, axes and steps differ in length ({len(starts)}, {len(ends)}, "
                         f"{len(axes)}, {len(steps)})")
    index: list[slice] = [slice(None)] * len(shape)
    for axis, start, end, step in zip(axes, starts, ends, steps):
        if step == 0:
            raise ValueError(f"step 0 on axis {axis}")
        dim = shape[axis]
        start = start + dim if start < 0 else start
        end = end + dim if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        else:
            start, end = min(max(start, -1), dim - 1), min(max(end, -1), dim - 1)
        index[axis] = slice(start, end if end >= 0 else None, step)
    return tuple(index)


def tile(op: OpNode) -> PlainKernel:
    """Tile-1 (inputs tiles and axis: repeat along one axis), 6 and 13 (repeats, one per axis)."""
    if op.version < 6:
        def run_axis(args: Sequence[Any]) -> tuple[Any, ...]:
            data = args[0]
            times, axis = _count(args[1], "tiles"), axis_of(_count(args[2], "axis"), data.ndim)
            reps = [1] * data.ndim
            reps[axis] = _non_negative(times)
            return (np.tile(data, reps),)

        return run_axis

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        data, repeats = args[0], int_list(args[1], "repeats")
        if len(repeats) != data.ndim:
            raise ValueError(f"repeats {repeats} has {len(repeats)} values for a tensor of rank {data.ndim}")
        return (np.tile(data, [_non_negative(r) for r in repeats]),)

    return run


def _count(value: np.ndarray, what: str) -> int:
    """Tile-1's tiles and axis: one value of the data's own (float) type, a whole number."""
    array = np.asarray(value).reshape(-1)
    if array.size != 1 or array[0] != int(array[0]):
        raise ValueError(f"{what} must be one whole number, got {array.tolist()}")
    return int(array[0])


def _non_negative(times: int) -> int:
    if times < 0:
        raise ValueError(f"repeat count {times} is negative")
    return times


KERNELS: dict[str, KernelFactory] = {
    "Concat": concat,
    "Split": split,
    "Slice": slice_,
    "Tile": tile,
}
