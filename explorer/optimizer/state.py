"""The graph one optimization works on: its Nodes and Values linked producer -> readers with the structural
queries patterns ask (links.py), the scope of names, the builders patterns use and the edits the driver makes
(insert, remove, replace, rewire, reorder). What is known about a value (constant, type, shape) is in
knowledge.py.

Every node of a graph carries a unique name (the driver names them first), so a node's path is
`<graph path>/<name>`. A name's value never changes while the optimizer runs: rewrites only add values, remove
values nobody reads any more, or point readers of one value at an equal one. That is what lets a pattern trust
what it read about a value for as long as the value exists.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import onnx
from onnx import helper

from ..proto.graph import attribute, defining_scope
from .context import Context
from .ir import Node
from .knowledge import Knowledge
from .links import Links
from .scope import rename_node, repaired_order


class GraphState(Links, Knowledge):
    """One graph (main or body) being optimized. Patterns only read it and build nodes; the driver edits it."""

    def __init__(self, graph: onnx.GraphProto, ctx: Context, *, path: str = "", parent: GraphState | None = None,
                 trust_shapes: bool = True, initializers: Iterable[onnx.TensorProto] | None = None,
                 owner: Node | None = None) -> None:
        """`initializers` replaces the graph's own (a copy of a graph may leave its weights in the original);
        `owner` is the node of `parent` whose body this graph is."""
        Links.__init__(self)
        self.graph = graph
        self.owner = owner
        self.ctx = ctx
        self.path = path
        self.prefix = f"{path}/" if path else ""
        self.parent = parent
        self._seq = itertools.count(1)
        self._rewired: dict[str, str] | None = None
        self._applying: set[Node] = set()
        self.version = 0  # grows with every edit: a match found at an older version is checked again
        for out in graph.output:
            self.value(out.name).is_output = True
        Knowledge.__init__(self, graph, trust_shapes, graph.initializer if initializers is None else initializers)
        for index, proto in enumerate(graph.node):
            self._add(proto, (float(index), 0))
        self._order = list(self.live)
        self.edited.clear()
        self._dirty = False
        self._misplaced = True  # the first reorder checks the order the graph came with

    # ----------------------------------------------------------------------------------------------- queries
    def node_path(self, node: Node) -> str:
        return self.prefix + node.name

    def nodes(self) -> list[Node]:
        """The live nodes in a valid execution order."""
        if self._dirty:
            self.reorder()
        return list(self._order)

    def defines(self, name: str) -> bool:
        """True when this graph itself defines `name` (input, initializer or node output)."""
        return self.producer(name) is not None or any(name in d for d in (self.inputs, self.initializers, self.sparse))

    def outer(self, name: str) -> GraphState | None:
        """The enclosing graph that defines `name`, read here (graph.defining_scope, the model's scope rule):
        None when this graph defines it itself or none does. Constants, types, shapes and known values follow it."""
        found = defining_scope(self, name, GraphState.defines, lambda g: g.parent)
        return None if found is self else found

    def visible(self, name: str) -> bool:
        """True when `name` can be read here: defined by this graph or by an enclosing one."""
        return self.defines(name) or self.outer(name) is not None

    def attribute(self, node: Node | onnx.NodeProto, name: str, default: Any = None) -> Any:
        """An attribute's value, or `default` when the node does not set it."""
        return node.setting(name, default) if isinstance(node, Node) else attribute(node, name, default)

    def opset(self, domain: str = "") -> int:
        return self.ctx.opsets.get(domain, 1)

    # ----------------------------------------------------------------------------------------------- builders
    def unique_name(self, prefix: str) -> str:
        """A value or node name used nowhere in the model."""
        return self.ctx.fresh(prefix)

    def make_node(self, op_type: str, inputs: Iterable[str], outputs: Iterable[str], *, name: str | None = None,
                  domain: str = "", **attrs: Any) -> onnx.NodeProto:
        """A new node (not yet in the graph: return it from `apply`)."""
        return helper.make_node(op_type, list(inputs), list(outputs), name=name or "", domain=domain or None,
                                **{k: v for k, v in attrs.items() if v is not None})

    def replace_uses(self, old: str, new: str) -> None:
        """Points every reader of `old` at `new` (equal values), except the nodes of the rewrite being applied.
        `old` must not be a graph output or read by a body: patterns check is_output / is_captured first."""
        if self.is_output(old) or self.is_captured(old):
            raise ValueError(f"{old!r} is a graph output or read by a body: its readers cannot be rewired")
        mapping = {old: new}
        for user in self.consumers(old):
            if user in self._applying:
                continue
            twin = user.copy()
            rename_node(twin, mapping)
            self.replace(user, twin)
        if self._rewired is not None:
            self._rewired[old] = new

    # ----------------------------------------------------------------------------------------------- edits
    def remove(self, nodes: Iterable[Node]) -> None:
        for node in nodes:
            self._drop(node)
        self._dirty = True
        self.version += 1

    def insert(self, protos: Iterable[onnx.NodeProto], position: tuple[float, int]) -> list[Node]:
        """Adds nodes just before `position` (a node's pos); the round's reorder repairs the order if a node
        must run elsewhere. Nodes without a name, or with one another node of this graph has, get a fresh one."""
        base = position[0] - 0.5
        self.forget_untyped()
        added = []
        for proto in protos:
            if not proto.name or proto.name in self._by_name:
                proto.name = self.unique_name(proto.op_type)
            self.ctx.names.add(proto.name)
            self.ctx.names.update(o for o in proto.output if o)
            added.append(self._add(proto, (base, next(self._seq))))
        self._misplaced = self._misplaced or any(self._out_of_order(node) for node in added)
        self._dirty = True
        self.version += 1
        return added

    def replace(self, node: Node, twin: onnx.NodeProto) -> Node:
        """Puts `twin` (a changed copy, same name) where `node` was. Protos are never changed in place once in
        the graph, so rewrite records can keep references to them."""
        self._drop(node)
        new = self._add(twin, node.pos)
        self._misplaced = self._misplaced or self._out_of_order(new)
        self._dirty = True
        self.version += 1
        return new

    def _out_of_order(self, node: Node) -> bool:
        """True when, at its position, `node` would run before a producer it needs or after one of its readers."""
        where = node.pos
        for v in node.needs():
            p = v.producer
            if p is not None and p is not node and p.pos >= where:
                return True
        for out in node.outputs:
            if out is not None:
                for users in (out.readers, out.capturers):
                    for user in users:
                        if user.pos <= where and user is not node:
                            return True
        return False

    def dead_producers(self, names: Iterable[str]) -> list[Node]:
        """Nodes that produced some of `names` and whose outputs nobody reads any more, transitively."""
        dead: list[Node] = []
        stack = [self.producer(n) for n in names if n]
        while stack:
            node = stack.pop()
            if node is None or node not in self.live or not self.is_dead(node):
                continue
            stack.extend(v.producer for v in node.needs())
            self._drop(node)
            dead.append(node)
        if dead:
            self._dirty = True
            self.version += 1
        return dead

    def begin_rewire_log(self, nodes: Iterable[Node]) -> None:
        """Starts applying a rewrite of `nodes`: replace_uses leaves them alone and logs what it rewires."""
        self._rewired = {}
        self._applying = set(nodes)

    def end_rewire_log(self) -> dict[str, str]:
        log, self._rewired, self._applying = self._rewired or {}, None, set()
        return log

    def reorder(self) -> None:
        """Sorts the live nodes by position, then, if an edit may have put a node before its inputs, repairs the
        order (every edit checks whether it did)."""
        ordered = sorted(self.live, key=lambda n: n.pos)
        if self._misplaced:
            ordered = repaired_order(ordered)
        self._order = ordered
        for index, node in enumerate(ordered):
            node.pos = (float(index), 0)
        self._dirty = self._misplaced = False

    def to_graph(self, graph: onnx.GraphProto | None = None) -> onnx.GraphProto:
        """The graph as it is now (written into `graph` when given, an empty one): live nodes in order,
        initializers still read, value_info for live values whose type is known and not obvious from a constant."""
        nodes = self.nodes()
        used = {name for name, v in self.values.items() if v.is_used()} | self.inputs
        graph = onnx.GraphProto() if graph is None else graph
        graph.name, graph.doc_string = self.graph.name, self.graph.doc_string
        graph.input.extend(self.graph.input)
        graph.output.extend(self.graph.output)
        graph.initializer.extend(t for t in self.initializers.values() if t.name in used)
        graph.sparse_initializer.extend(t for t in self.graph.sparse_initializer if t.values.name in used)
        graph.node.extend(n.proto for n in nodes)
        graph.value_info.extend(self.value_info(n for n in nodes if n.op_type != "Constant"))
        graph.metadata_props.extend(self.graph.metadata_props)
        return graph
