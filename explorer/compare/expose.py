"""Exposing values inside bodies to onnxruntime, which returns only graph outputs: a copy of the model in which
each chosen value travels outward as an extra output of every enclosing body. A Loop or Scan body emits it as
an extra scan output (stacked per iteration, outermost loop first); an If branch as an extra output, the other
branch emitting a placeholder of the same type and shape. The value at iteration tuple (i, j, ...) is then
the graph output's element [i, j, ...]."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..model.model import Model
from ..proto.graph import GENERATION_OPS
from ..proto.graph_index import FUNCTION_BODY, GraphIndex
from .recording import Key, Produced

PREFIX = "__explorer_exposed"


class NotExposable(Exception):
    """A value that cannot be made an output (a function body, Scan-8, a non-tensor inside a body...)."""


@dataclass(frozen=True)
class Exposed:
    proto: onnx.ModelProto
    outputs: dict[str, Key]  # graph output name -> the value it carries


def _sample(produced: Produced) -> np.ndarray:
    value = next(iter(produced.values.values()))
    if not isinstance(value, np.ndarray):
        raise NotExposable(f"{type(value).__name__} values inside bodies cannot be stacked as scan outputs")
    return value


def _typed(name: str, sample: np.ndarray) -> onnx.ValueInfoProto:
    """Element type and rank (onnxruntime's Scan wants a shape on every body output); sizes left symbolic."""
    dims = [f"{name}_{axis}" for axis in range(sample.ndim)]
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(sample.dtype), dims)


class _Exposer:
    def __init__(self, model: Model) -> None:
        self.proto = onnx.ModelProto()
        self.proto.CopyFrom(model.proto)
        functions = {(f.domain, f.name): f for f in self.proto.functions}
        self.index = GraphIndex(self.proto.graph, functions)  # the copy's graphs: edits land in the copy
        self.opset = model.opsets.get("", 1)
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"{PREFIX}_{self.count}"

    def emit(self, graph: onnx.GraphProto, name: str, sample: np.ndarray) -> str:
        """Adds `name` (through an Identity, so a name already emitted can be emitted again) as an output."""
        out = self.fresh()
        graph.node.append(helper.make_node("Identity", [name], [out], name=out))
        graph.output.append(_typed(out, sample))
        return out

    def expose(self, produced: Produced) -> str:
        ref = self.index.nodes.get(produced.node)
        if ref is None:
            raise NotExposable("not a node of this model")
        if not ref.graph.path:
            return produced.name
        if f"/{FUNCTION_BODY}/" in f"/{ref.graph.path}/":
            raise NotExposable("inside a model-local function's body")
        sample = _sample(produced)
        graph, current = ref.graph, produced.name
        while graph.owner is not None:
            owner = self.index.nodes[graph.owner]
            op, outer = owner.op_type, self.fresh()
            if op == "If":
                current = self._through_if(owner.proto, graph.attribute or "", current, sample)
            elif op in ("Loop", "Scan"):
                if op == "Scan" and self.opset < 9:
                    raise NotExposable("Scan-8 (with a batch axis) bodies are not exposed")
                self.emit(graph.proto, current, sample)
                if op == "Scan":
                    for att in owner.proto.attribute:
                        if att.name in ("scan_output_axes", "scan_output_directions"):
                            att.ints.append(0)
                owner.proto.output.append(outer)
                current = outer
                sample = sample[None]
            elif op in GENERATION_OPS:
                raise NotExposable(f"inside a {op}'s {graph.attribute}: onnxruntime returns only the operator's "
                                   "outputs")
            else:
                raise NotExposable(f"inside a {op} body")
            graph = owner.graph
        self.proto.graph.output.append(_typed(current, sample))
        return current

    def _through_if(self, node: onnx.NodeProto, branch: str, name: str, sample: np.ndarray) -> str:
        branches = {a.name: a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH}
        self.emit(branches[branch], name, sample)
        other = branches["else_branch" if branch == "then_branch" else "then_branch"]
        placeholder = self.fresh()
        if self.opset >= 9 and sample.dtype.kind in "biuf":  # zeros of its shape, made when the branch runs
            shape = self.fresh()
            other.node.append(helper.make_node("Constant", [], [shape], name=shape,
                                               value=numpy_helper.from_array(np.array(sample.shape, np.int64))))
            other.node.append(helper.make_node("ConstantOfShape", [shape], [placeholder], name=placeholder,
                                               value=numpy_helper.from_array(np.zeros(1, sample.dtype))))
        else:
            other.node.append(helper.make_node("Constant", [], [placeholder], name=placeholder,
                                               value=numpy_helper.from_array(np.zeros_like(sample))))
        other.output.append(_typed(placeholder, sample))
        outer = self.fresh()
        node.output.append(outer)
        return outer


def exposed_model(model: Model, wanted: list[Produced]) -> tuple[Exposed, dict[Key, str]]:
    """A copy of `model` whose graph outputs also carry every wanted value, and the values that could not be
    exposed with the reason."""
    exposer = _Exposer(model)
    declared = {o.name for o in exposer.proto.graph.output}
    outputs: dict[str, Key] = {}
    refused: dict[Key, str] = {}
    for produced in wanted:
        try:
            name = exposer.expose(produced)
        except NotExposable as exc:
            refused[produced.key] = str(exc)
            continue
        if name == produced.name and name not in declared:
            exposer.proto.graph.output.append(onnx.ValueInfoProto(name=name))
            declared.add(name)
        outputs[name] = produced.key
    return Exposed(exposer.proto, outputs), refused


def at_iteration(stacked: Any, iteration: tuple[int, ...]) -> Any:
    """The element of a stacked exposed value at one iteration tuple; IndexError when it ran fewer times."""
    return stacked[iteration] if iteration else stacked
