"""Structural checks made while loading, before anything trusts the model's own numbers: graph nesting depth
(checked without recursion), sparse tensors (sizes, indices), node domains, numeric fields of external-data
entries; all read from one walk over the model (`survey`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx

from ..budgets import INFERENCE_BUDGET, MAX_GRAPH_DEPTH
from ..errors import ModelError
from ..limits import Limits
from ..proto.weights import tensor_value


@dataclass
class Survey:
    """What loading checks, gathered in one walk over every graph: the main graph with its nested bodies, and the
    local functions' nodes with theirs (reading protobuf fields costs as much as the checks themselves: a
    20,000-node model walked once per check took 0.3 s)."""

    tensors: list[onnx.TensorProto] = field(default_factory=list)  # initializers, tensor attributes, sparse parts
    sparse: list[onnx.SparseTensorProto] = field(default_factory=list)  # sparse initializers and attributes
    foreign: list[tuple[onnx.NodeProto, str]] = field(default_factory=list)  # nodes of a domain not ai.onnx, where
    value_info: set[str] = field(default_factory=set)  # names with a value_info entry (main graph and its bodies)
    nodes: int = 0  # in the main graph and its bodies
    bodies: int = 0  # graphs nested in the main graph
    # a name some node output defines in two graphs of the main graph (e.g. both branches of an If, as optimum's
    # merged decoders have): onnx's data propagation keeps one value per name across graphs and mixes them up
    shared_name: str | None = None


def survey(proto: onnx.ModelProto, label: str) -> Survey:
    """The model's Survey; ModelError when bodies nest deeper than MAX_GRAPH_DEPTH (walked with a stack: no
    RecursionError)."""
    found = Survey()
    # (a graph, or a local function's nodes; nesting depth; where it is in the main graph, "" in a function)
    stack: list[tuple[onnx.GraphProto | onnx.FunctionProto, int, str]] = [(proto.graph, 0, "the main graph")]
    stack += [(function, 0, "") for function in proto.functions]
    defined: set[str] = set()
    while stack:
        graph, depth, where = stack.pop()
        if depth > MAX_GRAPH_DEPTH:
            raise ModelError(f"{label} nests bodies more than {MAX_GRAPH_DEPTH} levels deep")
        if isinstance(graph, onnx.GraphProto):
            found.tensors.extend(graph.initializer)
            found.sparse.extend(graph.sparse_initializer)
        if where:
            found.value_info.update(info.name for info in graph.value_info)
            found.nodes += len(graph.node)
            if found.shared_name is None:
                found.shared_name = _redefined(graph, defined)
        for node in graph.node:
            if where and node.domain not in ("", "ai.onnx"):
                found.foreign.append((node, where))
            if not node.attribute:
                continue
            for att in node.attribute:
                if att.HasField("t"):
                    found.tensors.append(att.t)
                found.tensors.extend(att.tensors)
                if att.HasField("sparse_tensor"):
                    found.sparse.append(att.sparse_tensor)
                found.sparse.extend(att.sparse_tensors)
                bodies = ([(att.name, att.g)] if att.HasField("g") else [])
                bodies += [(f"{att.name}[{i}]", g) for i, g in enumerate(att.graphs)]
                if where:
                    found.bodies += len(bodies)
                owner = f"{where} > {node.name or node.op_type}" if where else ""
                stack.extend((body, depth + 1, owner and f"{owner}.{name}") for name, body in bodies)
    found.tensors.extend(tensor for sparse in found.sparse for tensor in (sparse.values, sparse.indices))
    return found


def _redefined(graph: onnx.GraphProto, defined: set[str]) -> str | None:
    """The first node output of `graph` already in `defined` (names other graphs define), else None; adds the
    graph's node outputs to `defined`."""
    for node in graph.node:
        for name in node.output:
            if name in defined:
                return name
            defined.add(name)
    return None


def inference_too_costly(found: Survey) -> str | None:
    """Why shape inference is skipped (a warning), or None when it is affordable (see INFERENCE_BUDGET)."""
    if found.nodes * found.bodies <= INFERENCE_BUDGET:
        return None
    return (f"shape inference skipped: {found.nodes} nodes in {found.bodies} bodies would keep onnx busy for long; "
            "types shown are those the model declares")


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
        values = tensor_value(sparse.values)
        indices = tensor_value(sparse.indices)
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


IMPLIED_DOMAINS = {"com.microsoft": 1}
"""Domains onnxruntime imports at their latest version when a model uses them without importing them (as
onnxruntime's own convert_generation writes its T5 BeamSearch)."""


def import_implied_domains(proto: onnx.ModelProto, foreign: list[tuple[onnx.NodeProto, str]]) -> list[str]:
    """Imports each of IMPLIED_DOMAINS that a node uses and the model does not import; one warning each."""
    declared = {op.domain for op in proto.opset_import}
    warnings = []
    for domain in sorted({node.domain for node, _ in foreign} & set(IMPLIED_DOMAINS) - declared):
        proto.opset_import.append(onnx.helper.make_opsetid(domain, IMPLIED_DOMAINS[domain]))
        warnings.append(f"the model uses domain {domain!r} without importing it: imported at version "
                        f"{IMPLIED_DOMAINS[domain]}, as onnxruntime does")
    return warnings


def check_domains(proto: onnx.ModelProto, foreign: list[tuple[onnx.NodeProto, str]], known: frozenset[str]) -> None:
    """ModelError naming the node (of `foreign`: the nodes outside the ONNX domain, with where they are) whose
    domain the model does not import (and no local function defines)."""
    declared = {op.domain for op in proto.opset_import}
    functions = {(f.domain, f.name) for f in proto.functions}
    function_domains = {f.domain for f in proto.functions}
    for node, where in foreign:
        domain = node.domain
        if domain not in declared and domain not in function_domains:
            raise ModelError(
                f"node {node.name or node.op_type!r} ({node.op_type}) in {where} uses domain {domain!r}, "
                f"which the model does not import (imports: {sorted(declared)})"
            )
        if domain not in known and (domain, node.op_type) not in functions and domain not in declared:
            raise ModelError(f"unknown domain {domain!r} used by node {node.name or node.op_type!r}")


def external_int(info: dict[str, str], key: str, tensor: str) -> int | None:
    """An external-data entry's offset or length as an int (None when absent); ModelError when not a number."""
    text = info.get(key)
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ModelError(f"tensor {tensor!r}: external data {key} {text[:40]!r} is not a number") from None
