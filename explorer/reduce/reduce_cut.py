"""One cut of a model around a departing value: the last `k` nodes of the value's cone in its own graph (a body
made standalone when the value departs inside a Loop, Scan or If), the values they read from elsewhere turned into
graph inputs holding what the run recorded at the departing iteration, and the constants they read (the graph's or
captured from outer graphs) kept as initializers, each side's own."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import CompareError
from ..model.model import Model
from ..proto.weights import is_external, mapped_place, tensor_value
from ..trace.trace import Trace


@dataclass
class Cut:
    """A standalone model of some nodes: its proto, the inputs it needs (name -> recorded value) and its output."""

    proto: onnx.ModelProto
    inputs: dict[str, np.ndarray]
    output: str
    nodes: list[str]
    model: Model  # the model it was cut from


def _read(model: Model, path: str) -> list[str]:
    ref = model.index.nodes[path]
    names = [n for n in ref.proto.input if n]
    for body in ref.subgraphs:
        names += model.index.captures(body.path)
    return names


def recorded_input(trace: Trace, nodes: list[str], name: str, iteration: tuple[int, ...]) -> Any:
    """What `name` held when the chosen nodes (or nodes inside their bodies) read it at `iteration`."""
    depth = len(iteration)
    for event in trace.events:
        if event.iteration[:depth] != iteration or name not in event.site.inputs:
            continue
        if any(event.node == n or event.node.startswith(n + "/") for n in nodes):
            return event.inputs[name]
    raise CompareError(f"no recorded value of {name!r} read at iteration {iteration}")


def _input_value(trace: Trace, nodes: list[str], name: str, iteration: tuple[int, ...], shared: Any) -> Any:
    """The value an input of the cut holds: `shared` (the first side's, so both cuts take one set of inputs)
    unless this side recorded a value of another type there (a float16 form), else this side's own."""
    try:
        own = recorded_input(trace, nodes, name, iteration)
    except CompareError:
        if shared is None:
            raise
        return shared
    if isinstance(shared, np.ndarray) and isinstance(own, np.ndarray) and shared.dtype == own.dtype \
            and shared.shape == own.shape:
        return shared
    return own


def _constant(tensor: onnx.TensorProto, name: str) -> onnx.TensorProto:
    """A copy of a constant holding its values (a mapped or external one's read from where they lie)."""
    if mapped_place(tensor) is None and not is_external(tensor):
        copy = onnx.TensorProto()
        copy.CopyFrom(tensor)
        return copy
    return numpy_helper.from_array(np.asarray(tensor_value(tensor)), name)


def _value_info(name: str, value: np.ndarray) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape))


def cut(model: Model, trace: Trace, nodes: list[str], output: str, iteration: tuple[int, ...],
        output_value: np.ndarray, inputs: dict[str, np.ndarray] | None = None) -> Cut:
    """The standalone model of `nodes` (all of one graph, in graph order) computing `output`. Constants they read
    come from `model`; other values are inputs holding what `trace` (this side's run) recorded at `iteration`, or
    the same name's value in `inputs` (the first side's cut) where it is of the same type and shape."""
    index = model.index
    graph_path = index.nodes[nodes[0]].graph.path
    written = {o for n in nodes for o in index.nodes[n].proto.output if o}
    needed = list(dict.fromkeys(name for n in nodes for name in _read(model, n) if name not in written))
    initializers: list[onnx.TensorProto] = []
    given: dict[str, np.ndarray] = {}
    for name in needed:
        definition = index.resolve(name, graph_path)
        if definition is not None and definition.kind == "initializer" and definition.tensor is not None \
                and (definition.graph.path or name not in {i.name for i in model.graph.input}):
            initializers.append(_constant(definition.tensor, name))
            continue
        value = _input_value(trace, nodes, name, iteration, (inputs or {}).get(name))
        if not isinstance(value, np.ndarray):
            raise CompareError(f"{name!r} is not a tensor ({type(value).__name__}): it cannot be an input")
        given[name] = value
    graph = helper.make_graph([index.nodes[n].proto for n in nodes], "reduced",
                              [_value_info(name, v) for name, v in given.items()],
                              [_value_info(output, np.asarray(output_value))], initializers)
    source = model.proto
    proto = helper.make_model(graph, opset_imports=list(source.opset_import), ir_version=source.ir_version,
                              producer_name="explorer reduce")
    proto.functions.extend(source.functions)
    return Cut(proto, given, output, nodes, model)


def renamed(proto: onnx.ModelProto, names: dict[str, str]) -> onnx.ModelProto:
    """A copy of a cut whose inputs (and every read of them, in bodies too) are renamed `old -> new`."""
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)

    def rename(graph: onnx.GraphProto) -> None:
        for node in graph.node:
            node.input[:] = [names.get(n, n) for n in node.input]
            for attribute in node.attribute:
                for body in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                    rename(body)

    for value in copy.graph.input:
        value.name = names.get(value.name, value.name)
    rename(copy.graph)
    return copy
