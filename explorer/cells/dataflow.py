"""Dataflow of one graph as the cell recognizer reads it: which node writes a value, which values are constants,
which reads of a value only change its shape, and an elementwise expression written out as a polynomial over
its operands, so that every way an exporter spells (1 - z) * h~ + z * h reads the same."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import onnx

from ..proto.graph import GraphRef, NodeRef, node_ids
from ..proto.graph_index import GraphIndex
from ..proto.weights import tensor_value

# Reads that change a value's shape or type but not its elements' meaning.
VIEW_OPS = frozenset({"Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Cast", "Expand", "Transpose"})
SIGMOID_OPS = frozenset({"Sigmoid", "HardSigmoid"})
TANH_OPS = frozenset({"Tanh", "Softsign", "ScaledTanh"})
ACTIVATION_OPS = SIGMOID_OPS | TANH_OPS | {"Relu", "LeakyRelu", "Elu", "Selu", "Softplus", "ThresholdedRelu"}
NORM_OPS = frozenset({"LayerNormalization"})  # looked through between a cell's products and its gates or state
PRODUCT_OPS = frozenset({"MatMul", "Gemm", "Conv", "ConvInteger", "MatMulInteger", "Einsum", "FusedMatMul"})
# Reads that pick part of a value: a gate computed on the fused projection, then split.
PART_OPS = frozenset({"Split", "Slice", "Gather"})
MAX_TERMS = 16
MAX_DEPTH = 10

Term = tuple[str, ...]  # the atoms of one product, sorted
Poly = dict[Term, float]


@dataclass
class GraphDataflow:
    """One graph of the model (main graph or a body): producers of its values and their constant values."""

    index: GraphIndex
    graph: GraphRef
    producer: dict[str, NodeRef] = field(default_factory=dict)
    consumers: dict[str, list[NodeRef]] = field(default_factory=dict)
    variant: set[str] = field(default_factory=set)  # a body's inputs that change from step to step

    @classmethod
    def of(cls, index: GraphIndex, graph_path: str) -> GraphDataflow:
        graph = index.graphs[graph_path]
        view = cls(index, graph)
        for node_id in node_ids(graph.proto):
            node = index.nodes[graph.prefix + node_id]
            for name in node.proto.output:
                if name:
                    view.producer[name] = node
            for name in node.proto.input:
                if name:
                    view.consumers.setdefault(name, []).append(node)
        return view

    def constant(self, name: str) -> np.ndarray | None:
        """The value of `name` when an initializer or a Constant node in scope defines it (loop-invariant)."""
        found = self.index.resolve(name, self.graph.path)
        if found is None:
            return None
        if found.tensor is not None:
            return tensor_value(found.tensor)
        node = self.index.nodes.get(found.node) if found.node is not None else None
        if node is not None and node.op_type == "Constant":
            for att in node.proto.attribute:
                if att.name == "value":
                    return tensor_value(att.t)
                if att.name in ("value_float", "value_int"):
                    return np.array(onnx.helper.get_attribute_value(att))
        return None

    def is_outer(self, name: str) -> bool:
        """Whether `name` is defined outside this graph (a capture: loop-invariant inside a body)."""
        found = self.index.resolve(name, self.graph.path)
        return found is not None and found.graph is not self.graph

    def invariant(self, name: str) -> bool:
        """Whether `name` is the same at every step: a capture, a constant, or computed from neither the step's
        reads nor the state (a body input carried through unchanged, as tf2onnx carries weights, included)."""
        return self.is_outer(name) or self.constant(name) is not None or not self.variant & self.cone(name)

    def strip(self, name: str) -> str:
        """The value `name` is a view of (through Identity, Reshape, Squeeze, Cast...)."""
        for _ in range(MAX_DEPTH):
            node = self.producer.get(name)
            if node is None or node.op_type not in VIEW_OPS or not node.proto.input:
                return name
            name = node.proto.input[0]
        return name

    def transposed_by(self, name: str) -> tuple[int, ...]:
        """The permutation of the Transpose `name` was produced by (through Identity), () when none."""
        for _ in range(MAX_DEPTH):
            node = self.producer.get(name)
            if node is None or node.op_type not in ("Identity", "Transpose"):
                return ()
            if node.op_type == "Transpose":
                return tuple(int(i) for a in node.proto.attribute if a.name == "perm" for i in a.ints)
            name = node.proto.input[0]
        return ()

    def activation_node(self, name: str) -> NodeRef | None:
        """The activation node that computed `name` (through views and parts), None when none did."""
        for _ in range(MAX_DEPTH):
            name = self.strip(name)
            node = self.producer.get(name)
            if node is None:
                return None
            if node.op_type in ACTIVATION_OPS:
                return node
            if node.op_type not in PART_OPS:
                return None
            name = node.proto.input[0]
        return None

    def cone(self, name: str, stop: Iterable[str] = ()) -> set[str]:
        """Every value `name` is computed from within this graph (itself included), not looking past `stop`."""
        seen: set[str] = set()
        stops = set(stop)
        todo = [name]
        while todo:
            value = todo.pop()
            if value in seen:
                continue
            seen.add(value)
            node = self.producer.get(value)
            if node is None or value in stops:
                continue
            todo.extend(i for i in node.proto.input if i)
            for body in node.subgraphs:
                todo.extend(self.index.captures(body.path))
        return seen

    # ---- polynomials -------------------------------------------------------------------------------------
    def expand(self, name: str, depth: int = MAX_DEPTH, atoms: frozenset[str] = frozenset()) -> Poly:
        """`name` as a sum of products of atoms (values that are not Add, Sub, Mul, Neg or a scalar constant,
        and the `atoms` given, e.g. the state a step starts from)."""
        name = self.strip(name)
        if name in atoms:
            return {(name,): 1.0}
        scalar = self._scalar(name)
        if scalar is not None:
            return {(): scalar}
        node = self.producer.get(name)
        if node is None or depth == 0 or node.op_type not in ("Add", "Sub", "Mul", "Neg", "Div"):
            return {(name,): 1.0}
        args = [self.expand(i, depth - 1, atoms) for i in node.proto.input]
        op = node.op_type
        if op == "Neg":
            return _scale(args[0], -1.0)
        if op == "Add":
            return _add(args[0], args[1])
        if op == "Sub":
            return _add(args[0], _scale(args[1], -1.0))
        if op == "Div":
            divisor = args[1].get(())
            if len(args[1]) == 1 and divisor:
                return _scale(args[0], 1.0 / divisor)
            return {(name,): 1.0}
        product = _multiply(args[0], args[1])
        return product if len(product) <= MAX_TERMS else {(name,): 1.0}

    def _scalar(self, name: str) -> float | None:
        value = self.constant(name)
        if value is None or value.size == 0 or value.size > 1 and not np.all(value == value.flat[0]):
            return None
        if not np.issubdtype(value.dtype, np.number):
            return None
        return float(value.flat[0])


class Flows:
    """The dataflow of each graph of a model, built once per graph."""

    def __init__(self, index: GraphIndex) -> None:
        self.index = index
        self._flows: dict[str, GraphDataflow] = {}

    def of(self, graph_path: str) -> GraphDataflow:
        flow = self._flows.get(graph_path)
        if flow is None:
            flow = self._flows[graph_path] = GraphDataflow.of(self.index, graph_path)
        return flow


def _scale(poly: Poly, factor: float) -> Poly:
    return {term: c * factor for term, c in poly.items()}


def _add(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for term, c in b.items():
        out[term] = out.get(term, 0.0) + c
    return {term: c for term, c in out.items() if c != 0.0}


def _multiply(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ta, ca in a.items():
        for tb, cb in b.items():
            term = tuple(sorted(ta + tb))
            out[term] = out.get(term, 0.0) + ca * cb
    return {term: c for term, c in out.items() if c != 0.0}
