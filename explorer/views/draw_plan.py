"""What one drawing shows: its top graph, the focus (a graph or a scope drilled into), the bodies and scopes
opened by the expansion rules and by the nodes that must be seen (cursor, overlay, highlight, reveal)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .draw_facts import ModelFacts
from .expansion import Expansion, Rule
from .grouping import Scope, find_scope
from .heat import NodeValues
from .overlays import RewriteOverlay, TraceOverlay

AUTO_EDGE_LABELS = 60  # boxes: `dot` takes seconds to place labels on more edges than such drawings have
OVERVIEW_NODES = 300  # a model of more nodes is drawn by default as an overview of its layers…
OVERVIEW_BOXES = 40  # …of at most about this many boxes (each collapsed layer one box, named by its module path)
MAX_REVEALED_MARKS = 24  # highlighted or rewritten nodes opened for at most; more stay in their collapsed boxes


@dataclass(frozen=True)
class Options:
    """Every choice a drawing depends on (see dot.model_to_dot for their meaning)."""

    graph_path: str = ""
    focus: str | None = None
    expand: Rule = None
    scopes: Rule = None
    cursor: TraceOverlay | None = None
    overlay: RewriteOverlay | None = None
    highlight: frozenset[str] = frozenset()
    reveal: frozenset[str] = frozenset()
    values: NodeValues | None = None
    group_scopes: bool = True
    max_expanded_nodes: int = 40
    max_boxes: int = 300
    fold_initializers: bool = True
    edge_labels: bool | None = True  # None: only while the drawing has at most AUTO_EDGE_LABELS boxes
    rankdir: str = "TB"


def default_max_boxes(node_count: int) -> int:
    """The box budget a drawing of a model of `node_count` nodes gets by default: every node of a small model, the
    top levels of a big one's layers (OVERVIEW_BOXES)."""
    return OVERVIEW_BOXES if node_count > OVERVIEW_NODES else Options.max_boxes


def body_max_boxes(facts: ModelFacts, body_path: str) -> int:
    """default_max_boxes for a drawing of one body (an If's branch, a loop's body), by its own nodes (nested ones
    counted): a merged decoder's branch of 500 nodes is drawn as the overview of its layers, as its model is."""
    return default_max_boxes(facts.sizes.get(body_path, 0))


def revealed(facts: ModelFacts, wanted: Iterable[str], group_scopes: bool = True
             ) -> tuple[frozenset[str], frozenset[str]]:
    """Bodies and scopes to open (under the default rule) so that the wanted nodes show: two drawings whose
    revealed nodes open the same ones are the same drawing."""
    index = facts.index
    bodies: set[str] = set()
    scopes: set[str] = set()
    for start in wanted:
        ref = index.nodes.get(start)
        path: str | None = start
        for graph in index.enclosing(ref.graph.path) if ref is not None else ():
            if group_scopes and path is not None:
                scopes.update(s.key for s in facts.tree(graph).chain(path))
            if graph.path:
                bodies.add(graph.path)
            path = graph.owner  # the node owning this body, in the enclosing graph
    return frozenset(bodies), frozenset(scopes)


class Plan:
    """The resolved options of one drawing: which graph is at the top, what is drilled into, what is open."""

    def __init__(self, facts: ModelFacts, options: Options) -> None:
        self.facts = facts
        self.o = options
        self.top = facts.graph(options.graph_path, "graph_path")
        self.root, self.focus_scope = self._resolve_focus(options.focus)
        self.reveal_bodies, self.reveal_scopes = self._reveal(self._wanted())
        bodies = [p for p in facts.index.graphs if p]
        self.body_rule = Expansion(options.expand, bodies, facts.body_ancestors, "body graph path")
        self.scope_rule = self._scope_rule(options.scopes)

    def _resolve_focus(self, focus: str | None) -> tuple:
        if focus is None:
            return self.top, None
        index = self.facts.index
        scope: Scope | None
        if focus in index.graphs:
            graph, scope = index.graphs[focus], None
        else:
            graph, scope = find_scope(index.graphs.values(), focus, self.facts.tree)
        if not self.facts.within(graph, self.top):
            raise ValueError(f"focus {focus!r} lies outside graph_path {self.top.path!r}")
        return graph, scope

    def _wanted(self) -> set[str]:
        """Nodes whose bodies and scopes open: the revealed ones and the cursor's always; highlighted and rewritten
        ones while they are few (past that, their marks land on the collapsed boxes holding them, so a big
        search result or rewrite does not open the whole model)."""
        wanted = set(self.o.reveal)
        if self.o.cursor is not None:
            wanted.update(p for p in (self.o.cursor.current, self.o.cursor.error) if p)
        marked = set(self.o.highlight)
        if self.o.overlay is not None:
            marked |= self.o.overlay.removed | self.o.overlay.added
        return wanted | marked if len(marked) <= MAX_REVEALED_MARKS else wanted

    def _reveal(self, wanted: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
        return revealed(self.facts, wanted, self.o.group_scopes)

    def _scope_rule(self, rule: Rule) -> Expansion:
        graphs = self.facts.index.graphs.values()
        known: list[str] = []
        if rule is not None and not (isinstance(rule, str) and rule in ("all", "none")):
            for graph in graphs:
                known.extend(self.facts.tree(graph).scopes)

        def ancestors(key: str) -> list[str]:
            return [s.key for s in find_scope(graphs, key, self.facts.tree)[1].lineage()]

        return Expansion(rule, known, ancestors, "scope key")

    def weight(self, path: str) -> int:
        """Boxes a node takes under the default rule: itself and the bodies small enough to open."""
        sizes = self.facts.sizes
        return 1 + sum(sizes.get(b.path, 0) for b in self.facts.index.nodes[path].subgraphs
                       if sizes.get(b.path, 0) <= self.o.max_expanded_nodes)

    def body_expanded(self, body_path: str) -> bool:
        small = self.facts.sizes.get(body_path, 0) <= self.o.max_expanded_nodes
        return self.body_rule.expanded(body_path, small or body_path in self.reveal_bodies)

    def scope_expanded(self, scope: Scope, depth: int | None) -> bool:
        default = depth is None or scope.depth < depth or scope.key in self.reveal_scopes
        return self.scope_rule.expanded(scope.key, default)
