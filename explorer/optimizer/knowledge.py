"""What the optimizer knows about a value before running anything: its constant value, its type, its shape.

Types come from the model (declared or inferred at load), from constants, or from onnx's node-level inference
for nodes rewrites add. Shapes are refined by the symbolic propagation of symbolic.py (dims as expressions,
small integer tensors as known values), which patterns read through `shape`, `dims` and `known_value`.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import helper, shape_inference

from ..budgets import MAPPED_WEIGHT_BYTES
from ..proto.weights import array_source, mapped_tensor, tensor_value
from . import symbolic, tensors

if TYPE_CHECKING:
    from .context import Context
    from .ir import Node
    from .state import GraphState

Dim = int | str | None


class Knowledge:
    """Base of GraphState: constant values, types and shapes of its values (cached: a value never changes)."""

    graph: onnx.GraphProto
    parent: GraphState | None
    ctx: Context
    version: int

    def producer(self, name: str) -> Node | None:
        raise NotImplementedError

    def defines(self, name: str) -> bool:
        raise NotImplementedError

    def outer(self, name: str) -> GraphState | None:
        raise NotImplementedError

    def unique_name(self, prefix: str) -> str:
        raise NotImplementedError

    def opset(self, domain: str = "") -> int:
        raise NotImplementedError

    def __init__(self, graph: onnx.GraphProto, trust_shapes: bool, initializers: Iterable[onnx.TensorProto]) -> None:
        # A Loop's carried values may change shape from one iteration to the next, so inferred shapes inside a
        # Loop body (and anything nested in one) describe only some iterations.
        self.trust_shapes = trust_shapes
        self.initializers: dict[str, onnx.TensorProto] = {t.name: t for t in initializers}
        self.inputs = {i.name for i in graph.input}
        self.sparse = {t.values.name for t in graph.sparse_initializer}
        self.types: dict[str, onnx.TypeProto] = {}
        for info in [*graph.input, *graph.value_info, *graph.output]:
            if info.HasField("type"):
                self.types[info.name] = info.type
        self._constants: dict[str, np.ndarray] = {}
        self._kinds: dict[str, tuple[str, int]] = {}
        self._shapes: dict[str, tuple[Dim, ...] | None] = {}
        self._untyped: set[str] = set()
        self.constant_dims: dict[str, np.ndarray] = {}  # small integer constants as dims (symbolic.known)
        self.facts = symbolic.Facts()
        self._facts_version = -1
        self._propagated: set[Node] = set()  # nodes the propagation has visited
        self.changed_facts: set[str] = set()  # values whose facts the propagation found new or changed

    def forget_untyped(self) -> None:
        """New nodes may let inference type values it could not type before."""
        self._untyped.clear()

    def is_constant(self, name: str) -> bool:
        """True for initializers that cannot be fed, Constant node outputs, and constants of enclosing graphs
        (an initializer's value is not read for this: a model's weights stay in their protos)."""
        if not name:
            return False
        if name in self._constants:
            return True
        node = self.producer(name)
        if node is not None:
            return self.constant(name) is not None
        if name in self.initializers:
            return name not in self.inputs
        outer = self.outer(name)
        return outer is not None and outer.is_constant(name)

    def constant_kind(self, name: str) -> tuple[str, int] | None:
        """(numpy dtype kind, element count) of a constant (see is_constant), else None; an initializer's are read
        from its type and dims, without copying its data out of the model."""
        known = self._kinds.get(name)
        if known is not None:
            return known
        cached = self._constants.get(name)
        if cached is None and name and self.producer(name) is None and name in self.initializers:
            if name in self.inputs:
                return None
            tensor = self.initializers[name]
            try:
                kind = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type)).kind
            except (KeyError, TypeError, ValueError):
                return None
            known = kind, math.prod(tensor.dims)
        else:
            value = cached if cached is not None else self.constant(name)
            known = None if value is None else (value.dtype.kind, int(value.size))
        if known is not None:  # a constant stays one while it exists (a value may become one: not cached)
            self._kinds[name] = known
        return known

    def constant(self, name: str) -> np.ndarray | None:
        """The value of a constant (see is_constant), else None."""
        if not name:
            return None
        cached = self._constants.get(name)
        if cached is not None:
            return cached
        value = None
        node = self.producer(name)
        if node is not None:
            if node.is_onnx("Constant"):
                value = tensors.constant_value(node.proto)
        elif name in self.initializers:
            if name not in self.inputs:  # an initializer that is also an input may be fed: not a constant
                value = tensor_value(self.initializers[name])
        elif (outer := self.outer(name)) is not None:
            value = outer.constant(name)
        if value is not None:
            self._constants[name] = value
        return value

    def constant_source(self, name: str) -> onnx.TensorProto | np.ndarray | None:
        """A constant as a rewrite record keeps it: an initializer's proto (read, never copied out of the model)
        or another constant's value (see `constant`); None when `name` is not a constant."""
        if name and self.producer(name) is None and name not in self._constants:
            if name in self.initializers:
                return None if name in self.inputs else self.initializers[name]
            outer = self.outer(name)
            if outer is not None:
                return outer.constant_source(name)
        return self.constant(name)

    def make_constant(self, value: np.ndarray, prefix: str = "cst", name: str | None = None,
                      ) -> tuple[onnx.NodeProto, str]:
        """A new Constant node holding `value`, and the (fresh unless given) name of its output."""
        out = name or self.unique_name(prefix)
        value = np.asarray(value)
        node = helper.make_node("Constant", [], [out], value=tensors.to_tensor(value, out))
        self._constants[out] = value
        self.types[out] = tensors.array_type(value)
        return node, out

    def make_weight(self, value: np.ndarray, prefix: str) -> str:
        """A new initializer holding `value` (for weights a rewrite computes: an initializer, unlike a Constant
        node, is not a node of the graph); returns its fresh name."""
        name = self.unique_name(prefix)
        value = np.asarray(value)
        if value.nbytes >= MAPPED_WEIGHT_BYTES and value.dtype.kind in "biuf" and value.dtype.isnative:
            # the model points at the array's own bytes: no copy of a big weight in the optimized proto, and a
            # model loaded from it (the proof's) reads the same memory
            value = np.ascontiguousarray(value)
            value.flags.writeable = False
            source = array_source(value, f"the weight {name} a rewrite computed")
            self.ctx.weights.append(source)
            self.initializers[name] = mapped_tensor(value, name, source)
        else:
            self.initializers[name] = tensors.to_tensor(value, name)
        self._constants[name] = value
        self.types[name] = tensors.array_type(value)
        return name

    def set_type(self, name: str, type_proto: onnx.TypeProto | None) -> None:
        if type_proto is not None:
            self.types[name] = type_proto

    def value_type(self, name: str) -> onnx.TypeProto | None:
        """The type of `name`: declared, inferred by the loader, inferred for new nodes, or from its constant."""
        found = self.types.get(name)
        if found is not None or name in self._untyped:
            return found
        if name in self.initializers:
            tensor = self.initializers[name]
            found = helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))
        elif self.producer(name) is not None:
            value = self.constant(name)
            found = tensors.array_type(value) if value is not None else self._infer(name)
        elif (outer := self.outer(name)) is not None:
            return outer.value_type(name)
        if found is not None:
            self.types[name] = found
        else:
            self._untyped.add(name)  # until a new node may tell more (see forget_untyped)
        return found

    def _infer(self, name: str) -> onnx.TypeProto | None:
        node = self.producer(name)
        if node is None or not node.is_onnx() or node.captures:
            return None
        try:
            schema = onnx.defs.get_schema(node.op_type, self.opset(), "")
        except Exception:  # noqa: BLE001 - unknown operator: no type
            return None
        inputs = {}
        data = {}
        for n in node.input:
            if not n:
                continue
            t = self.value_type(n)
            if t is None:
                return None
            inputs[n] = t
            value = self.constant(n)
            if value is not None and value.size <= 64 and value.dtype.kind in "iub":
                data[n] = tensors.to_tensor(value, n)
        try:
            out = shape_inference.infer_node_outputs(schema, node.proto, inputs, input_data=data)
        except Exception:  # noqa: BLE001 - inference refuses: no type
            return None
        for key, tp in out.items():
            self.types.setdefault(key, tp)
        return out.get(name)

    def elem_type(self, name: str) -> int | None:
        """The ONNX element type (TensorProto.FLOAT, ...) of a tensor value, None when unknown."""
        return tensors.tensor_elem_type(self.value_type(name))

    def refresh_facts(self) -> None:
        """Runs the symbolic propagation again when the graph changed since the last run (the driver calls it
        once per round: a value's facts stay true while it exists, so they need no update within a round)."""
        if self._facts_version != self.version:
            self.facts = symbolic.propagate(self, self.facts, self._propagated,  # type: ignore[arg-type]
                                            self.changed_facts)
            self._facts_version = self.version

    def known_value(self, name: str) -> np.ndarray | None:
        """The contents of a small integer tensor when known before running (elements: int, symbolic str, or
        None), from constants and symbolic propagation."""
        return symbolic.known(self, self.facts, name)  # type: ignore[arg-type]

    def shape(self, name: str) -> tuple[Dim, ...] | None:
        """Dims of a tensor value (int known, str symbolic or an expression, None unknown), refined by symbolic
        propagation; None when its rank is unknown."""
        found = self.facts.shapes.get(name)
        return found if found is not None else self.declared_shape(name)

    def declared_shape(self, name: str) -> tuple[Dim, ...] | None:
        """Dims of a tensor value as declared, inferred at load or inferred for a new node (int known, str
        symbolic, None unknown); None when its rank is unknown or when shapes cannot be trusted here (inside a
        Loop body), except for constants."""
        found = self._shapes.get(name)
        if found is not None:
            return found
        value = self.constant(name)
        if value is not None:
            found = tuple(value.shape)
        elif not self.trust_shapes:
            return None
        else:
            found = tensors.tensor_shape(self.value_type(name))
        if found is not None:
            self._shapes[name] = found  # a name's value, hence its shape, never changes
        return found

    def rank(self, name: str) -> int | None:
        shape = self.shape(name)
        return None if shape is None else len(shape)

    def static_shape(self, name: str) -> tuple[int, ...] | None:
        """The shape when every dim is a known integer, else None."""
        shape = self.shape(name)
        if shape is None or not all(isinstance(d, int) for d in shape):
            return None
        return shape  # type: ignore[return-value]

    def value_info(self, nodes: Iterable[Node]) -> list[onnx.ValueInfoProto]:
        """Typed value_info of the outputs of `nodes` that the graph does not declare otherwise."""
        declared = self.inputs | {o.name for o in self.graph.output}
        found = []
        for node in nodes:
            for name in node.output:
                if name and name not in declared and name in self.types:
                    found.append(tensors.make_value_info(name, self.types[name]))
        return found
