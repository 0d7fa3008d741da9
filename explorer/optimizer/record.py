"""RewriteStep: one applied rewrite as data, and the small before/after models made from it."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper

from . import tensors
from .ir import Node
from .scope import node_captures, stable_topological


@dataclass(frozen=True)
class ModelHeader:
    """What every small model made from a rewrite shares with the optimized model: IR version, opsets, functions."""

    ir_version: int
    opset_import: tuple[onnx.OperatorSetIdProto, ...]
    functions: tuple[onnx.FunctionProto, ...] = ()

    def make_model(self, graph: onnx.GraphProto) -> onnx.ModelProto:
        model = helper.make_model(graph, opset_imports=list(self.opset_import), functions=list(self.functions))
        # initializers that are not inputs need IR 4
        model.ir_version = max(self.ir_version, 4)
        return model


@dataclass
class RewriteStep:
    """One applied rewrite. `removed`/`added` are node paths (graph path + node name); `outputs` pairs each value
    the rest of the graph read from the rewritten nodes with the value that replaces it; `input_types` and
    `constants` are what the rewritten nodes read from outside (a constant as an initializer's proto, shared with
    the model, or as its value). Node protos are shared with the optimizer, which never changes a node in place,
    so they are exactly what the graph held."""

    index: int
    pattern: str
    round: int
    graph: str
    removed: list[str]
    added: list[str]
    matched: tuple[str, ...]  # names of the nodes the pattern matched (in `graph`): the rewrite's key with those
    before_nodes: list[onnx.NodeProto]
    after_nodes: list[onnx.NodeProto]
    input_types: dict[str, onnx.TypeProto | None]
    constants: dict[str, onnx.TensorProto | np.ndarray]
    outputs: list[tuple[str, str]]
    output_types: list[onnx.TypeProto | None]
    header: ModelHeader
    seconds: float = 0.0
    context_before: list[onnx.NodeProto] = field(default_factory=list)
    context_after: list[onnx.NodeProto] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)  # what the pattern knew that made the rewrite valid

    @property
    def inputs(self) -> list[onnx.ValueInfoProto]:
        """The non-constant values the rewrite reads, typed when known (the inputs of its small models)."""
        return [tensors.make_value_info(name, None if t is None else tensors.clean_type(t))
                for name, t in self.input_types.items()]

    def before_model(self) -> onnx.ModelProto:
        """The rewritten nodes alone as a model: the step's typed inputs in, the values others read out."""
        outs = [tensors.make_value_info(b, t) for (b, _), t in zip(self.outputs, self.output_types)]
        return self._model(self.before_nodes, outs, "before")

    def after_model(self) -> onnx.ModelProto:
        """The replacement nodes as a model with the same inputs and, position by position, the same outputs."""
        nodes = list(self.after_nodes)
        outs = []
        seen: set[str] = set()
        for k, ((_, after), t) in enumerate(zip(self.outputs, self.output_types)):
            name = after
            if name in seen:  # two values became one (e.g. merged twins): give each output its own name
                name = f"{after}__out{k}"
                nodes.append(helper.make_node("Identity", [after], [name], name=f"output_copy_{k}"))
            seen.add(name)
            outs.append(tensors.make_value_info(name, t))
        return self._model(nodes, outs, "after")

    def _model(self, nodes: list[onnx.NodeProto], outputs: list[onnx.ValueInfoProto], side: str) -> onnx.ModelProto:
        nodes = ordered(nodes)
        read = free_inputs(nodes) | {o.name for o in outputs}
        produced = {o for n in nodes for o in n.output if o}
        inits = [_initializer(k, v) for k, v in self.constants.items() if k in read and k not in produced]
        graph = helper.make_graph(nodes, f"{self.pattern}_{self.index}_{side}", list(self.inputs), outputs, inits)
        return self.header.make_model(graph)

    def neighbourhood(self, after: bool = False) -> onnx.ModelProto:
        """The rewritten (or replacement) nodes with one level of context around them, as a model to draw."""
        core = self.after_nodes if after else self.before_nodes
        context = self.context_after if after else self.context_before
        nodes = ordered([*context, *core])
        produced = {o for n in nodes for o in n.output if o}
        read = free_inputs(nodes)
        types = {k: v for k, v in self.input_types.items() if v is not None}
        types.update({k: _constant_type(v) for k, v in self.constants.items()})
        inputs = [tensors.make_value_info(n, types.get(n)) for n in sorted(read - produced)]
        consumed = {i for n in nodes for i in n.input} | {c for n in nodes if len(n.attribute) for c in node_captures(n)}
        outputs = [tensors.make_value_info(o, None) for n in nodes for o in n.output if o and o not in consumed]
        graph = helper.make_graph(nodes, f"{self.pattern}_{self.index}_{'after' if after else 'before'}",
                                  inputs, outputs)
        return self.header.make_model(graph)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (the models themselves are available through before_model/after_model)."""
        return {
            "index": self.index, "pattern": self.pattern, "round": self.round, "graph": self.graph,
            "removed": list(self.removed), "added": list(self.added),
            "removed_ops": [n.op_type for n in self.before_nodes if self._path(n) in self.removed],
            "added_ops": [n.op_type for n in self.after_nodes if self._path(n) in self.added],
            "inputs": list(self.input_types), "constants": sorted(self.constants),
            "outputs": [list(pair) for pair in self.outputs], "facts": list(self.facts), "seconds": self.seconds,
        }

    def _path(self, node: onnx.NodeProto) -> str:
        return f"{self.graph}/{node.name}" if self.graph else node.name

    @property
    def key(self) -> tuple[str, str, tuple[str, ...]]:
        """What names this rewrite in a rerun of the same optimization: (graph, pattern, matched nodes)."""
        return self.graph, self.pattern, self.matched

    def describe(self) -> str:
        where = f" in {self.graph!r}" if self.graph else ""
        return (f"#{self.index} {self.pattern}{where} (round {self.round}): removed {', '.join(self.removed) or '-'}; "
                f"added {', '.join(self.added) or '-'}")


def _initializer(name: str, constant: onnx.TensorProto | np.ndarray) -> onnx.TensorProto:
    if not isinstance(constant, onnx.TensorProto):
        return tensors.to_tensor(constant, name)
    if constant.name == name:
        return constant
    renamed = onnx.TensorProto()
    renamed.CopyFrom(constant)
    renamed.name = name
    return renamed


def _constant_type(constant: onnx.TensorProto | np.ndarray) -> onnx.TypeProto:
    if isinstance(constant, onnx.TensorProto):
        return helper.make_tensor_type_proto(constant.data_type, list(constant.dims))
    return tensors.array_type(constant)


def free_inputs(nodes: Sequence[onnx.NodeProto | Node]) -> set[str]:
    """Names the nodes read (inputs and body captures) that none of them produces."""
    produced = {o for n in nodes for o in n.output if o}
    read = {i for n in nodes for i in n.input if i}
    for n in nodes:
        if isinstance(n, Node):
            read.update(v.name for v in n.captures)
        elif len(n.attribute):
            read.update(node_captures(n))
    return read - produced


def ordered(nodes: list[onnx.NodeProto]) -> list[onnx.NodeProto]:
    """The nodes in an order where each runs after the producers of what it reads (stable otherwise)."""
    producers = {o: n for n in nodes for o in n.output if o}

    def needs(node: onnx.NodeProto) -> list[onnx.NodeProto]:
        names = [i for i in node.input if i]
        if len(node.attribute):
            names.extend(node_captures(node))
        return [producers[n] for n in names if n in producers]

    return stable_topological(nodes, needs)
