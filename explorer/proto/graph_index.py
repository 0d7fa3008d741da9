"""Every graph and node of a model by static path (graph.py says how paths are made), and the one scope
resolver: which graph defines a name read in a graph, how, and its declared type."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import onnx

from .function_bodies import function_body
from .graph import GraphRef, NodeRef, defining_scope, free_names, node_ids, subgraph_attributes

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
