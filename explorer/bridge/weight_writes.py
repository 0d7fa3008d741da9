"""Writing new values of the weights some nodes read, wherever those nodes lie (inside a Loop's or Scan's body
too): a weight stored as an initializer that only those nodes read is rewritten in place; one that other nodes
read too, or that the graph computes or hands down into the body (tf2onnx passes a layer's kernel into its loop
as a carried value), is given to those nodes as a new initializer of their own graph, `<name>.fixed`."""
from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from ..model.model import Model

WeightKey = tuple[str, str]  # (node path, the name of the value it reads)


def graph_of(proto: onnx.ModelProto, model: Model, graph_path: str) -> onnx.GraphProto:
    """`proto`'s graph at `graph_path` of `model` (`proto` a copy of the model as given)."""
    if not graph_path:
        return proto.graph
    ref = model.index.graphs[graph_path]
    assert ref.owner is not None and ref.attribute is not None
    owner = node_of(proto, model, ref.owner)
    return next(a.g for a in owner.attribute if a.name == ref.attribute)


def node_of(proto: onnx.ModelProto, model: Model, path: str) -> onnx.NodeProto:
    """`proto`'s node at `path` of `model`, at any depth."""
    ref = model.node(path)
    return graph_of(proto, model, ref.graph.path).node[ref.index]


def _readers(model: Model, name: str) -> set[WeightKey]:
    return {(ref.path, name) for ref in model.nodes() if name in ref.proto.input}


def rewrite_weights(proto: onnx.ModelProto, model: Model, changes: dict[WeightKey, np.ndarray]) -> str:
    """Applies `changes` (node path and the value it reads -> its new value) to `proto`, a copy of `model` as
    given; returns why it could not, or ""."""
    by_name: dict[str, dict[WeightKey, np.ndarray]] = {}
    for key, value in changes.items():
        by_name.setdefault(key[1], {})[key] = value
    for name, wanted in by_name.items():
        values = list(wanted.values())
        same = all(v.shape == values[0].shape and np.array_equal(v, values[0]) for v in values)
        stored = _stored(proto, model, next(iter(wanted))[0], name)
        if stored is not None and same and _readers(model, name) == set(wanted):
            stored.CopyFrom(_tensor(values[0], stored, name))
            continue
        for (path, _), value in wanted.items():
            node = node_of(proto, model, path)
            graph = graph_of(proto, model, model.node(path).graph.path)
            fixed = _free_name(graph, f"{name}.fixed")
            dtype = _dtype(model, path, name, value)
            graph.initializer.append(numpy_helper.from_array(np.asarray(value).astype(dtype), fixed))
            for position, read in enumerate(node.input):
                if read == name:
                    node.input[position] = fixed
    return ""


def _stored(proto: onnx.ModelProto, model: Model, path: str, name: str) -> onnx.TensorProto | None:
    """The initializer `name` the node at `path` reads: of its own graph, else of the main graph."""
    graph = graph_of(proto, model, model.node(path).graph.path)
    for holder in (graph, proto.graph):
        found = next((t for t in holder.initializer if t.name == name), None)
        if found is not None:
            return found
    return None


def _tensor(value: np.ndarray, old: onnx.TensorProto, name: str) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value).astype(numpy_helper.to_array(old).dtype), name)


def _dtype(model: Model, path: str, name: str, value: Any) -> np.dtype:
    declared = model.index.value_type(name, model.node(path).graph.path)
    if declared is not None and declared.HasField("tensor_type") and declared.tensor_type.elem_type:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(declared.tensor_type.elem_type))
    return np.asarray(value).dtype


def _free_name(graph: onnx.GraphProto, wanted: str) -> str:
    taken = {t.name for t in graph.initializer} | {i.name for i in graph.input} | \
        {o for n in graph.node for o in n.output}
    name, k = wanted, 1
    while name in taken:
        k += 1
        name = f"{wanted}{k}"
    return name


def replace_initializers(proto: onnx.ModelProto, replace: dict[str, Any]) -> str:
    """Gives initializers of `proto`'s main graph new values (name -> value, in each one's own dtype); returns why
    it could not, or ""."""
    stored = {t.name: t for t in proto.graph.initializer}
    missing = [name for name in replace if name not in stored]
    if missing:
        return f"{', '.join(missing)} is not stored in the main graph"
    for name, value in replace.items():
        stored[name].CopyFrom(_tensor(value, stored[name], name))
    return ""
