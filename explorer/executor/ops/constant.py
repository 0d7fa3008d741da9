"""Constant: its value from whichever value attribute the node sets (a tensor, a sparse tensor made dense, or a
float, int or string scalar or list), built once; every run returns the same array (values are never modified)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from ...proto.weights import tensor_value
from .base import KernelFactory, OpNode, PlainKernel

SCALARS = {"value_float": np.float32, "value_int": np.int64, "value_string": object}
LISTS = {"value_floats": np.float32, "value_ints": np.int64, "value_strings": object}


def sparse_to_dense(sparse: onnx.SparseTensorProto) -> np.ndarray:
    """A sparse tensor as a dense array (zeros where it holds no value)."""
    values = tensor_value(sparse.values)
    indices = tensor_value(sparse.indices)
    dense = np.zeros(tuple(sparse.dims), dtype=values.dtype)
    if indices.ndim == 1:
        dense.reshape(-1)[indices] = values
    else:
        dense[tuple(indices.T)] = values
    return dense


def constant_kernel(op: OpNode) -> PlainKernel:
    given = list(op.node.proto.attribute)
    if len(given) != 1:
        raise op.error(f"exactly one value attribute must be set, got {[att.name for att in given] or 'none'}")
    att = given[0]
    if att.name == "sparse_value":
        value = sparse_to_dense(att.sparse_tensor)
    elif att.name in SCALARS:
        value = np.array(op.attr(att.name), dtype=SCALARS[att.name])
    elif att.name in LISTS:
        items = [v.decode("utf-8") if isinstance(v, bytes) else v for v in op.attr(att.name)]
        value = np.array(items, dtype=LISTS[att.name])
    else:
        value = np.asarray(op.attr(att.name))
        if not value.flags.aligned:  # a mapped tensor's bytes where BLAS cannot read them as they are
            value = value.copy()

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        return (value,)

    return run


KERNELS: dict[str, KernelFactory] = {"Constant": constant_kernel}
