"""Teacher forcing: a module's own error, apart from the error it was handed. The ONNX nodes between an aligned
point and the aligned points before it (its ancestors back to them, to the graph inputs and the weights) are run
again by explorer with the framework's values in place of those points' ONNX values (put back in the ONNX
layout); what comes out, held against the framework's value, is the error the point makes itself."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper

from ..errors import ExplorerError
from ..executor import run
from ..graph import free_names, subgraph_attributes
from ..model import Model, load
from .align import Point


@dataclass
class Forced:
    """The point's value computed from exact inputs (`value`, framework layout), the points it started from, and
    how far the values it was handed were from the framework's (largest abs error among them)."""

    value: np.ndarray | None
    frontier: list[Point] = field(default_factory=list)
    handed: float = 0.0
    nodes: int = 0
    note: str = ""


def _reads(node: onnx.NodeProto) -> list[str]:
    names = [n for n in node.input if n]
    for _, graph in subgraph_attributes(node):
        names += free_names(graph)
    return names


def force(model: Model, point: Point, before: list[Point], values: dict[str, np.ndarray],
          feeds: dict[str, Any], errors: dict[int, float]) -> Forced:
    """Reruns the nodes computing `point` from the framework's values of the aligned points in `before` (the
    latest point holding a value wins); `errors` holds each earlier point's abs error by id()."""
    assert point.onnx_value is not None
    frontier: dict[str, Point] = {}
    for p in before:
        if p.onnx_value is not None and p is not point:
            frontier[p.onnx_value] = p
    graph = model.as_given().graph
    producer = {name: node for node in graph.node for name in node.output}
    initializers = {t.name for t in graph.initializer}
    needed: list[onnx.NodeProto] = []
    seen: set[str] = set()
    used: dict[str, Point] = {}
    feeds_used: set[str] = set()
    stack = [point.onnx_value]
    while stack:
        name = stack.pop()
        if name in seen or not name:
            continue
        seen.add(name)
        if name in frontier:
            used[name] = frontier[name]
            continue
        if name in initializers:
            continue
        if name in feeds:
            feeds_used.add(name)
            continue
        node = producer.get(name)
        if node is None:
            continue
        if all(id(node) != id(n) for n in needed):
            needed.append(node)
            stack.extend(_reads(node))
    if point.onnx_value in used:  # the point holds the same value as an earlier one: nothing runs between them
        source = used[point.onnx_value]
        value = point.layout.to_framework(source.layout.to_onnx(source.framework, values[point.onnx_value].shape))
        return Forced(value, [source], errors.get(id(source), 0.0), 0)
    order = {id(node): k for k, node in enumerate(graph.node)}
    needed.sort(key=lambda node: order[id(node)])
    given: dict[str, Any] = {name: feeds[name] for name in feeds_used}
    for name, p in used.items():
        given[name] = p.layout.to_onnx(p.framework, values[name].shape).astype(values[name].dtype)
    inputs = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype),
                                            list(np.shape(v))) for name, v in given.items()]
    out_value = values[point.onnx_value]
    outputs = [helper.make_tensor_value_info(point.onnx_value, helper.np_dtype_to_tensor_dtype(out_value.dtype),
                                             None)]
    reads = {n for node in needed for n in _reads(node)}
    sub = helper.make_graph(needed, "forced", inputs, outputs,
                            [t for t in graph.initializer if t.name in reads])
    proto = helper.make_model(sub, opset_imports=list(model.proto.opset_import), ir_version=model.proto.ir_version)
    proto.functions.extend(model.proto.functions)
    handed = max((errors.get(id(p), 0.0) for p in used.values()), default=0.0)
    try:
        trace = run(load(proto), given)
    except ExplorerError as exc:
        return Forced(None, list(used.values()), handed, len(needed), f"the nodes could not run alone: {exc}")
    value = point.layout.to_framework(trace.outputs[point.onnx_value])
    return Forced(value, list(used.values()), handed, len(needed))
