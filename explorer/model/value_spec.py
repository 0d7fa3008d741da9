"""A declared graph input or output as explorer reads it: name, numpy dtype, shape."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx


@dataclass(frozen=True)
class ValueSpec:
    """A declared graph input or output: name, numpy dtype (None for non-tensors), shape (ints, dim names or None)."""

    name: str
    type_proto: onnx.TypeProto
    kind: str  # "tensor", "sequence", "optional", "map", "unknown"
    dtype: np.dtype | None
    shape: tuple[int | str | None, ...] | None

    def describe(self) -> str:
        if self.kind != "tensor":
            return f"{self.kind} {onnx.helper.printable_type(self.type_proto)}"
        dtype = self.dtype.name if self.dtype is not None else "?"
        if self.shape is None:
            return f"tensor({dtype}) of any shape"
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"tensor({dtype}) [{dims}]"


def value_spec(info: onnx.ValueInfoProto) -> ValueSpec:
    """Turns a ValueInfoProto into a ValueSpec."""
    tp = info.type
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        elem = tp.tensor_type.elem_type
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem)) if elem else None
        shape = None
        if tp.tensor_type.HasField("shape"):
            shape = tuple(
                d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                for d in tp.tensor_type.shape.dim
            )
        return ValueSpec(info.name, tp, "tensor", dtype, shape)
    kinds = {"sequence_type": "sequence", "optional_type": "optional", "map_type": "map"}
    return ValueSpec(info.name, tp, kinds.get(which, "unknown"), None, None)
