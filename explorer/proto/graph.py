"""Read-only view over a model's nested graphs: static node paths, producers, consumers, outer-scope captures.

One id names a node everywhere (trace, DOT, UI): its static path. A node's id within its graph is its name when
that is non-empty and unique there, else `<op_type>_<index>`; inside a subgraph the path is
`<parent node path>/<attribute name>/<node id>`, e.g. `Loop_0/body/If_2/then_branch/Add_1`.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import onnx
import onnx.numpy_helper

from .weights import tensor_value

CONTROL_FLOW_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap"})
GENERATION_OPS = frozenset({"GreedySearch", "BeamSearch", "WhisperBeamSearch", "Sampling"})
"""onnxruntime's generation operators (com.microsoft) that explorer runs as control flow, one iteration per decode
step of their decoder (and encoder) subgraphs."""


@dataclass(frozen=True, eq=False)
class GraphRef:
    """One graph of the model: the main graph (path "") or a body attribute of some node."""

    path: str
    proto: onnx.GraphProto
    owner: str | None = None
    attribute: str | None = None
    depth: int = 0

    @property
    def prefix(self) -> str:
        """What node ids of this graph are prefixed with to form their paths."""
        return f"{self.path}/" if self.path else ""

    def defined_names(self) -> set[str]:
        """Names this graph defines itself: formal inputs, initializers and node outputs."""
        g = self.proto
        names = {*(i.name for i in g.input), *(t.name for t in g.initializer),
                 *(t.values.name for t in g.sparse_initializer)}
        for node in g.node:
            names.update(o for o in node.output if o)
        return names


S = TypeVar("S")  # a scope: a GraphRef here, a GraphState in the optimizer


def defining_scope(scope: S | None, name: str, defines: Callable[[S, str], bool],
                   enclosing: Callable[[S], S | None]) -> S | None:
    """The scope rule of nested graphs, for every layer: the innermost of `scope` and its enclosing scopes that
    defines `name` (inner definitions shadow outer ones), None when none does."""
    while scope is not None and not defines(scope, name):
        scope = enclosing(scope)
    return scope


class ProtoFields:
    """A node's proto fields, read-only, for classes that hold the node as `proto` (so they read like one)."""

    __slots__ = ()
    proto: onnx.NodeProto

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    @property
    def domain(self) -> str:
        return self.proto.domain

    @property
    def name(self) -> str:
        return self.proto.name

    @property
    def input(self) -> Any:
        return self.proto.input

    @property
    def output(self) -> Any:
        return self.proto.output

    @property
    def attribute(self) -> Any:
        return self.proto.attribute


@dataclass(frozen=True, eq=False)
class NodeRef(ProtoFields):
    """One node with its static path and the graph it lives in."""

    path: str
    proto: onnx.NodeProto
    graph: GraphRef
    index: int
    subgraphs: tuple[GraphRef, ...] = field(default=())


def node_ids(graph: onnx.GraphProto) -> list[str]:
    """The id of each node of `graph` (not its full path): unique non-empty name, else `<op_type>_<index>`."""
    names = [n.name for n in graph.node]  # read once: each read of a proto field makes a new str
    counts = Counter(names)
    ids: list[str] = []
    taken = {name for name, count in counts.items() if name and count == 1}
    for index, name in enumerate(names):
        if name and counts[name] == 1:
            ids.append(name)
            continue
        candidate = f"{graph.node[index].op_type}_{index}"
        while candidate in taken:  # a real node is literally named like our generated id
            candidate += "_"
        taken.add(candidate)
        ids.append(candidate)
    return ids


def attribute(node: onnx.NodeProto, name: str, default: Any = None) -> Any:
    """The value of a node attribute (ints as int, lists as list, strings as str, tensors as arrays), or
    `default` when the node does not set it."""
    for att in node.attribute:
        if att.name == name:
            return attribute_value(att)
    return default


def attribute_value(att: onnx.AttributeProto) -> Any:
    """An attribute's value: ints as int, lists as list, strings as str, tensors as arrays."""
    value = onnx.helper.get_attribute_value(att)
    if isinstance(value, onnx.TensorProto):
        return tensor_value(value)
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return list(value) if isinstance(value, (list, tuple)) else value


def subgraph_attributes(node: onnx.NodeProto) -> list[tuple[str, onnx.GraphProto]]:
    """(attribute name, graph) for every graph-valued attribute of a node; GRAPHS lists get `name[i]`."""
    found: list[tuple[str, onnx.GraphProto]] = []
    for att in node.attribute:
        if att.type == onnx.AttributeProto.GRAPH:
            found.append((att.name, att.g))
        elif att.type == onnx.AttributeProto.GRAPHS:
            found.extend((f"{att.name}[{i}]", g) for i, g in enumerate(att.graphs))
    return found


def free_names(graph: onnx.GraphProto) -> list[str]:
    """Names a graph reads from enclosing scopes (its own and its nested bodies' captures), in first-use order."""
    defined = {i.name for i in graph.input}
    defined.update(t.name for t in graph.initializer)
    defined.update(t.values.name for t in graph.sparse_initializer)
    free: dict[str, None] = {}
    for node in graph.node:
        for name in node.input:
            if name and name not in defined:
                free[name] = None
        for _, body in subgraph_attributes(node):
            for name in free_names(body):
                if name not in defined:
                    free[name] = None
        defined.update(o for o in node.output if o)
    for out in graph.output:
        if out.name and out.name not in defined:
            free[out.name] = None
    return list(free)
