"""Renaming values across nested graphs, respecting the scope rules of ONNX bodies (inner definitions shadow)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

import onnx

from ..proto.graph import GraphRef, free_names, node_ids, subgraph_attributes

if TYPE_CHECKING:
    from .ir import Node

N = TypeVar("N")  # a node: a proto or an optimizer Node


def node_captures(node: onnx.NodeProto) -> list[str]:
    """Outer names the bodies of a node read (empty for nodes without bodies)."""
    names: dict[str, None] = {}
    for _, body in subgraph_attributes(node):
        for name in free_names(body):
            names[name] = None
    return list(names)


def graph_definitions(graph: onnx.GraphProto) -> set[str]:
    """Names a graph defines itself: inputs, initializers, node outputs."""
    return GraphRef(path="", proto=graph).defined_names()


def rename_in_graph(graph: onnx.GraphProto, mapping: dict[str, str]) -> None:
    """Renames, in place, every definition and use of the names in `mapping` within `graph`, and their free uses
    inside nested bodies (a body that defines a name itself keeps its own)."""
    if not mapping:
        return
    for info in [*graph.input, *graph.output, *graph.value_info]:
        if info.name in mapping:
            info.name = mapping[info.name]
    for tensor in graph.initializer:
        if tensor.name in mapping:
            tensor.name = mapping[tensor.name]
    for node in graph.node:
        rename_node(node, mapping)
        for i, name in enumerate(node.output):
            if name in mapping:
                node.output[i] = mapping[name]


def rename_node(node: onnx.NodeProto, mapping: dict[str, str]) -> None:
    """Renames, in place, the uses of `mapping`'s names by one node: its inputs and its bodies' free uses."""
    for i, name in enumerate(node.input):
        if name in mapping:
            node.input[i] = mapping[name]
    for att in node.attribute:
        if att.type == onnx.AttributeProto.GRAPH:
            _rename_free(att.g, mapping)
        elif att.graphs:
            for body in att.graphs:
                _rename_free(body, mapping)


def _rename_free(graph: onnx.GraphProto, mapping: dict[str, str]) -> None:
    inner = {k: v for k, v in mapping.items() if k not in graph_definitions(graph)}
    if not inner:
        return
    for node in graph.node:
        rename_node(node, inner)
    for out in graph.output:
        if out.name in inner:
            out.name = inner[out.name]


def stable_topological(nodes: Iterable[N], needs: Callable[[N], Iterable[N]]) -> list[N]:
    """`nodes` reordered so each comes after the nodes it `needs`, otherwise keeping the given order."""
    done: set[int] = set()
    out: list[N] = []
    for root in nodes:
        if id(root) in done:
            continue
        stack = [(root, iter(needs(root)))]
        active = {id(root)}
        while stack:
            node, pending = stack[-1]
            for dep in pending:
                if id(dep) not in done and id(dep) not in active:
                    stack.append((dep, iter(needs(dep))))
                    active.add(id(dep))
                    break
            else:
                stack.pop()
                active.discard(id(node))
                done.add(id(node))
                out.append(node)
    return out


def repaired_order(ordered: list[Node]) -> list[Node]:
    """`ordered` when every node comes after the producers it needs, else the nearest order where they do."""
    done: set[Node] = set()
    for node in ordered:
        for v in node.needs():
            p = v.producer
            if p is not None and p not in done and p is not node:
                return stable_topological(ordered, _producers_needed)
        done.add(node)
    return ordered


def _producers_needed(node: Node) -> list[Node]:
    return [v.producer for v in node.needs() if v.producer is not None and v.producer is not node]


def name_nodes(graph: onnx.GraphProto) -> None:
    """Gives every node (bodies too) its static id as name, so node paths survive the rewrites."""
    for node, node_id in zip(graph.node, node_ids(graph)):
        node.name = node_id
        if len(node.attribute):
            for _, body in subgraph_attributes(node):
                name_nodes(body)


def all_names(graph: onnx.GraphProto, names: set[str]) -> None:
    """Adds every name a graph and its bodies use (values and nodes) to `names`."""
    names.update(i.name for i in graph.input)
    names.update(o.name for o in graph.output)
    names.update(v.name for v in graph.value_info)
    names.update(t.name for t in graph.initializer)
    for node in graph.node:
        names.add(node.name)
        names.update(node.input)
        names.update(node.output)
        if len(node.attribute):
            for _, body in subgraph_attributes(node):
                all_names(body, names)
