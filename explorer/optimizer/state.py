"""The graph one optimization works on: the queries patterns ask (producer, consumers, constants, types, shapes),
the builders they use (fresh names, nodes, constants), and the edits the driver makes (add, remove, rewire).

Every node of a graph carries a unique name (the driver names them first), so a node's path is
`<graph path>/<name>`. A name's value never changes while the optimizer runs: rewrites only add values, remove
values nobody reads any more, or point readers of one value at an equal one. That is what lets a pattern trust
what it read about a value for as long as the value exists.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, shape_inference

from ..graph import attribute
from . import tensors
from .scope import node_captures, rename_node, stable_topological


@dataclass
class Context:
    """What all graphs of one optimization share: every name in use, opsets, and why candidates were declined."""

    opsets: dict[str, int]
    ir_version: int
    names: set[str] = field(default_factory=set)
    declined: dict[tuple[str, str, str], str] = field(default_factory=dict)
    _counters: dict[str, itertools.count] = field(default_factory=dict)

    def fresh(self, prefix: str) -> str:
        """A name used nowhere in the model (values and nodes of every graph), starting with `prefix`."""
        prefix = prefix or "v"
        counter = self._counters.setdefault(prefix, itertools.count())
        while True:
            name = f"{prefix}__{next(counter)}"
            if name not in self.names:
                self.names.add(name)
                return name


class GraphState:
    """One graph (main or body) being optimized. Patterns only read it and build nodes; the driver edits it."""

    def __init__(self, graph: onnx.GraphProto, ctx: Context, *, path: str = "",
                 parent: GraphState | None = None, trust_shapes: bool = True) -> None:
        self.graph = graph
        self.ctx = ctx
        self.path = path
        self.prefix = f"{path}/" if path else ""
        self.parent = parent
        # A Loop's carried values may change shape from one iteration to the next, so inferred shapes inside a
        # Loop body (and anything nested in one) describe only some iterations.
        self.trust_shapes = trust_shapes
        self._outputs = {o.name for o in graph.output}
        self.initializers: dict[str, onnx.TensorProto] = {t.name: t for t in graph.initializer}
        self._inputs = {i.name for i in graph.input}
        self._sparse = {t.values.name for t in graph.sparse_initializer}
        self.types: dict[str, onnx.TypeProto] = {}
        for info in [*graph.input, *graph.value_info, *graph.output]:
            if info.HasField("type"):
                self.types[info.name] = info.type
        self._constants: dict[str, np.ndarray] = {}
        self._nodes: dict[int, onnx.NodeProto] = {}
        self._pos: dict[int, tuple[float, int]] = {}
        self._producer: dict[str, onnx.NodeProto] = {}
        self._users: dict[str, dict[int, onnx.NodeProto]] = {}
        self._captures: dict[int, list[str]] = {}
        self._captured: dict[str, dict[int, onnx.NodeProto]] = {}
        self._node_names: set[str] = set()
        self._seq = itertools.count(1)
        self._rewired: dict[str, str] | None = None
        self._applying: set[int] = set()
        self.version = 0  # grows with every edit: a match found at an older version is checked again
        for index, node in enumerate(graph.node):
            self._add(node, (float(index), 0))
        self._order = list(graph.node)
        self._dirty = False
        self._misplaced = True  # the first reorder checks the order the graph came with
        self._shapes: dict[str, tuple | None] = {}
        self._untyped: set[str] = set()

    # ----------------------------------------------------------------------------------------------- queries
    def node_path(self, node: onnx.NodeProto) -> str:
        return self.prefix + node.name

    def nodes(self) -> list[onnx.NodeProto]:
        """The live nodes in a valid execution order."""
        if self._dirty:
            self.reorder()
        return list(self._order)

    def is_alive(self, node: onnx.NodeProto) -> bool:
        return id(node) in self._nodes

    def position(self, node: onnx.NodeProto) -> tuple[float, int]:
        return self._pos[id(node)]

    def producer(self, name: str) -> onnx.NodeProto | None:
        """The node of this graph producing `name` (None for inputs, initializers and outer values)."""
        return self._producer.get(name)

    def producer_op(self, name: str, *op_types: str) -> onnx.NodeProto | None:
        """The producer of `name` when it is an ONNX-domain node of one of `op_types`, else None."""
        node = self._producer.get(name)
        if node is None or node.op_type not in op_types or node.domain not in ("", "ai.onnx"):
            return None
        return node

    def consumers(self, name: str) -> list[onnx.NodeProto]:
        """Nodes of this graph reading `name`, directly or through one of their bodies."""
        direct = self._users.get(name, {})
        captured = self._captured.get(name, {})
        if not captured:
            return list(direct.values())
        merged = dict(direct)
        merged.update(captured)
        return list(merged.values())

    def read_outside(self, name: str, nodes: set[int]) -> bool:
        """True when something other than the nodes with these ids reads `name` (a node, a body, the graph)."""
        if name in self._outputs or self._captured.get(name):
            return True
        return any(key not in nodes for key in self._users.get(name, ()))

    def is_output(self, name: str) -> bool:
        return name in self._outputs

    def is_captured(self, name: str) -> bool:
        """True when a body of some node of this graph reads `name` from this scope."""
        return bool(self._captured.get(name))

    def is_used(self, name: str) -> bool:
        return bool(self._users.get(name)) or bool(self._captured.get(name)) or name in self._outputs

    def is_dead(self, node: onnx.NodeProto) -> bool:
        """True when nothing reads any output of `node`."""
        return not any(name and self.is_used(name) for name in node.output)

    def is_used_more_than_once(self, name: str) -> bool:
        readers = len(self.consumers(name))
        return readers + (1 if name in self._outputs else 0) > 1

    def defines(self, name: str) -> bool:
        """True when this graph itself defines `name` (input, initializer or node output)."""
        return (name in self._producer or name in self._inputs or name in self.initializers
                or name in self._sparse)

    def visible(self, name: str) -> bool:
        """True when `name` can be read here: defined by this graph or by an enclosing one."""
        if self.defines(name):
            return True
        return self.parent is not None and self.parent.visible(name)

    def is_constant(self, name: str) -> bool:
        """True for initializers that cannot be fed, Constant node outputs, and constants of enclosing graphs."""
        return self.constant(name) is not None

    def constant(self, name: str) -> np.ndarray | None:
        """The value of a constant (see is_constant), else None."""
        if not name:
            return None
        cached = self._constants.get(name)
        if cached is not None:
            return cached
        value = None
        node = self._producer.get(name)
        if node is not None:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                value = tensors.constant_value(node)
        elif name in self.initializers:
            if name not in self._inputs:  # an initializer that is also an input may be fed: not a constant
                value = onnx.numpy_helper.to_array(self.initializers[name])
        elif self.parent is not None and not self.defines(name):
            value = self.parent.constant(name)
        if value is not None:
            self._constants[name] = value
        return value

    def value_type(self, name: str) -> onnx.TypeProto | None:
        """The type of `name`: declared, inferred by the loader, inferred for new nodes, or from its constant."""
        found = self.types.get(name)
        if found is not None or name in self._untyped:
            return found
        if name in self.initializers:
            tensor = self.initializers[name]
            found = helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))
        elif name in self._producer:
            value = self.constant(name)
            found = tensors.array_type(value) if value is not None else self._infer(name)
        elif self.parent is not None and not self.defines(name):
            return self.parent.value_type(name)
        if found is not None:
            self.types[name] = found
        else:
            self._untyped.add(name)  # until a new node may tell more (see insert)
        return found

    def _infer(self, name: str) -> onnx.TypeProto | None:
        node = self._producer[name]
        if node.domain not in ("", "ai.onnx") or node_captures(node):
            return None
        try:
            schema = onnx.defs.get_schema(node.op_type, self.ctx.opsets.get("", 1), "")
        except Exception:  # noqa: BLE001 - unknown operator: no type
            return None
        inputs = {}
        data = {}
        for n in node.input:
            if not n:
                continue
            t = self.value_type(n)
            if t is None:
                return None
            inputs[n] = t
            value = self.constant(n)
            if value is not None and value.size <= 64 and value.dtype.kind in "iub":
                data[n] = tensors.to_tensor(value, n)
        try:
            out = shape_inference.infer_node_outputs(schema, node, inputs, input_data=data)
        except Exception:  # noqa: BLE001 - inference refuses: no type
            return None
        for key, tp in out.items():
            self.types.setdefault(key, tp)
        return out.get(name)

    def elem_type(self, name: str) -> int | None:
        """The ONNX element type (TensorProto.FLOAT, ...) of a tensor value, None when unknown."""
        return tensors.tensor_elem_type(self.value_type(name))

    def shape(self, name: str) -> tuple[int | str | None, ...] | None:
        """Dims of a tensor value (int known, str symbolic, None unknown); None when its rank is unknown or
        when shapes cannot be trusted here (inside a Loop body), except for constants."""
        if name in self._shapes:
            return self._shapes[name]
        value = self.constant(name)
        if value is not None:
            found = tuple(value.shape)
        elif not self.trust_shapes:
            return None
        else:
            found = tensors.tensor_shape(self.value_type(name))
        if found is not None:
            self._shapes[name] = found  # a name's value, hence its shape, never changes
        return found

    def rank(self, name: str) -> int | None:
        shape = self.shape(name)
        return None if shape is None else len(shape)

    def static_shape(self, name: str) -> tuple[int, ...] | None:
        """The shape when every dim is a known integer, else None."""
        shape = self.shape(name)
        if shape is None or not all(isinstance(d, int) for d in shape):
            return None
        return shape  # type: ignore[return-value]

    def attribute(self, node: onnx.NodeProto, name: str, default: Any = None) -> Any:
        """An attribute's value, or `default` when the node does not set it."""
        return attribute(node, name, default)

    def opset(self, domain: str = "") -> int:
        return self.ctx.opsets.get(domain, 1)

    # ----------------------------------------------------------------------------------------------- builders
    def unique_name(self, prefix: str) -> str:
        """A value or node name used nowhere in the model."""
        return self.ctx.fresh(prefix)

    def make_node(self, op_type: str, inputs: Iterable[str], outputs: Iterable[str], *, name: str | None = None,
                  domain: str = "", **attrs: Any) -> onnx.NodeProto:
        """A new node (not yet in the graph: return it from `apply`)."""
        node = helper.make_node(op_type, list(inputs), list(outputs), name=name or "", domain=domain or None,
                                **{k: v for k, v in attrs.items() if v is not None})
        return node

    def make_constant(self, value: np.ndarray, prefix: str = "cst", name: str | None = None,
                      ) -> tuple[onnx.NodeProto, str]:
        """A new Constant node holding `value`, and the (fresh unless given) name of its output."""
        out = name or self.unique_name(prefix)
        value = np.asarray(value)
        node = helper.make_node("Constant", [], [out], value=tensors.to_tensor(value, out))
        self._constants[out] = value
        self.types[out] = tensors.array_type(value)
        return node, out

    def set_type(self, name: str, type_proto: onnx.TypeProto | None) -> None:
        if type_proto is not None:
            self.types[name] = type_proto

    def replace_uses(self, old: str, new: str) -> None:
        """Points every reader of `old` at `new` (equal values), except the nodes of the rewrite being applied.
        `old` must not be a graph output or read by a body: patterns check is_output / is_captured first."""
        if old in self._outputs or self.is_captured(old):
            raise ValueError(f"{old!r} is a graph output or read by a body: its readers cannot be rewired")
        mapping = {old: new}
        for key, user in list(self._users.get(old, {}).items()):
            if key in self._applying:
                continue
            twin = onnx.NodeProto()
            twin.CopyFrom(user)
            rename_node(twin, mapping)
            self.replace(user, twin)
        if self._rewired is not None:
            self._rewired[old] = new

    # ----------------------------------------------------------------------------------------------- edits
    def _add(self, node: onnx.NodeProto, pos: tuple[float, int]) -> None:
        key = id(node)
        self._nodes[key] = node
        self._pos[key] = pos
        self._node_names.add(node.name)
        for name in node.output:
            if name:
                self._producer[name] = node
        for name in node.input:
            if name:
                self._users.setdefault(name, {})[key] = node
        captures = node_captures(node) if len(node.attribute) else []
        if captures:
            self._captures[key] = captures
            for name in captures:
                self._captured.setdefault(name, {})[key] = node

    def _drop(self, node: onnx.NodeProto) -> None:
        key = id(node)
        del self._nodes[key]
        del self._pos[key]
        self._node_names.discard(node.name)
        for name in node.output:
            if name and self._producer.get(name) is node:
                del self._producer[name]
        for name in node.input:
            users = self._users.get(name)
            if users is not None:
                users.pop(key, None)
                if not users:
                    del self._users[name]
        for name in self._captures.pop(key, ()):
            captured = self._captured.get(name)
            if captured is not None:
                captured.pop(key, None)
                if not captured:
                    del self._captured[name]

    def remove(self, nodes: Iterable[onnx.NodeProto]) -> None:
        for node in nodes:
            self._drop(node)
        self._dirty = True
        self.version += 1

    def insert(self, nodes: Iterable[onnx.NodeProto], position: tuple[float, int]) -> None:
        """Adds nodes just before `position` (see position()); the round's reorder repairs the order if a node
        must run elsewhere. Nodes without a name, or with one another node of this graph has, get a fresh one."""
        base = position[0] - 0.5
        self._untyped.clear()
        for node in nodes:
            if not node.name or node.name in self._node_names:
                node.name = self.unique_name(node.op_type)
            self.ctx.names.add(node.name)
            self.ctx.names.update(o for o in node.output if o)
            self._add(node, (base, next(self._seq)))
        self._misplaced = self._misplaced or any(self._out_of_order(node) for node in nodes)
        self._dirty = True
        self.version += 1

    def replace(self, node: onnx.NodeProto, twin: onnx.NodeProto) -> None:
        """Puts `twin` (a changed copy, same name) where `node` was. Nodes are never changed in place once in
        the graph, so rewrite records can keep references to them."""
        pos = self._pos[id(node)]
        self._drop(node)
        self._add(twin, pos)
        self._misplaced = self._misplaced or self._out_of_order(twin)
        self._dirty = True
        self.version += 1

    def _out_of_order(self, node: onnx.NodeProto) -> bool:
        """True when, at its position, `node` would run before a producer it needs or after one of its readers."""
        where = self._pos[id(node)]
        for name in self._needs(node):
            p = self._producer.get(name)
            if p is not None and p is not node and self._pos[id(p)] >= where:
                return True
        for name in node.output:
            if name and any(self._pos[id(u)] <= where for u in self.consumers(name) if u is not node):
                return True
        return False

    def dead_producers(self, names: Iterable[str]) -> list[onnx.NodeProto]:
        """Nodes that produced some of `names` and whose outputs nobody reads any more, transitively."""
        dead: list[onnx.NodeProto] = []
        stack = [n for n in names if n]
        while stack:
            name = stack.pop()
            node = self._producer.get(name)
            if node is None or id(node) not in self._nodes:
                continue
            if not self.is_dead(node):
                continue
            stack.extend(n for n in node.input if n)
            stack.extend(self.captures_of(node))
            self._drop(node)
            dead.append(node)
        if dead:
            self._dirty = True
            self.version += 1
        return dead

    def captures_of(self, node: onnx.NodeProto) -> list[str]:
        """Outer names the bodies of `node` read."""
        return list(self._captures.get(id(node), ()))

    def begin_rewire_log(self, nodes: Iterable[onnx.NodeProto]) -> None:
        """Starts applying a rewrite of `nodes`: replace_uses leaves them alone and logs what it rewires."""
        self._rewired = {}
        self._applying = {id(n) for n in nodes}

    def end_rewire_log(self) -> dict[str, str]:
        log, self._rewired, self._applying = self._rewired or {}, None, set()
        return log

    def reorder(self) -> None:
        """Sorts the live nodes by position, then, if an edit may have put a node before its inputs, repairs the
        order (every edit checks whether it did)."""
        ordered = sorted(self._nodes.values(), key=lambda n: self._pos[id(n)])
        if self._misplaced and not self._valid(ordered):
            ordered = self._repair(ordered)
        self._order = ordered
        for index, node in enumerate(ordered):
            self._pos[id(node)] = (float(index), 0)
        self._dirty = self._misplaced = False

    def _needs(self, node: onnx.NodeProto) -> list[str]:
        names = [n for n in node.input if n]
        names.extend(self._captures.get(id(node), ()))
        return names

    def _valid(self, ordered: list[onnx.NodeProto]) -> bool:
        done: set[int] = set()
        producer = self._producer
        for node in ordered:
            for name in self._needs(node):
                p = producer.get(name)
                if p is not None and id(p) not in done and p is not node:
                    return False
            done.add(id(node))
        return True

    def _repair(self, ordered: list[onnx.NodeProto]) -> list[onnx.NodeProto]:
        producer = self._producer

        def needs(node: onnx.NodeProto) -> list[onnx.NodeProto]:
            found = (producer.get(name) for name in self._needs(node))
            return [p for p in found if p is not None and p is not node]

        return stable_topological(ordered, needs)

    def to_graph(self) -> onnx.GraphProto:
        """The graph as it is now: live nodes in order, initializers still read, value_info for live values."""
        nodes = self.nodes()
        used: set[str] = set(self._users) | set(self._captured) | self._outputs | self._inputs
        graph = onnx.GraphProto(name=self.graph.name, doc_string=self.graph.doc_string)
        graph.input.extend(self.graph.input)
        graph.output.extend(self.graph.output)
        graph.initializer.extend(t for t in self.graph.initializer if t.name in used)
        graph.sparse_initializer.extend(t for t in self.graph.sparse_initializer if t.values.name in used)
        graph.node.extend(nodes)
        declared = self._inputs | self._outputs
        known = {i.name for i in self.graph.value_info}
        graph.value_info.extend(v for v in self.graph.value_info if v.name in self._producer)
        for name in self._producer:
            if name not in known and name not in declared and name in self.types:
                graph.value_info.append(tensors.make_value_info(name, self.types[name]))
        graph.metadata_props.extend(self.graph.metadata_props)
        return graph
