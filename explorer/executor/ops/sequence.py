"""Sequence kernels. A sequence is a Python list of arrays; every kernel returns a new one (a TensorSequence, which
carries its size in bytes so that checking a growing sequence stays O(1) per event) and never changes the one it
was given (recorded events share them)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from ...trace.values import POINTER_BYTES, TensorSequence, nbytes
from .axes import axis_of, int_list, int_scalar
from .base import KernelFactory, OpNode, PlainKernel


def _sequence(value: Any, what: str = "input_sequence") -> list[Any]:
    if not isinstance(value, list):
        kind = "nothing" if value is None else type(value).__name__
        raise TypeError(f"{what} must be a sequence, got {kind}")
    return value


def _position(value: np.ndarray | None, length: int, default: int, allow_end: bool) -> int:
    """A position in [-length, length-1] (or up to `length` when inserting) as a non-negative index."""
    if value is None:
        return default
    position = int_scalar(value, "position")
    high = length if allow_end else length - 1
    if not -length <= position <= high:
        raise ValueError(f"position {position} is out of range for a sequence of {length} "
                         f"(allowed: {-length} to {high})")
    return position + length if position < 0 else position


def _same_type(tensors: list[Any], reference: np.dtype | None) -> None:
    for k, tensor in enumerate(tensors):
        if not isinstance(tensor, np.ndarray):
            raise TypeError(f"element {k} is {type(tensor).__name__}, not a tensor")
        if reference is not None and tensor.dtype != reference:
            raise ValueError(f"element {k} is {tensor.dtype}, the sequence holds {reference}")


def sequence_empty(op: OpNode) -> PlainKernel:
    code = op.attr("dtype")
    if code is not None:
        onnx.helper.tensor_dtype_to_np_dtype(int(code))  # refuses unknown type codes at build time

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (TensorSequence(),)

    return run


def sequence_construct(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        tensors = list(args)
        _same_type(tensors, tensors[0].dtype if tensors and isinstance(tensors[0], np.ndarray) else None)
        return (TensorSequence(tensors),)

    return run


def sequence_insert(op: OpNode) -> PlainKernel:
    """SequenceInsert: a new sequence with `tensor` at `position` (default: the end)."""

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        sequence, tensor = _sequence(args[0]), args[1]
        _same_type([tensor], sequence[0].dtype if sequence else None)
        at = _position(args[2] if len(args) > 2 else None, len(sequence), len(sequence), allow_end=True)
        size = nbytes(sequence) + POINTER_BYTES + nbytes(tensor)
        return (TensorSequence(sequence[:at] + [tensor] + sequence[at:], size),)

    return run


def sequence_at(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        sequence = _sequence(args[0])
        return (sequence[_position(args[1], len(sequence), 0, allow_end=False)],)

    return run


def sequence_erase(op: OpNode) -> PlainKernel:
    """SequenceErase: a new sequence without the element at `position` (default: the last)."""

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        sequence = _sequence(args[0])
        if not sequence:
            raise ValueError("cannot erase from an empty sequence")
        at = _position(args[1] if len(args) > 1 else None, len(sequence), len(sequence) - 1, allow_end=False)
        size = nbytes(sequence) - POINTER_BYTES - nbytes(sequence[at])
        return (TensorSequence(sequence[:at] + sequence[at + 1:], size),)

    return run


def sequence_length(op: OpNode) -> PlainKernel:
    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (np.array(len(_sequence(args[0])), dtype=np.int64),)

    return run


def split_to_sequence(op: OpNode) -> PlainKernel:
    """SplitToSequence-11, 24: `split` a scalar (chunks of that size, the last smaller) or sizes; without it,
    chunks of 1, squeezed unless keepdims=1."""
    axis, keepdims = op.get_int("axis"), op.get_int("keepdims") == 1

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        at = axis_of(axis, x.ndim)
        dim = x.shape[at]
        split = args[1] if len(args) > 1 else None
        if split is None:
            parts = np.split(x, dim, axis=at) if dim else []
            return (TensorSequence([p if keepdims else np.squeeze(p, axis=at) for p in parts]),)
        if np.asarray(split).ndim == 0:
            chunk = int_scalar(split, "split")
            if chunk < 1:
                raise ValueError(f"split {chunk} must be positive")
            sizes = [chunk] * (dim // chunk) + ([dim % chunk] if dim % chunk else [])
        else:
            sizes = int_list(split, "split")
            if sum(sizes) != dim or min(sizes, default=0) < 0:
                raise ValueError(f"split {sizes} does not cut dimension {dim} of axis {axis}")
        return (TensorSequence(np.split(x, np.cumsum(sizes)[:-1], axis=at)),)

    return run


def concat_from_sequence(op: OpNode) -> PlainKernel:
    """ConcatFromSequence: the elements joined along `axis`, or stacked on a new one (new_axis=1, axis in
    [-r-1, r])."""
    axis, new_axis = op.get_int("axis"), op.get_int("new_axis") == 1

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        sequence = _sequence(args[0])
        if not sequence:
            raise ValueError("cannot concatenate an empty sequence")
        _same_type(sequence, sequence[0].dtype)
        rank = sequence[0].ndim
        if new_axis:
            at = axis_of(axis, rank + 1)
            if any(t.shape != sequence[0].shape for t in sequence):
                raise ValueError(f"elements differ in shape ({[list(t.shape) for t in sequence]}): cannot stack")
            return (np.stack(sequence, axis=at),)
        at = axis_of(axis, rank)
        try:
            return (np.concatenate(sequence, axis=at),)
        except ValueError:
            raise ValueError(f"elements {[list(t.shape) for t in sequence]} differ outside axis {axis}") from None

    return run


KERNELS: dict[str, KernelFactory] = {
    "SequenceEmpty": sequence_empty,
    "SequenceConstruct": sequence_construct,
    "SequenceInsert": sequence_insert,
    "SequenceAt": sequence_at,
    "SequenceErase": sequence_erase,
    "SequenceLength": sequence_length,
    "SplitToSequence": split_to_sequence,
    "ConcatFromSequence": concat_from_sequence,
}
