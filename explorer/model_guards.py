"""Structural checks made while loading, before anything trusts the model's own numbers: graph nesting depth
(checked without recursion), sparse tensors (sizes, indices), numeric fields of external-data entries."""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx

from .errors import ModelError
from .graph import subgraph_attributes
from .limits import Limits

MAX_GRAPH_DEPTH = 24  # bodies inside bodies (real models nest a few levels; protobuf stops near 30)
# onnx's shape inference re-reads the enclosing scopes for every body: its time grows as nodes x bodies (a
# 20,000-node model with 1,665 bodies took 20 s). Past this budget a model keeps only its declared types.
INFERENCE_BUDGET = 10_000_000


def _subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    for att in node.attribute:
        if att.HasField("g"):
            yield att.g
        yield from att.graphs


def check_depth(proto: onnx.ModelProto, label: str) -> None:
    """ModelError when bodies nest deeper than MAX_GRAPH_DEPTH (walked with a stack: no RecursionError)."""
    stack = [(proto.graph, 0)] + [(onnx.GraphProto(node=f.node), 0) for f in proto.functions]
    while stack:
        graph, depth = stack.pop()
        if depth > MAX_GRAPH_DEPTH:
            raise ModelError(f"{label} nests bodies more than {MAX_GRAPH_DEPTH} levels deep")
        for node in graph.node:
            stack.extend((body, depth + 1) for body in _subgraphs(node))


def inference_too_costly(proto: onnx.ModelProto) -> str | None:
    """Why shape inference is skipped (a warning), or None when it is affordable (see INFERENCE_BUDGET)."""
    nodes = bodies = 0
    stack = [proto.graph]
    while stack:
        graph = stack.pop()
        nodes += len(graph.node)
        for node in graph.node:
            found = list(_subgraphs(node))
            bodies += len(found)
            stack.extend(found)
    if nodes * bodies <= INFERENCE_BUDGET:
        return None
    return (f"shape inference skipped: {nodes} nodes in {bodies} bodies would keep onnx busy for long; types "
            "shown are those the model declares")


def sparse_tensors(proto: onnx.ModelProto) -> Iterator[onnx.SparseTensorProto]:
    """Sparse initializers and sparse tensor attributes of every graph and function (iteratively)."""
    graphs = [proto.graph]
    nodes = [n for f in proto.functions for n in f.node]
    while graphs or nodes:
        if graphs:
            graph = graphs.pop()
            yield from graph.sparse_initializer
            nodes.extend(graph.node)
            continue
        node = nodes.pop()
        for att in node.attribute:
            if att.HasField("sparse_tensor"):
                yield att.sparse_tensor
            yield from att.sparse_tensors
        graphs.extend(_subgraphs(node))


def check_sparse(sparse: onnx.SparseTensorProto, limits: Limits | None = None) -> None:
    """ModelError naming the tensor when its dense size passes the limit or its indices do not fit its dims."""
    name = sparse.values.name or "<sparse>"
    max_bytes = (limits or Limits()).max_tensor_bytes
    dims = list(sparse.dims)
    if any(d < 0 for d in dims):
        raise ModelError(f"sparse tensor {name!r} has negative dims {dims}")
    elem = sparse.values.data_type
    try:
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem)).itemsize
    except (KeyError, TypeError, ValueError):
        raise ModelError(f"sparse tensor {name!r} has an unknown element type {elem}") from None
    dense = int(np.prod(dims, dtype=object)) if dims else 1
    if dense * itemsize > max_bytes:
        raise ModelError(f"sparse tensor {name!r} has dims {dims}: {dense * itemsize} bytes dense, beyond "
                         f"Limits.max_tensor_bytes={max_bytes}")
    try:
        values = onnx.numpy_helper.to_array(sparse.values)
        indices = onnx.numpy_helper.to_array(sparse.indices)
    except Exception as exc:  # noqa: BLE001 - any malformed part is the model's fault
        raise ModelError(f"sparse tensor {name!r} is malformed: {exc}") from None
    if values.ndim != 1:
        raise ModelError(f"sparse tensor {name!r}: values must be 1-D, got shape {list(values.shape)}")
    count = values.shape[0]
    if indices.dtype != np.int64:
        raise ModelError(f"sparse tensor {name!r}: indices must be int64, got {indices.dtype}")
    if indices.shape == (count,):
        bound = dense
    elif indices.shape == (count, len(dims)):
        bound = None
    else:
        raise ModelError(f"sparse tensor {name!r}: indices of shape {list(indices.shape)} do not match "
                         f"{count} values and rank {len(dims)}")
    if bound is not None and count and (indices.min() < 0 or indices.max() >= bound):
        raise ModelError(f"sparse tensor {name!r}: an index lies outside [0, {bound})")
    if bound is None and count and ((indices < 0).any() or (indices >= np.asarray(dims)).any()):
        raise ModelError(f"sparse tensor {name!r}: an index lies outside its dims {dims}")


def check_domains(proto: onnx.ModelProto, known: frozenset[str]) -> None:
    """ModelError naming the node whose domain the model does not import (and no local function defines)."""
    declared = {op.domain for op in proto.opset_import}
    functions = {(f.domain, f.name) for f in proto.functions}
    function_domains = {f.domain for f in proto.functions}

    def visit(graph: onnx.GraphProto, where: str) -> None:
        for node in graph.node:
            domain = node.domain
            if domain not in ("", "ai.onnx") and domain not in declared and domain not in function_domains:
                raise ModelError(
                    f"node {node.name or node.op_type!r} ({node.op_type}) in {where} uses domain {domain!r}, "
                    f"which the model does not import (imports: {sorted(declared)})"
                )
            if domain not in known and (domain, node.op_type) not in functions and domain not in declared:
                raise ModelError(f"unknown domain {domain!r} used by node {node.name or node.op_type!r}")
            for att, body in subgraph_attributes(node):
                visit(body, f"{where} > {node.name or node.op_type}.{att}")

    visit(proto.graph, "the main graph")


def external_int(info: dict[str, str], key: str, tensor: str) -> int | None:
    """An external-data entry's offset or length as an int (None when absent); ModelError when not a number."""
    text = info.get(key)
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ModelError(f"tensor {tensor!r}: external data {key} {text[:40]!r} is not a number") from None
