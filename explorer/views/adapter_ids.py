"""Where Model Explorer's ONNX adapter (the `model-explorer-onnx` package) puts each of explorer's nodes: the id of
the graph it draws the node in and the node's id there.

The adapter first names every node as onnx_ir's `NameFixPass` does: in one depth-first walk over the main graph and
its bodies (a node, then its bodies, then the next node), a node keeps its name unless that is empty ("node") or
already taken in its own graph; a name taken gets `_1`, `_2`, ... from one counter per base name shared by the walk.
Then If branches are flattened into the graph holding the If, their nodes renamed `<if>/<branch>/<node>`, and the
bodies of the main graph's nodes become graphs of their own named `<node>/<attribute>`; deeper bodies are not drawn.
The main graph's id is its name, or `<main>` when it has none."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import onnx

from ..proto.graph import node_ids, subgraph_attributes

MAIN = "<main>"


@dataclass(frozen=True)
class Placement:
    """A node as the adapter draws it: the graph id and the node id within that graph."""

    graph: str
    node: str


def adapter_placements(proto: onnx.ModelProto) -> dict[str, Placement]:
    """Explorer's node path -> where the adapter draws that node (nodes the adapter does not draw are absent)."""
    counter: Counter[str] = Counter()
    found: dict[str, Placement] = {}
    main = proto.graph.name or MAIN

    def unique(name: str, used: set[str]) -> str:
        candidate = name
        while candidate in used:
            counter[name] += 1
            candidate = f"{name}_{counter[name]}"
        used.add(candidate)
        return candidate

    def walk(graph: onnx.GraphProto, prefix: str, graph_id: str | None, id_prefix: str, top: bool) -> None:
        used: set[str] = set()
        for node, own in zip(graph.node, node_ids(graph)):
            fixed = id_prefix + unique(node.name or "node", used)
            path = prefix + own
            if graph_id is not None:
                found[path] = Placement(graph_id, fixed)
            for attribute, body in subgraph_attributes(node):
                if node.op_type == "If" and node.domain in ("", "ai.onnx"):
                    walk(body, f"{path}/{attribute}/", graph_id, f"{fixed}/{attribute}/", top)
                else:
                    walk(body, f"{path}/{attribute}/", f"{fixed}/{attribute}" if top else None, "", False)

    walk(proto.graph, "", main, "", True)
    return found
