"""Read-only view over a model's nested graphs: static node paths, producers, consumers, outer-scope captures.

One id names a node everywhere (trace, DOT, UI): its static path. A node's id within its graph is its name when
that is non-empty and unique there, else `<op_type>_<index>`; inside a subgraph the path is
`<parent node path>/<attribute name>/<node id>`, e.g. `Loop_0/body/If_2/then_branch/Add_1`.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import onnx
import onnx.numpy_helper

from .function_bodies import function_body

CONTROL_FLOW_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap"})


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
        return onnx.numpy_helper.to_array(value)
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


FUNCTION_BODY = "function"  # the pseudo-attribute under which a model-local function's body is walked


@dataclass(frozen=True)
class Definition:
    """Where a value seen from some graph is defined: `graph` (that one or an enclosing one) and how: a formal
    input (`index`), an initializer (`tensor`, dense or a sparse one's values) or a node output (`node`, its path).
    In the main graph an initializer also listed as an input is an initializer (a feed may override it)."""

    graph: GraphRef
    kind: str  # "input", "initializer" or "node"
    index: int = -1
    tensor: onnx.TensorProto | None = None
    node: str | None = None


class GraphIndex:
    """All graphs and nodes of a model, keyed by static path, in depth-first document order. A call of a
    model-local function has the function's body as a subgraph under the pseudo-attribute `function`. It is also
    the one scope resolver: which graph and what defines a name seen from a graph, and its declared type."""

    def __init__(self, main: onnx.GraphProto,
                 functions: dict[tuple[str, str], onnx.FunctionProto] | None = None) -> None:
        self.graphs: dict[str, GraphRef] = {}
        self.nodes: dict[str, NodeRef] = {}
        self.functions = dict(functions or {})
        self._definitions: dict[str, tuple[dict[str, int], dict[str, Definition]]] = {}
        self._ids: dict[str, list[str]] = {}  # graph path -> the id of each of its nodes
        self._captures: dict[str, list[str]] = {}
        self._types: dict[str, dict[str, onnx.TypeProto]] = {}
        self._walk(GraphRef(path="", proto=main), ())

    def _walk(self, graph: GraphRef, calling: tuple[tuple[str, str], ...]) -> None:
        self.graphs[graph.path] = graph
        ids = self._ids[graph.path] = node_ids(graph.proto)
        prefix, depth, functions = graph.prefix, graph.depth + 1, self.functions
        for index, (node_id, node) in enumerate(zip(ids, graph.proto.node)):
            path = prefix + node_id
            bodies = [
                (GraphRef(path=f"{path}/{att}", proto=g, owner=path, attribute=att, depth=depth), calling)
                for att, g in subgraph_attributes(node)
            ] if node.attribute else []
            key = (node.domain, node.op_type) if functions else None
            if key in functions and key not in calling:  # a recursive call is left unexpanded
                body = function_body(self.functions[key], node)
                bodies.append((GraphRef(path=f"{path}/{FUNCTION_BODY}", proto=body, owner=path,
                                        attribute=FUNCTION_BODY, depth=depth), (*calling, key)))
            self.nodes[path] = NodeRef(path=path, proto=node, graph=graph, index=index,
                                       subgraphs=tuple(b for b, _ in bodies))
            for child, stack in bodies:
                self._walk(child, stack)

    def parent(self, graph: GraphRef) -> GraphRef | None:
        """The graph holding the node that owns a body; None for the main graph."""
        return None if graph.owner is None else self.nodes[graph.owner].graph

    def enclosing(self, graph_path: str) -> Iterator[GraphRef]:
        """The graph at `graph_path`, then each enclosing graph out to the main one."""
        graph: GraphRef | None = self.graphs[graph_path]
        while graph is not None:
            yield graph
            graph = self.parent(graph)

    def definition(self, graph_path: str, name: str) -> Definition | None:
        """Where one graph itself defines `name` (None when it does not): its last writer among the node outputs,
        else an input or initializer (in the main graph an initializer also listed as an input stays one)."""
        writers, found = self._defined(graph_path)
        if name in writers:
            graph = self.graphs[graph_path]
            return Definition(graph, "node", node=graph.prefix + self._ids[graph_path][writers[name]])
        return found.get(name)

    def _defined(self, graph_path: str) -> tuple[dict[str, int], dict[str, Definition]]:
        """What one graph defines: node outputs (name -> the writing node's position, the last one winning) and
        its inputs and initializers (as Definitions); worked out on first use, node by node without making a
        Definition for each value (a 20,000-node graph's drawing asks about a few dozen)."""
        known = self._definitions.get(graph_path)
        if known is None:
            graph = self.graphs[graph_path]
            g = graph.proto
            found = {t.name: Definition(graph, "initializer", tensor=t) for t in g.initializer}
            found.update((s.values.name, Definition(graph, "initializer", tensor=s.values)) for s in g.sparse_initializer)
            for i, value in enumerate(g.input):
                if value.name not in found or graph.path:
                    found[value.name] = Definition(graph, "input", index=i)
            writers = {name: index for index, node in enumerate(g.node) for name in node.output if name}
            known = self._definitions[graph_path] = (writers, found)
        return known

    def _defines(self, graph: GraphRef, name: str) -> bool:
        writers, found = self._defined(graph.path)
        return name in writers or name in found

    def resolve(self, name: str, graph_path: str) -> Definition | None:
        """Where `name`, read in the graph at `graph_path`, is defined (inner definitions shadow outer ones)."""
        graph = defining_scope(self.graphs[graph_path], name, self._defines, self.parent)
        return None if graph is None else self.definition(graph.path, name)

    def value_type(self, name: str, graph_path: str) -> onnx.TypeProto | None:
        """The type declared (or inferred) for `name` as read in the graph at `graph_path`: from the graph that
        declares it, looking outward no further than the graph that defines it; None when nothing declares it."""
        graph = defining_scope(self.graphs[graph_path], name,
                               lambda g, n: n in self._declared(g) or self._defines(g, n), self.parent)
        return None if graph is None else self._declared(graph).get(name)

    def _declared(self, graph: GraphRef) -> dict[str, onnx.TypeProto]:
        if graph.path not in self._types:
            self._types[graph.path] = _declared_types(graph.proto)
        return self._types[graph.path]

    def producers(self, graph_path: str = "") -> dict[str, str]:
        """value name -> path of the node producing it, within one graph."""
        graph = self.graphs[graph_path]
        out: dict[str, str] = {}
        for node_id, node in zip(node_ids(graph.proto), graph.proto.node):
            for name in node.output:
                if name:
                    out[name] = graph.prefix + node_id
        return out

    def consumers(self, graph_path: str = "") -> dict[str, list[str]]:
        """value name -> paths of the nodes of one graph reading it (directly, or through a body capture)."""
        graph = self.graphs[graph_path]
        out: dict[str, list[str]] = {}
        for node_id, node in zip(node_ids(graph.proto), graph.proto.node):
            path = graph.prefix + node_id
            used = [n for n in node.input if n]
            for _, body in subgraph_attributes(node):
                used.extend(free_names(body))
            for name in dict.fromkeys(used):
                out.setdefault(name, []).append(path)
        return out

    def captures(self, graph_path: str) -> list[str]:
        """Outer-scope names a body graph (and its nested bodies) reads (worked out once per body)."""
        found = self._captures.get(graph_path)
        if found is None:
            found = self._captures[graph_path] = free_names(self.graphs[graph_path].proto)
        return found

    def iter_nodes(self) -> Iterator[NodeRef]:
        return iter(self.nodes.values())


def _declared_types(graph: onnx.GraphProto) -> dict[str, onnx.TypeProto]:
    """name -> type for every value one graph declares: initializers, inputs, outputs and value_info."""
    types = {t.name: onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims)) for t in graph.initializer}
    for sparse in graph.sparse_initializer:
        types[sparse.values.name] = onnx.helper.make_tensor_type_proto(sparse.values.data_type, list(sparse.dims))
    types.update((v.name, v.type) for v in (*graph.input, *graph.output, *graph.value_info)
                 if v.type.WhichOneof("value") is not None)
    return types
