"""Keeping an optimized model within its size limit: the original's bytes plus SIZE_MARGIN.

Constant folding spends a byte budget as it goes (fold.py); what remains to trim at the end is what the optimizer
writes besides nodes: value_info entries it inferred (the original did not declare them) and the names it gave
to nodes that had none. Both only help a reader, so they go first when the file would grow past the limit.
"""
from __future__ import annotations

from collections.abc import Iterator

import onnx

from ..budgets import SIZE_MARGIN
from ..model.model_inference import model_bytes
from ..proto.graph import subgraph_attributes
from ..proto.graph_index import GraphIndex


def graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """A graph and every body nested in it."""
    yield graph
    for node in graph.node:
        if len(node.attribute):
            for _, body in subgraph_attributes(node):
                yield from graphs(body)


def size_limit(original_bytes: int) -> int:
    return int(original_bytes * (1 + SIZE_MARGIN))


def drop_value_info(model: onnx.ModelProto, declared: set[str]) -> None:
    """Removes, in place, the value_info entries whose names are not in `declared` (those the original had)."""
    for graph in graphs(model.graph):
        kept = [info for info in graph.value_info if info.name in declared]
        if len(kept) != len(graph.value_info):
            del graph.value_info[:]
            graph.value_info.extend(kept)


def fit_size(model: onnx.ModelProto, limit: int, declared: set[str], named: set[str]) -> dict[str, str]:
    """Trims `model` in place toward `limit` bytes: first the value_info entries not in `declared` (those the
    original had), then the node names not in `named` (names nodes had in the original). Returns, for the nodes
    whose paths that changed, path before -> path after (GraphIndex's, which names unnamed nodes by position)."""
    if model_bytes(model) <= limit:
        return {}
    drop_value_info(model, declared)
    if model_bytes(model) <= limit:
        return {}
    before = list(GraphIndex(model.graph).nodes)
    for graph in graphs(model.graph):
        for node in graph.node:
            if node.name not in named:
                node.name = ""
    return {old: new for old, new in zip(before, GraphIndex(model.graph).nodes) if old != new}
