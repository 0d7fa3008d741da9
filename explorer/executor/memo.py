"""Shape arithmetic remembered: the small integer computations exporters write around every reshape (Shape,
Gather, Unsqueeze, Concat, Slice, Range, comparisons of loop counters...) give the same result whenever they see the
same values, and a model sees the same few values run after run and iteration after iteration.

A node of these operators whose inputs are all small integer or boolean tensors (or, for Shape and Size, any
tensor: only its shape is read) keeps its results by input values, and a later execution with the same values
records the kept result without running the kernel: the event is the same. A kept result is a private read-only
copy, so no trace can change what another run records. The cache is bounded per node and per model.

Constants are remembered too: a node whose inputs are all constants (initializers no feed can replace, Constant
values, results of such nodes, the outer constants a body reads) gives the same result in every run and every iteration, so its first result is
kept (`computed_once`) and made read-only. Exporters write such chains around weights: the slices and concats
that reorder a PyTorch LSTM's gates, the transposes and casts in front of a MatMul; kept, they cost nothing
after the first run, and the kernels that keep layouts of read-only weights (the recurrent cells') keep theirs."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

from ..budgets import (
    MEMO_ENTRIES,
    MEMO_KEPT_ELEMENTS,
    MEMO_KEY_ELEMENTS,
    MEMO_MODEL_BYTES,
)

Kernel = Callable[[Sequence[Any]], tuple[Any, ...]]

SHAPE_ARITHMETIC = frozenset({
    "Shape", "Size", "Gather", "GatherElements", "Unsqueeze", "Squeeze", "Concat", "Slice", "Split", "Range",
    "ConstantOfShape", "Expand", "Reshape", "Flatten", "Transpose", "Tile", "Identity", "Cast", "CastLike",
    "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor", "Where", "Add", "Sub",
    "Mul", "Div", "Mod", "Neg", "Abs", "Min", "Max", "Sign", "ReduceProd", "ReduceSum", "ReduceMin", "ReduceMax",
    "ArgMax", "ArgMin", "NonZero", "Clip",
})
"""Default-domain operators whose result is a function of their input values and attributes only."""

SHAPE_ONLY = frozenset({"Shape", "Size"})  # their result depends on the input's shape alone


INTEGER_TYPES = frozenset({
    TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16, TensorProto.INT32,
    TensorProto.UINT32, TensorProto.INT64, TensorProto.UINT64, TensorProto.BOOL, TensorProto.INT4,
    TensorProto.UINT4,
})


INTEGER_DTYPES = frozenset(np.dtype(helper.tensor_dtype_to_np_dtype(t)) for t in INTEGER_TYPES)
"""What a remembered node's inputs may hold: the same types as NumPy dtypes."""


def worth_remembering(op_type: str, input_types: Sequence[onnx.TypeProto | None]) -> bool:
    """Whether a node may be shape arithmetic: one of the operators, with no input declared as a non-integer tensor
    (a float Add is data, and checking its values on every execution would only cost). Shape and Size read only
    their input's shape."""
    if op_type in SHAPE_ONLY:
        return True
    if op_type not in SHAPE_ARITHMETIC:
        return False
    for declared in input_types:
        if declared is not None and declared.HasField("tensor_type"):
            elem_type = declared.tensor_type.elem_type
            if elem_type and elem_type not in INTEGER_TYPES:
                return False
    return True


class Budget:
    """The bytes one model's remembered results may still take."""

    def __init__(self, total: int = MEMO_MODEL_BYTES) -> None:
        self.left = total


class ComputedOnce:
    """The kernel of a node whose inputs are all constants: its first result (arrays only, within `budget`), made
    read-only, is every later one (`kept`, with its bytes in `nbytes`). Its inputs are read-only themselves, so a
    result that is a view of one is too. The engine records a kept result without calling the kernel."""

    __slots__ = ("kernel", "budget", "kept", "nbytes")

    def __init__(self, kernel: Kernel, budget: Budget) -> None:
        self.kernel = kernel
        self.budget = budget
        self.kept: tuple[Any, ...] | None = None
        self.nbytes = 0

    def __call__(self, args: Sequence[Any]) -> tuple[Any, ...]:
        if self.kept is not None:
            return self.kept
        outputs = tuple(self.kernel(args))
        if all(type(o) is np.ndarray for o in outputs):
            size = sum(o.nbytes for o in outputs)
            if size <= self.budget.left:
                self.budget.left -= size
                for output in outputs:
                    output.flags.writeable = False
                self.kept, self.nbytes = outputs, size
        return outputs


def computed_once(kernel: Kernel, budget: Budget) -> ComputedOnce:
    """`kernel` of a node whose inputs are all constants, its first result kept (ComputedOnce)."""
    return ComputedOnce(kernel, budget)


def remembered(op_type: str, kernel: Kernel, budget: Budget) -> Kernel:
    """`kernel` with its results kept by input values (see `worth_remembering` for which nodes)."""
    shape_only = op_type in SHAPE_ONLY
    kept: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    ndarray, integer_dtypes = np.ndarray, INTEGER_DTYPES

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        if shape_only:
            first = args[0] if args else None
            if type(first) is not ndarray:
                return kernel(args)
            key: tuple[Any, ...] = first.shape
        else:
            key = ()
            for value in args:
                if value is None:
                    key += (None,)
                    continue
                if type(value) is not ndarray:
                    return kernel(args)
                dtype = value.dtype
                if dtype not in integer_dtypes or value.size > MEMO_KEY_ELEMENTS:
                    return kernel(args)
                key += (dtype, value.shape, value.tobytes())
        hit = kept.get(key)
        if hit is not None:
            return hit
        outputs = kernel(args)
        if budget.left > 0 and all(type(o) is ndarray and o.size <= MEMO_KEPT_ELEMENTS for o in outputs):
            private = []
            for output in outputs:
                copy = output.copy()
                copy.flags.writeable = False
                budget.left -= copy.nbytes + 200  # the key and the entry too
                private.append(copy)
            if len(kept) >= MEMO_ENTRIES:
                kept.clear()
            outputs = kept[key] = tuple(private)
        return outputs

    return run
