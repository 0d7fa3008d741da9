"""The producer -> readers links of one graph being optimized: its live Nodes and named Values (see ir.py), the
structural queries patterns ask of them, and the two primitive edits every edit of GraphState is made of (a node
linked in, a node unlinked)."""
from __future__ import annotations

import onnx

from .ir import Node, Value
from .scope import node_captures


class Links:
    """Nodes and Values of one graph, linked; the base of GraphState."""

    def __init__(self) -> None:
        self.values: dict[str, Value] = {}
        self.live: dict[Node, None] = {}  # an ordered set
        self._by_name: dict[str, Node] = {}
        self.edited: list[Node] = []  # nodes added or dropped since the driver last took them (near_edits)
        self.holders = 0  # live nodes with bodies

    def value(self, name: str) -> Value:
        """The Value named `name` in this graph (created on first use)."""
        found = self.values.get(name)
        if found is None:
            found = self.values[name] = Value(name)
        return found

    def is_alive(self, node: Node) -> bool:
        return node in self.live

    def producer(self, name: str) -> Node | None:
        """The node of this graph producing `name` (None for inputs, initializers and outer values)."""
        found = self.values.get(name)
        return None if found is None else found.producer

    def producer_op(self, name: str, *op_types: str) -> Node | None:
        """The producer of `name` when it is an ONNX-domain node of one of `op_types`, else None."""
        node = self.producer(name)
        return node if node is not None and node.is_onnx(*op_types) else None

    def consumers(self, name: str) -> list[Node]:
        """Nodes of this graph reading `name`, directly or through one of their bodies."""
        found = self.values.get(name)
        return [] if found is None else found.users()

    def read_outside(self, name: str, nodes: set[Node]) -> bool:
        """True when something other than `nodes` reads `name` (a node, a body, the graph)."""
        v = self.values.get(name)
        if v is None:
            return False
        return v.is_output or bool(v.capturers) or not nodes.issuperset(v.readers)

    def is_output(self, name: str) -> bool:
        found = self.values.get(name)
        return found is not None and found.is_output

    def is_captured(self, name: str) -> bool:
        """True when a body of some node of this graph reads `name` from this scope."""
        found = self.values.get(name)
        return found is not None and bool(found.capturers)

    def is_used(self, name: str) -> bool:
        found = self.values.get(name)
        return found is not None and found.is_used()

    def is_dead(self, node: Node) -> bool:
        """True when nothing reads any output of `node`."""
        return all(not (v is not None and (v.readers or v.capturers or v.is_output)) for v in node.outputs)

    def is_used_more_than_once(self, name: str) -> bool:
        found = self.values.get(name)
        return found is not None and found.use_count() > 1

    def _add(self, proto: onnx.NodeProto, pos: tuple[float, int]) -> Node:
        """Links a new Node of `proto` in: producer of its outputs, reader of its inputs, capturer of what its
        bodies read."""
        node = Node(proto, pos)
        self.live[node] = None
        self.edited.append(node)
        self._by_name[node.name] = node
        node.outputs = self._values_of(node.output)
        for v in node.outputs:
            if v is not None:
                v.producer = node
        node.inputs = self._values_of(node.input)
        for v in node.inputs:
            if v is not None:
                v.readers[node] = None
        if node.has_body():
            self.holders += 1
            for name in node_captures(proto):
                v = self.value(name)
                v.capturers[node] = None
                node.captures.append(v)
        return node

    def unlink(self) -> None:
        """Breaks the links from this graph's Values to its Nodes (each refers to the other), so that both are
        freed with the graph rather than by the garbage collector, which the optimizer pauses."""
        for v in self.values.values():
            v.producer = None
            v.readers.clear()
            v.capturers.clear()

    def _values_of(self, names: tuple[str, ...]) -> list[Value | None]:
        """The Values of `names` (created on first use), None for an empty name (an omitted optional one)."""
        values = self.values
        found: list[Value | None] = []
        for name in names:
            if name:
                v = values.get(name)
                if v is None:
                    v = values[name] = Value(name)
                found.append(v)
            else:
                found.append(None)
        return found

    def _drop(self, node: Node) -> None:
        """Unlinks `node` (its values stay, without it as producer or reader)."""
        del self.live[node]
        self.edited.append(node)
        if self._by_name.get(node.name) is node:
            del self._by_name[node.name]
        for v in node.outputs:
            if v is not None and v.producer is node:
                v.producer = None
        for v in node.inputs:
            if v is not None:
                v.readers.pop(node, None)
        if node.has_body():
            self.holders -= 1
        for v in node.captures:
            v.capturers.pop(node, None)
