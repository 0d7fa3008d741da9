"""Which node of one model is which node of another when names do not say (a re-export that renamed
everything, an optimized model): the producer chains. Walking model A in document order (a node before its
bodies), a node matches the first unmatched node of model B with the same op type whose inputs come from the
counterparts of its own inputs' producers. Graph inputs match by name (else by position), constants by shape
(a Constant node by its content, compared in float16; a small integer initializer by its content too), a body's formal inputs by position under matched
owners; nodes already paired by name seed the walk."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx

from ..model.model import Model
from ..proto.graph_index import GraphIndex
from ..proto.weights import tensor_value

Token = tuple
INTEGER_TYPES = frozenset({onnx.TensorProto.INT64, onnx.TensorProto.INT32})
Resolve = Callable[[str], str | None]  # a node path of A -> its counterpart in B (None when unknown)


class _Scopes:
    """Where each name a node reads comes from, as a token independent of names."""

    def __init__(self, model: Model, feeds: dict[str, str]) -> None:
        self.index: GraphIndex = model.index
        self.feeds = feeds  # graph input name -> the name it goes by in model B
        self.fed = {i.name for i in self.index.graphs[""].proto.input}  # an initializer listed here is a feed

    def token(self, graph_path: str, name: str, resolve: Resolve) -> Token:
        if not name:
            return ("none",)
        found = self.index.resolve(name, graph_path)
        if found is None:
            return ("unknown", name)
        graph = found.graph
        if found.node is not None:
            node = self.index.nodes[found.node]
            if node.op_type == "Constant":
                return ("const", _constant(node.proto)[0])
            return ("node", resolve(found.node), list(node.proto.output).index(name))
        if not graph.path and name in self.fed:
            return ("feed", self.feeds.get(name, name))
        if found.kind == "input":
            return ("formal", resolve(graph.owner or ""), graph.attribute, found.index)
        return ("const", _initializer(found.tensor) if found.tensor is not None else ())

    def signature(self, path: str, resolve: Resolve) -> Token:
        node = self.index.nodes[path]
        if node.op_type == "Constant":
            return ("Constant", node.graph.depth, _constant(node.proto))
        return (node.op_type, node.graph.depth,
                tuple(self.token(node.graph.path, name, resolve) for name in node.proto.input))


def _constant(proto: onnx.NodeProto) -> tuple[tuple[int, ...], int]:
    """A Constant's shape and a fingerprint of its content that survives a float16 conversion (floats are
    compared as float16, whatever their precision)."""
    for att in proto.attribute:
        if att.name in ("sparse_value",):
            return (), 0
        value = np.asarray(tensor_value(att.t) if att.type == onnx.AttributeProto.TENSOR
                           else onnx.helper.get_attribute_value(att))
        if value.dtype.kind in "fV":
            with np.errstate(over="ignore"):
                data = value.astype(np.float32).astype(np.float16).tobytes()
        else:
            data = value.tobytes() if value.dtype.kind in "biu" else repr(value.tolist()).encode()
        return tuple(value.shape), hash(data)
    return (), 0


def _initializer(tensor: onnx.TensorProto) -> tuple:
    """An initializer's dims, with its contents when it is a small integer tensor (a node's parameters: axes,
    starts, a target shape), whose values say what the node does; weights match by shape alone."""
    if tensor.data_type in INTEGER_TYPES and int(np.prod(tensor.dims)) <= 64:
        return tuple(tensor.dims), tuple(tensor_value(tensor).reshape(-1).tolist())
    return tuple(tensor.dims)


def other_constant(a: Model, b: Model, node_a: str, node_b: str) -> bool:
    """Both nodes are Constants and hold different contents (compared in float16)."""
    ref_a, ref_b = a.index.nodes.get(node_a), b.index.nodes.get(node_b)
    if ref_a is None or ref_b is None or ref_a.op_type != "Constant" or ref_b.op_type != "Constant":
        return False
    return _constant(ref_a.proto) != _constant(ref_b.proto)


def match_nodes(a: Model, b: Model, seeds: dict[str, str]) -> dict[str, str]:
    """Node path of A -> node path of B, extending `seeds` (pairs already known by name)."""
    inputs_a, inputs_b = [i.name for i in a.graph.input], [i.name for i in b.graph.input]
    by_position = dict(zip(inputs_a, inputs_b)) if len(inputs_a) == len(inputs_b) else {}
    feeds = {name: name if name in inputs_b else by_position.get(name, name) for name in inputs_a}
    scopes_a, scopes_b = _Scopes(a, feeds), _Scopes(b, {})
    mapped = dict(seeds)
    taken = set(seeds.values())
    candidates: dict[Token, list[str]] = {}
    for path in b.index.nodes:
        candidates.setdefault(scopes_b.signature(path, lambda p: p), []).append(path)
    for path in a.index.nodes:
        if path in mapped:
            continue
        signature = scopes_a.signature(path, mapped.get)
        if _unresolved(signature):
            continue
        found = next((p for p in candidates.get(signature, []) if p not in taken), None)
        if found is not None:
            mapped[path] = found
            taken.add(found)
    return mapped


def _unresolved(signature: Token) -> bool:
    """A signature that reads a producer (or an owner) with no counterpart yet cannot match anything."""
    inputs = signature[2] if signature[0] != "Constant" else ()
    return any(t[0] in ("node", "formal") and t[1] is None for t in inputs)
