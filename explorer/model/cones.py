"""What flows into a node: its cone within its own graph (the nodes computing its inputs there), and everything
upstream of it across graphs (through body inputs and captured values, out to the graph inputs)."""
from __future__ import annotations

from ..proto.graph_index import GraphIndex
from .model import Model


def _read_names(index: GraphIndex, path: str) -> list[str]:
    """The names a node reads: its inputs and what its bodies capture."""
    ref = index.nodes[path]
    names = [n for n in ref.proto.input if n]
    for body in ref.subgraphs:
        names += index.captures(body.path)
    return list(dict.fromkeys(names))


def cone(model: Model, node_path: str, stop: frozenset[str] = frozenset()) -> list[str]:
    """The nodes of `node_path`'s graph whose values it reads, directly or not, and itself, in graph order; the
    values named in `stop` are taken as given (their producers are not followed)."""
    index = model.index
    graph_path = index.nodes[node_path].graph.path
    found = {node_path}
    stack = [node_path]
    while stack:
        for name in _read_names(index, stack.pop()):
            if name in stop:
                continue
            definition = index.definition(graph_path, name)
            if definition is not None and definition.node is not None and definition.node not in found:
                found.add(definition.node)
                stack.append(definition.node)
    return sorted(found, key=lambda p: index.nodes[p].index)


def upstream(model: Model, node_path: str) -> set[str]:
    """Every node whose values reach `node_path`, in any graph, with the control-flow nodes holding it."""
    index = model.index
    found: set[str] = set()
    stack = [node_path]
    while stack:
        path = stack.pop()
        if path in found:
            continue
        found.add(path)
        ref = index.nodes[path]
        if ref.graph.owner is not None:
            stack.append(ref.graph.owner)
        for name in _read_names(index, path):
            definition = index.resolve(name, ref.graph.path)
            if definition is not None and definition.kind == "node" and definition.node is not None:
                stack.append(definition.node)
    return found
