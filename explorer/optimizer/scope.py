"""Renaming values across nested graphs, respecting the scope rules of ONNX bodies (inner definitions shadow)."""
from __future__ import annotations

from collections.abc import Callable, Iterable

import onnx

from ..graph import GraphRef, free_names, subgraph_attributes


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
        bodies = [att.g] if att.type == onnx.AttributeProto.GRAPH else list(att.graphs)
        for body in bodies:
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


def stable_topological(nodes: Iterable[onnx.NodeProto],
                       needs: Callable[[onnx.NodeProto], Iterable[onnx.NodeProto]]) -> list[onnx.NodeProto]:
    """`nodes` reordered so each comes after the nodes it `needs`, otherwise keeping the given order."""
    done: set[int] = set()
    out: list[onnx.NodeProto] = []
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
