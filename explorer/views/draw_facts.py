"""What a drawing needs to know about the model, computed once per drawing: body sizes and depths, the graphs
around a graph, the scope tree of each graph, where a value is defined and its type."""
from __future__ import annotations

from collections import Counter
from typing import Any

import onnx

from ..graph import GraphRef, node_ids
from ..model import Model
from .grouping import ScopeTree
from .labels import type_text
from .roles import BodyRoles, body_roles


class ModelFacts:
    """Cached lookups over a model's nested graphs for one drawing."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.index = model.index
        self.opset = model.opsets.get("", 1)
        self._trees: dict[str, ScopeTree] = {}
        self._defs: dict[str, dict[str, tuple[str, Any]]] = {}
        self._types: dict[str, dict[str, onnx.TypeProto]] = {}
        self._type_text: dict[tuple[str, str], str] = {}
        self.sizes, self.depths = self._body_sizes()

    def _body_sizes(self) -> tuple[dict[str, int], dict[str, int]]:
        """Nodes inside each body (nested ones counted) and how deep its nesting goes."""
        sizes: dict[str, int] = Counter()
        for ref in self.index.iter_nodes():
            graph = ref.graph
            while graph.owner is not None:
                sizes[graph.path] += 1
                graph = self.index.nodes[graph.owner].graph
        depths: dict[str, int] = {}
        for graph in sorted(self.index.graphs.values(), key=lambda g: -g.depth):
            depths[graph.path] = max(depths.get(graph.path, 0), 1)
            if graph.owner is not None:
                parent = self.index.nodes[graph.owner].graph.path
                depths[parent] = max(depths.get(parent, 0), depths[graph.path] + 1)
        return sizes, depths

    def graph(self, path: str, what: str) -> GraphRef:
        """The graph at `path`; ValueError naming `what` was asked for when there is none."""
        try:
            return self.index.graphs[path]
        except KeyError:
            raise ValueError(f"{what} {path!r} is not a graph of the model") from None

    def parent(self, graph: GraphRef) -> GraphRef | None:
        return None if graph.owner is None else self.index.nodes[graph.owner].graph

    def body_ancestors(self, graph_path: str) -> list[str]:
        """The bodies enclosing a body, innermost first (the main graph excluded)."""
        out: list[str] = []
        graph = self.parent(self.index.graphs[graph_path])
        while graph is not None and graph.path:
            out.append(graph.path)
            graph = self.parent(graph)
        return out

    def within(self, graph: GraphRef | None, ancestor: GraphRef) -> bool:
        while graph is not None:
            if graph is ancestor:
                return True
            graph = self.parent(graph)
        return False

    def tree(self, graph: GraphRef) -> ScopeTree:
        tree = self._trees.get(graph.path)
        if tree is None:
            tree = self._trees[graph.path] = ScopeTree(graph)
        return tree

    def defs(self, graph: GraphRef) -> dict[str, tuple[str, Any]]:
        """value name -> ("init", tensor) | ("input", index) | ("node", path), for names the graph defines."""
        found = self._defs.get(graph.path)
        if found is None:
            g = graph.proto
            found = {t.name: ("init", t) for t in g.initializer}
            found.update((s.values.name, ("init", s.values)) for s in g.sparse_initializer)
            for i, value in enumerate(g.input):
                if value.name not in found or graph.path:
                    found[value.name] = ("input", i)
            for node_id, node in zip(node_ids(g), g.node):
                for name in node.output:
                    if name:
                        found[name] = ("node", graph.prefix + node_id)
            self._defs[graph.path] = found
        return found

    def lookup(self, name: str, graph: GraphRef | None) -> tuple[GraphRef, str, Any] | None:
        """The graph (this one or an enclosing one) defining `name`, and how."""
        while graph is not None:
            found = self.defs(graph).get(name)
            if found is not None:
                return graph, found[0], found[1]
            graph = self.parent(graph)
        return None

    def value_type(self, name: str, graph: GraphRef | None) -> str:
        """`3×4 float` for a value seen from `graph` (from shape inference), "" when unknown."""
        if graph is None:
            return ""
        key = (graph.path, name)
        text = self._type_text.get(key)
        if text is None:
            text = self._type_text[key] = self._find_type(name, graph)
        return text

    def _find_type(self, name: str, graph: GraphRef | None) -> str:
        while graph is not None:
            types = self._types.get(graph.path)
            if types is None:
                g = graph.proto
                types = {v.name: v.type for v in (*g.input, *g.output, *g.value_info)}
                for t in g.initializer:
                    types[t.name] = onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims))
                self._types[graph.path] = types
            if name in types:
                return type_text(types[name])
            if name in self.defs(graph):
                return ""
            graph = self.parent(graph)
        return ""

    def roles(self, graph: GraphRef) -> BodyRoles | None:
        """What each formal input and output of a body means (None for the main graph)."""
        if not graph.path or graph.owner is None:
            return None
        owner = self.index.nodes[graph.owner]
        outer = self.parent(graph)
        return body_roles(owner.proto, graph.attribute or "", graph.proto, self.opset,
                          lambda name: self.value_type(name, outer).startswith("seq("))
