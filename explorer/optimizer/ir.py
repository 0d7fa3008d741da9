"""The optimizer's graph objects: a Node wraps one NodeProto, a Value links its producer to its readers.

Node protos are never changed once in a graph (an edit replaces the Node), so rewrite records can keep them.
Nodes and Values compare by identity, which is what makes them usable as set members and dict keys.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx

from ..proto.graph import ProtoFields, attribute

ONNX_DOMAINS = ("", "ai.onnx")
_BODY_TYPES = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
_UNREAD, _ABSENT = object(), object()


class Node(ProtoFields):
    """One node of a graph being optimized: its proto (whose fields it reads like a NodeProto), its place in the
    order, the values it reads and gives."""

    # the proto never changes once in a graph: its most read fields are kept as plain attributes
    __slots__ = ("_body", "_onnx", "_settings", "captures", "input", "inputs", "name", "op_type", "output", "outputs",
                 "pos", "proto")

    def __init__(self, proto: onnx.NodeProto, pos: tuple[float, int]) -> None:
        self.proto = proto
        self.pos = pos
        self.op_type: str = proto.op_type
        self.name: str = proto.name
        self.input: tuple[str, ...] = tuple(proto.input)
        self.output: tuple[str, ...] = tuple(proto.output)
        self._onnx = proto.domain in ONNX_DOMAINS  # the proto never changes once in a graph
        attributes = proto.attribute
        self._body = bool(attributes) and any(a.type in _BODY_TYPES for a in attributes)
        self.inputs: list[Value | None] = []
        self.outputs: list[Value | None] = []
        self.captures: list[Value] = []  # outer values its bodies read
        self._settings: dict[str, Any] | None = None  # attribute values read so far

    def is_onnx(self, *op_types: str) -> bool:
        """True for an ONNX-domain node (of one of `op_types` when given)."""
        return self._onnx and (not op_types or self.op_type in op_types)

    def setting(self, name: str, default: Any = None) -> Any:
        """The value of attribute `name` as graph.attribute reads it, or `default` when the node does not set it
        (read from the proto once; a list comes as a fresh copy)."""
        settings = self._settings
        if settings is None:
            settings = self._settings = {}
        value = settings.get(name, _UNREAD)
        if value is _UNREAD:
            value = settings[name] = attribute(self.proto, name, _ABSENT)
        if value is _ABSENT:
            return default
        return list(value) if isinstance(value, list) else value.copy() if isinstance(value, np.ndarray) else value

    def has_body(self) -> bool:
        return self._body

    def copy(self) -> onnx.NodeProto:
        """A fresh proto equal to this node's (to change and return from a rewrite)."""
        twin = onnx.NodeProto()
        twin.CopyFrom(self.proto)
        return twin

    def needs(self) -> Iterator[Value]:
        """The values it reads, directly or through its bodies."""
        for v in self.inputs:
            if v is not None:
                yield v
        yield from self.captures

    def __repr__(self) -> str:
        return f"Node({self.proto.op_type} {self.proto.name!r})"


class Value:
    """One named value of a graph: who produces it (None for inputs, initializers and outer values), who reads
    it directly (`readers`) or from a body (`capturers`), and whether the graph returns it."""

    __slots__ = ("capturers", "is_output", "name", "producer", "readers")

    def __init__(self, name: str) -> None:
        self.name = name
        self.producer: Node | None = None
        self.readers: dict[Node, None] = {}  # an ordered set
        self.capturers: dict[Node, None] = {}
        self.is_output = False

    def users(self) -> list[Node]:
        """Nodes reading it, directly or through one of their bodies (each once)."""
        if not self.capturers:
            return list(self.readers)
        return list({**self.readers, **self.capturers})

    def is_used(self) -> bool:
        return bool(self.readers) or bool(self.capturers) or self.is_output

    def use_count(self) -> int:
        """Readers plus one when the graph returns it."""
        return len(self.users()) + (1 if self.is_output else 0)

    def __repr__(self) -> str:
        return f"Value({self.name!r})"


Built = Node | onnx.NodeProto  # what a rewrite returns: nodes it keeps, protos of the nodes it adds
