"""The module hierarchy an exporter wrote into a graph: the module path of each node, read once per graph.

Where it is read from, first found first:

- dynamo's node metadata: `pkg.torch.onnx.name_scopes` (`['', 'encoder', 'encoder.layer.0', 'linear_3']`: each
  module's qualified name, then the node's own), else `namespace` (`: Top/encoder: Encoder/linear_3: aten…`);
- scoped node names: TorchScript's and optimum's `/transformer/h.0/attn/MatMul`, tf2onnx's
  `model/gru/while/MatMul` (all but the last part).

Nodes the exporter left without a scope join a layer by their dataflow: a constant (a Constant, or a node reading
only initializers and constants, such as TorchScript's `Identity_204` of a tied weight) joins the deepest module
all its consumers share, so that a layer's constants sit inside its box instead of in a row above the whole model;
any other node whose name says nothing (tf2onnx's `LSTM__2489`) joins the deepest module its producers share. A
name written with a leading `/` and no scope (`/Relu`) is the top level's, as written.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence

import onnx

from ..proto.graph import GraphRef

Parts = tuple[str, ...]
DYNAMO_SCOPES = "pkg.torch.onnx.name_scopes"
DYNAMO_NAMESPACE = "namespace"


def scope_parts(name: str) -> Parts:
    """The scope path of a node name: `/encoder/layer.0/attn/MatMul` -> ("encoder", "layer.0", "attn")."""
    if "/" not in name:
        return ()
    return tuple(p for p in name.split("/")[:-1] if p)


def relative(qualified: Sequence[str]) -> Parts:
    """Module names from qualified ones, each relative to its parent: ["encoder", "encoder.layer.0"] ->
    ("encoder", "layer.0"); a name that does not extend its parent's stays whole."""
    out: list[str] = []
    parent = ""
    for name in qualified:
        if not name:
            continue
        out.append(name[len(parent) + 1:] if parent and name.startswith(parent + ".") else name)
        parent = name
    return tuple(out)


def metadata_parts(node: onnx.NodeProto) -> Parts | None:
    """The module path dynamo wrote in a node's metadata, None when it wrote none."""
    meta = {entry.key: entry.value for entry in node.metadata_props}
    text = meta.get(DYNAMO_SCOPES)
    if text is not None:
        try:
            scopes = [str(s) for s in ast.literal_eval(text)]
        except (ValueError, SyntaxError, TypeError):
            return None
        return relative(scopes[:-1])  # the last one is the node's own (an aten call), not a module
    namespace = meta.get(DYNAMO_NAMESPACE)  # ": Top/encoder: Encoder/linear_3: aten.linear.default"
    if namespace is None:
        return None
    return relative([segment.split(":")[0].strip() for segment in namespace.split("/")][:-1])


def _common(paths: list[Parts]) -> Parts:
    common = paths[0]
    for other in paths[1:]:
        k = 0
        while k < min(len(common), len(other)) and common[k] == other[k]:
            k += 1
        common = common[:k]
    return common


def module_paths(graph: GraphRef) -> list[Parts]:
    """The module path of each node of a graph, in node order (() for the top level)."""
    nodes = list(graph.proto.node)
    dynamo = any(e.key in (DYNAMO_SCOPES, DYNAMO_NAMESPACE) for n in nodes for e in n.metadata_props)
    known: list[Parts | None] = []
    for node in nodes:
        if dynamo:
            known.append(metadata_parts(node))
        else:
            known.append(scope_parts(node.name) if "/" in node.name else None)
    constant = constant_nodes(graph)
    producer: dict[str, int] = {}
    for i, node in enumerate(nodes):  # what a name does not say, its producers do
        if known[i] is None and not constant[i]:
            sources = [known[producer[v]] for v in node.input if v in producer]
            scoped = [s for s in sources if s is not None]
            if scoped:
                known[i] = _common(scoped)
        for value in node.output:
            producer[value] = i
    consumers: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        for value in node.input:
            consumers.setdefault(value, []).append(i)
    for i in range(len(nodes) - 1, -1, -1):  # a constant joins its consumers (later nodes, done first)
        if known[i] is None and constant[i]:
            users = [known[j] for value in nodes[i].output for j in consumers.get(value, ())]
            scoped = [u for u in users if u is not None]
            known[i] = _common(scoped) if scoped and len(scoped) == len(users) else ()
    return [k if k is not None else () for k in known]


def constant_nodes(graph: GraphRef) -> list[bool]:
    """Whether each node computes a constant: no input but initializers and other constants' outputs (a body's
    nodes reading an outer value are no constants)."""
    fixed = {t.name for t in graph.proto.initializer} | {t.name for t in graph.proto.sparse_initializer}
    fixed -= {v.name for v in graph.proto.input}  # an initializer that is also an input can be fed
    out = []
    for node in graph.proto.node:
        is_constant = not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                              for a in node.attribute) and all(not v or v in fixed for v in node.input)
        if is_constant:
            fixed.update(v for v in node.output if v)
        out.append(is_constant)
    return out
