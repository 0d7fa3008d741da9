"""Layers: the module paths the exporter wrote (layers.module_paths: dynamo's metadata, scoped names such as
`/encoder/layer.0/attn/MatMul`) form a tree of scopes (`encoder` > `layer.0` > `attn`) that a diagram draws as
collapsible clusters, or as one box per collapsed layer.

A scope's key is its graph's prefix followed by the module path, e.g. `/encoder/layer.0` in the main graph
or `Loop_0/body//encoder` in a body (for TorchScript's names, node paths inside start with the key). Chains of
scopes holding nothing but one sub-scope are merged (`encoder/layer.0`), and scopes holding a single node
dissolve.
Long member lists (graphs without scope names, scopes with hundreds of children) are cut into about a dozen
blocks of consecutive members (key `<graph prefix>#<first>-<last>`), and those blocks again, so that every level
of the hierarchy is a readable overview of the level below.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..proto.graph import GraphRef, node_ids
from .layers import Parts, constant_nodes, module_paths

BLOCK_LIMIT = 150  # a member list longer than this is split into blocks…
BLOCK_FANOUT = 12  # …about this many, each split again…
BLOCK_LEAF = 40  # …while it holds more members than this
OWN_LIMIT = 12  # a layer's own nodes among its sub-layers: more than this are boxed by runs


@dataclass(eq=False)
class Scope:
    """One scope cluster: `members` are node paths and sub-scopes in graph order; `size` counts every node."""

    key: str
    label: str
    members: list[str | Scope] = field(default_factory=list)
    size: int = 0
    depth: int = 0
    parent: Scope | None = None

    def nodes(self) -> list[str]:
        """Every node path inside, sub-scopes included, in graph order."""
        out: list[str] = []
        for m in self.members:
            out.extend(m.nodes() if isinstance(m, Scope) else [m])
        return out

    def lineage(self) -> list[Scope]:
        """The scopes around this one, outermost first, ending with this one."""
        out: list[Scope] = []
        scope: Scope | None = self
        while scope is not None:
            out.append(scope)
            scope = scope.parent
        return out[::-1]


@dataclass(eq=False)
class _Raw:
    parts: tuple[str, ...]
    first: int
    children: dict[str, _Raw] = field(default_factory=dict)
    nodes: list[tuple[int, str]] = field(default_factory=list)


def _first(member: tuple[int, str | Scope]) -> int:
    return member[0]


class ScopeTree:
    """The scopes of one graph: `members` (top-level node paths and scopes in graph order), `scopes` by key,
    `scope_of` node path -> innermost scope (absent for top-level nodes)."""

    def __init__(self, graph: GraphRef) -> None:
        self.graph_path = graph.path
        self.scopes: dict[str, Scope] = {}
        self.scope_of: dict[str, Scope] = {}
        root = _Raw((), -1)
        raws: dict[Parts, _Raw] = {(): root}
        paths = self._paths = module_paths(graph)
        constant = constant_nodes(graph)
        # a layer is placed by its first computing node (constants, whose order says little, only when it has none)
        order = [i for i in range(len(paths)) if not constant[i]] + [i for i in range(len(paths)) if constant[i]]
        for index in order:
            raw = raws.get(paths[index])
            if raw is None:
                raw = root
                for part in paths[index]:
                    child = raw.children.get(part)
                    if child is None:
                        child = raw.children[part] = _Raw(raw.parts + (part,), index)
                    raw = child
                raws[paths[index]] = raw
        for index, node_id in enumerate(node_ids(graph.proto)):
            raws[paths[index]].nodes.append((index, graph.prefix + node_id))
        self._prefix = graph.prefix
        self.members: list[str | Scope] = [m for _, m in self._build(root)]
        self._finish(self.members, None, 0)

    def _build(self, raw: _Raw) -> list[tuple[int, str | Scope]]:
        """Ordered members of a raw scope, after dissolving single-node scopes and merging chains."""
        if not raw.children:
            return self._blocks(list(raw.nodes))
        members: list[tuple[int, str | Scope]] = list(raw.nodes)
        for child in raw.children.values():
            built = self._build(child)
            scopes = [m for _, m in built if isinstance(m, Scope)]
            size = len(built) - len(scopes) + sum(m.size for m in scopes)
            if size <= 1:
                members.extend(built)
            elif len(built) == 1 and scopes:
                merged = scopes[0]
                merged.label = f"{child.parts[-1]}/{merged.label}"
                members.append((child.first, merged))
            else:
                key = self._prefix + "/" + "/".join(child.parts)
                members.append((child.first, Scope(key, child.parts[-1], [m for _, m in built], size)))
        members.sort(key=_first)
        return self._blocks(self._runs(members, len(raw.parts)))

    def _runs(self, members: list[tuple[int, str | Scope]], depth: int) -> list[tuple[int, str | Scope]]:
        """A layer's own nodes between its sub-layers, when they are many (a transformer's embeddings and mask
        arithmetic around its blocks), drawn as one box per run of consecutive ones, so that its overview shows
        the sub-layers and what lies between them in a few boxes."""
        loose = sum(1 for _, m in members if not isinstance(m, Scope))
        if loose <= OWN_LIMIT or loose == len(members):
            return members
        out: list[tuple[int, str | Scope]] = []
        run: list[tuple[int, str | Scope]] = []
        for member in members + [(-1, Scope("", ""))]:  # a sentinel scope ends the last run
            if not isinstance(member[1], Scope):
                run.append(member)
                continue
            if len(run) > 1:
                (first, head), (last, tail) = run[0], run[-1]
                label = f"{self._short(head)} … {self._short(tail)}"
                inner = dict.fromkeys(self._paths[i][depth] for i, _ in run if len(self._paths[i]) > depth)
                if inner:  # the single-node layers dissolved here (a transformer's wte and wpe) name the run
                    label = f"{', '.join(inner)} · {label}"
                out.append((first, Scope(f"{self._prefix}#{first}-{last}", label, [m for _, m in run], len(run))))
            else:
                out.extend(run)
            run = []
            if member[0] >= 0:
                out.append(member)
        return out

    def _blocks(self, members: list[tuple[int, str | Scope]], limit: int = BLOCK_LIMIT) -> list[tuple[int, str | Scope]]:
        """A long member list (a graph exported without scope names, or a scope with hundreds of children) is
        cut into BLOCK_FANOUT blocks of consecutive members, keyed `<graph prefix>#<first>-<last>` by the node
        index each member starts at, and each block's members again while they are more than BLOCK_LEAF: a
        drawing of any level shows a dozen boxes."""
        if len(members) <= limit:
            return members
        size = -(-len(members) // BLOCK_FANOUT)
        out: list[tuple[int, str | Scope]] = []
        for start in range(0, len(members), size):
            piece = members[start:start + size]
            if len(piece) == 1:
                out.extend(piece)
                continue
            (first, head), (last, tail) = piece[0], piece[-1]
            label = f"{self._short(head)} … {self._short(tail)}"
            total = sum(m.size if isinstance(m, Scope) else 1 for _, m in piece)
            inside = [m for _, m in self._blocks(piece, BLOCK_LEAF)]
            out.append((first, Scope(f"{self._prefix}#{first}-{last}", label, inside, total)))
        return out

    def _short(self, member: str | Scope) -> str:
        if isinstance(member, Scope):
            return member.label
        return member[len(self._prefix):].rsplit("/", 1)[-1] or member

    def _finish(self, members: list, parent: Scope | None, depth: int) -> None:
        for m in members:
            if isinstance(m, Scope):
                m.parent, m.depth = parent, depth
                self.scopes[m.key] = m
                self._finish(m.members, m, depth + 1)
            elif parent is not None:
                self.scope_of[m] = parent

    def chain(self, node_path: str) -> list[Scope]:
        """The scopes containing a node, outermost first."""
        scope = self.scope_of.get(node_path)
        return scope.lineage() if scope is not None else []


def auto_depth(members: list, budget: int, weight: Callable[[str], int] = lambda path: 1) -> int:
    """The scope depth to expand below so that at most `budget` boxes are drawn for `members` (scopes at that
    depth or deeper collapse into one box each; a node counts `weight(path)` boxes, e.g. with the bodies it
    opens); the shallowest depth when even that exceeds the budget."""
    def count(items: list, depth: int) -> int:
        total = 0
        for m in items:
            if not isinstance(m, Scope):
                total += weight(m)
            else:
                total += count(m.members, depth) if m.depth < depth else 1
        return total

    depths = []
    stack = [m for m in members if isinstance(m, Scope)]
    while stack:
        scope = stack.pop()
        depths.append(scope.depth)
        stack.extend(m for m in scope.members if isinstance(m, Scope))
    if not depths:
        return 0
    best = min(depths)
    for depth in range(best + 1, max(depths) + 2):
        if count(members, depth) > budget:
            break
        best = depth
    return best


def find_scope(graphs: Iterable[GraphRef], key: str,
               tree: Callable[[GraphRef], ScopeTree]) -> tuple[GraphRef, Scope]:
    """The graph and scope a scope key names; ValueError when none does."""
    for graph in sorted(graphs, key=lambda g: -len(g.prefix)):
        if key.startswith(graph.prefix):
            scope = tree(graph).scopes.get(key)
            if scope is not None:
                return graph, scope
    raise ValueError(f"{key!r} is neither a graph path nor a scope key of the model")
