"""What a drawing needs to know about the model, computed once per model (`ModelFacts.of`) and shared by its
drawings and its navigator: body sizes and depths, the graphs around a graph, the scope tree of each graph,
where a value is defined and its type."""
from __future__ import annotations

from collections import Counter

from ..model.model import Model
from ..proto.graph import GraphRef, node_ids
from ..proto.graph_index import Definition
from .grouping import Scope, ScopeTree
from .labels import type_text
from .layers import module_paths
from .roles import BodyRoles, body_roles


class ModelFacts:
    """Cached lookups over a model's nested graphs (a model is never changed once loaded)."""

    @classmethod
    def of(cls, model: Model) -> ModelFacts:
        """The facts of a model, computed once: a 20,000-node model's scope trees take most of a second. They are
        kept in the model's own attributes, so they go with it (in a WeakKeyDictionary they would keep every
        model forever: they refer to it)."""
        facts: ModelFacts | None = vars(model).get("_explorer_draw_facts")
        if facts is None:
            facts = vars(model)["_explorer_draw_facts"] = cls(model)
        return facts

    def __init__(self, model: Model) -> None:
        self.model = model
        self.index = model.index
        self.opset = model.opsets.get("", 1)
        self._trees: dict[str, ScopeTree] = {}
        self._modules: dict[str, dict[str, str]] = {}
        self._type_text: dict[tuple[str, str], str] = {}
        self._scope_ops: dict[str, list[tuple[str, int]]] = {}
        self._scope_reads: dict[str, list[tuple[str, bool]]] = {}
        self.sizes, self.depths = self._body_sizes()

    def _body_sizes(self) -> tuple[dict[str, int], dict[str, int]]:
        """Nodes inside each body (nested ones counted) and how deep its nesting goes."""
        sizes: dict[str, int] = Counter()
        for ref in self.index.iter_nodes():
            for graph in self.index.enclosing(ref.graph.path):
                if graph.path:
                    sizes[graph.path] += 1
        depths: dict[str, int] = {}
        for graph in sorted(self.index.graphs.values(), key=lambda g: -g.depth):
            depths[graph.path] = max(depths.get(graph.path, 0), 1)
            parent = self.index.parent(graph)
            if parent is not None:
                depths[parent.path] = max(depths.get(parent.path, 0), depths[graph.path] + 1)
        return sizes, depths

    def graph(self, path: str, what: str) -> GraphRef:
        """The graph at `path`; ValueError naming `what` was asked for when there is none."""
        try:
            return self.index.graphs[path]
        except KeyError:
            raise ValueError(f"{what} {path!r} is not a graph of the model") from None

    def parent(self, graph: GraphRef) -> GraphRef | None:
        return self.index.parent(graph)

    def body_ancestors(self, graph_path: str) -> list[str]:
        """The bodies enclosing a body, innermost first (the main graph excluded)."""
        return [g.path for g in self.index.enclosing(graph_path) if g.path][1:]

    def within(self, graph: GraphRef | None, ancestor: GraphRef) -> bool:
        return graph is not None and any(g is ancestor for g in self.index.enclosing(graph.path))

    def tree(self, graph: GraphRef) -> ScopeTree:
        tree = self._trees.get(graph.path)
        if tree is None:
            tree = self._trees[graph.path] = ScopeTree(graph)
        return tree

    def module_of(self, path: str) -> str:
        """The module path the exporter wrote for a node (`transformer/h.0/attn`), "" at the top level or when it
        wrote none."""
        graph = self.index.nodes[path].graph
        modules = self._modules.get(graph.path)
        if modules is None:
            modules = self._modules[graph.path] = {
                graph.prefix + node_id: "/".join(parts) for node_id, parts in zip(node_ids(graph.proto), module_paths(graph))}
        return modules.get(path, "")

    def scope_ops(self, scope: Scope) -> list[tuple[str, int]]:
        """The three most common op types inside a scope, with their counts (Constants only when it holds
        nothing else: they say little of what a layer computes)."""
        ops = self._scope_ops.get(scope.key)
        if ops is None:
            nodes = self.index.nodes
            counts = Counter(nodes[p].op_type for p in scope.nodes())
            if len(counts) > 1:
                counts.pop("Constant", None)
            ops = self._scope_ops[scope.key] = counts.most_common(3)
        return ops

    def scope_reads(self, scope: Scope) -> list[tuple[str, bool]]:
        """What a scope's nodes read from outside it, in first-read order: (value name, True when a body of a
        node captures it rather than the node reading it as an input). A collapsed scope box draws these edges
        alone, never looking at the thousands of edges inside it."""
        reads = self._scope_reads.get(scope.key)
        if reads is None:
            refs = [self.index.nodes[p] for p in scope.nodes()]
            inside = {name for ref in refs for name in ref.proto.output}
            found: dict[tuple[str, bool], None] = {}
            for ref in refs:
                found.update(((name, False), None) for name in ref.proto.input if name and name not in inside)
                for body in ref.subgraphs:
                    found.update(((name, True), None) for name in self.index.captures(body.path) if name not in inside)
            reads = self._scope_reads[scope.key] = list(found)
        return reads

    def lookup(self, name: str, graph: GraphRef | None) -> Definition | None:
        """Where a value seen from `graph` is defined (this graph or an enclosing one), and how."""
        return None if graph is None else self.index.resolve(name, graph.path)

    def value_type(self, name: str, graph: GraphRef | None) -> str:
        """`3×4 float` for a value seen from `graph` (from shape inference), "" when unknown."""
        if graph is None:
            return ""
        key = (graph.path, name)
        text = self._type_text.get(key)
        if text is None:
            declared = self.index.value_type(name, graph.path)
            text = self._type_text[key] = "" if declared is None else type_text(declared)
        return text

    def roles(self, graph: GraphRef) -> BodyRoles | None:
        """What each formal input and output of a body means (None for the main graph)."""
        if not graph.path or graph.owner is None:
            return None
        owner = self.index.nodes[graph.owner]
        outer = self.parent(graph)
        return body_roles(owner.proto, graph.attribute or "", graph.proto, self.opset,
                          lambda name: self.value_type(name, outer).startswith("seq("))
