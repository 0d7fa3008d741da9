"""What the node inspector shows: attributes, declared input/output types, and the values each execution
produced."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from ..graph import GraphRef
from ..model import Model, value_spec
from ..trace import Trace
from ..values import describe
from .cursor import node_label
from .tables import short_text

MAX_INLINE_VALUES = 16


@dataclass(frozen=True)
class Port:
    """One input or output of a node: value name and its declared type (`?` when nothing declares it)."""

    name: str
    type: str


@dataclass(frozen=True)
class NodeDetails:
    path: str
    label: str
    op_type: str
    domain: str
    attributes: list[tuple[str, str]]
    inputs: list[Port]
    outputs: list[Port]
    bodies: list[str]  # graph paths of the node's subgraphs


def declared_types(model: Model, graph: GraphRef) -> dict[str, str]:
    """value name -> type text for every value visible in a graph: its own and every enclosing graph's
    inputs, outputs, value_info and initializers (inner declarations win)."""
    chain = [graph]
    while chain[-1].owner is not None:
        chain.append(model.node(chain[-1].owner).graph)
    types: dict[str, str] = {}
    for g in reversed(chain):
        proto = g.proto
        for tensor in proto.initializer:
            dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)
            types[tensor.name] = f"tensor({np.dtype(dtype).name}) [{', '.join(map(str, tensor.dims))}] (initializer)"
        for info in [*proto.input, *proto.value_info, *proto.output]:
            if info.type.WhichOneof("value") is not None:
                types[info.name] = value_spec(info).describe()
    return types


def format_attribute(attribute: onnx.AttributeProto) -> str:
    """Readable text of one attribute value: numbers, strings, small tensors inline, graphs by size."""
    kind = attribute.type
    if kind == onnx.AttributeProto.GRAPH:
        return f"graph {attribute.g.name!r} ({len(attribute.g.node)} nodes)"
    if kind == onnx.AttributeProto.GRAPHS:
        return ", ".join(f"graph {g.name!r} ({len(g.node)} nodes)" for g in attribute.graphs)
    if kind == onnx.AttributeProto.TENSOR:
        return _tensor_text(numpy_helper.to_array(attribute.t))
    if kind == onnx.AttributeProto.TENSORS:
        return "; ".join(_tensor_text(numpy_helper.to_array(t)) for t in attribute.tensors)
    value = onnx.helper.get_attribute_value(attribute)
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, list):
        return "[" + ", ".join(v.decode("utf-8", "backslashreplace") if isinstance(v, bytes) else repr(v)
                               for v in value) + "]"
    return repr(value)


def _tensor_text(array: np.ndarray) -> str:
    text = describe(array)
    if array.size <= MAX_INLINE_VALUES:
        text += " = " + np.array2string(array, separator=", ", threshold=MAX_INLINE_VALUES)
    return text


def node_details(model: Model, path: str) -> NodeDetails:
    """Everything static the inspector shows about one node."""
    node = model.node(path)
    types = declared_types(model, node.graph)
    return NodeDetails(
        path=path,
        label=node_label(node),
        op_type=node.op_type,
        domain=node.domain or "ai.onnx",
        attributes=[(a.name, format_attribute(a)) for a in node.proto.attribute],
        inputs=[Port(n, types.get(n, "?")) for n in node.proto.input if n],
        outputs=[Port(n, types.get(n, "?")) for n in node.proto.output if n],
        bodies=[g.path for g in node.subgraphs],
    )


def executions(trace: Trace, path: str) -> list[dict[str, Any]]:
    """One row per execution of a node (per iteration inside loops): event index, iteration, time, and a
    short description of every output it produced."""
    rows = []
    for event in trace.events_of(path):
        row: dict[str, Any] = {"event": event.index, "iteration": str(event.iteration or "—"),
                               "ms": round(event.seconds * 1e3, 3)}
        row.update({name: short_text(value) for name, value in event.outputs.items()})
        rows.append(row)
    return rows


def node_choices(model: Model) -> dict[str, str]:
    """node path -> searchable label (`path · Op`) for every node of every graph."""
    return {ref.path: f"{ref.path} · {ref.op_type}" for ref in model.nodes()}
