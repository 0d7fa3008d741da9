"""What the node inspector shows: attributes, declared input/output types, and the values each execution
produced."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np
import onnx

from ..model.model import Model, value_spec
from ..proto.graph import GraphRef
from ..proto.weights import tensor_value
from ..spec.contrib import OperatorDoc, operator_doc
from ..trace.trace import Trace
from ..trace.values import describe
from .cursor import node_label
from .draw_facts import ModelFacts
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
    doc: OperatorDoc | None = None  # onnxruntime's doc, for an operator of onnxruntime's own
    module: str = ""  # the module path the exporter wrote (layers.py), "" at the top level


def declared_type(model: Model, name: str, graph: GraphRef) -> str:
    """Type text of a value as read in `graph`, from the graph that declares it (inner declarations win),
    marked `(initializer)` when an initializer defines it; `?` when nothing declares it."""
    declared = model.index.value_type(name, graph.path)
    if declared is None:
        return "?"
    found = model.index.resolve(name, graph.path)
    text = value_spec(onnx.helper.make_value_info(name, declared)).describe()
    return f"{text} (initializer)" if found is not None and found.tensor is not None else text


def format_attribute(attribute: onnx.AttributeProto) -> str:
    """Readable text of one attribute value: numbers, strings, small tensors inline, graphs by size."""
    kind = attribute.type
    if kind == onnx.AttributeProto.GRAPH:
        return f"graph {attribute.g.name!r} ({len(attribute.g.node)} nodes)"
    if kind == onnx.AttributeProto.GRAPHS:
        return ", ".join(f"graph {g.name!r} ({len(g.node)} nodes)" for g in attribute.graphs)
    if kind == onnx.AttributeProto.TENSOR:
        return _tensor_text(tensor_value(attribute.t))
    if kind == onnx.AttributeProto.TENSORS:
        return "; ".join(_tensor_text(tensor_value(t)) for t in attribute.tensors)
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
    return NodeDetails(
        path=path,
        label=node_label(node),
        op_type=node.op_type,
        domain=node.domain or "ai.onnx",
        attributes=[(a.name, format_attribute(a)) for a in node.proto.attribute],
        inputs=[Port(n, declared_type(model, n, node.graph)) for n in node.proto.input if n],
        outputs=[Port(n, declared_type(model, n, node.graph)) for n in node.proto.output if n],
        bodies=[g.path for g in node.subgraphs],
        doc=operator_doc(node.op_type, node.domain, model.opsets.get("" if node.domain == "ai.onnx" else node.domain, 1)),
        module=ModelFacts.of(model).module_of(path),
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


_CHOICES: WeakKeyDictionary[Model, Mapping[str, str]] = WeakKeyDictionary()


def node_choices(model: Model) -> Mapping[str, str]:
    """node path -> searchable label (`path · Op`) for every node of every graph; made once per model (the
    selector asks at every rerun of a page, and a 20,000-node model's labels take a tenth of a second)."""
    found = _CHOICES.get(model)
    if found is None:
        found = _CHOICES[model] = MappingProxyType({ref.path: f"{ref.path} · {ref.op_type}" for ref in model.nodes()})
    return found
