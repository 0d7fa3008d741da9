"""A cell's learned tensors as the graph applies them: the product of the step's input with its kernel, the
product of the state with its recurrent kernel, the biases added to each, and in which order the gates' blocks
stack in a fused kernel (read from the Split or Slice that separates them)."""
from __future__ import annotations

import numpy as np

from ..trace.cell_layout import Source
from .cell import Weights
from .dataflow import PRODUCT_OPS, GraphDataflow
from .match import Match

GATE_ORDER = {"GRU": ("z", "r", "h"), "LSTM": ("i", "f", "c", "o"), "RNN": ("a",)}


def _products(flow: GraphDataflow, match: Match, reads: str) -> list[str]:
    """Products (node paths) in the cell's gates that multiply `reads` (a value or what it is computed from)."""
    found = []
    for value in match.series.values():
        for name in flow.cone(value, stop=set(match.states) - {reads}):
            node = flow.producer.get(name)
            if node is not None and node.op_type in PRODUCT_OPS and node.proto.input and \
                    reads in flow.cone(node.proto.input[0], stop=match.states):
                found.append(node.path)
    return sorted(set(found))


def applied_weight(flow: GraphDataflow, path: str | None) -> tuple[Source | None, bool, Source | None]:
    """The weight a product applies (its second input), whether it is stored [out, in], and the bias the product
    adds itself (Gemm's C, Conv's B) or that an Add on its result (or on a sum of it with other products) adds."""
    if path is None:
        return None, False, None
    node = flow.index.nodes[path]
    inputs = list(node.proto.input)
    weight = Source(path, inputs[1]) if len(inputs) > 1 and inputs[1] else None
    transposed = node.op_type == "Gemm" and any(a.name == "transB" and a.i for a in node.proto.attribute)
    if node.op_type in ("Conv", "Gemm") and len(inputs) > 2 and inputs[2] and flow.invariant(inputs[2]):
        return weight, transposed, Source(path, inputs[2])  # (tf2onnx adds the recurrent product as C: no bias)
    value = node.proto.output[0]
    for _ in range(4):
        adds = [c for c in flow.consumers.get(value, []) if c.op_type == "Add" and len(c.proto.input) == 2]
        if len(adds) != 1:
            break
        other = next((i for i in adds[0].proto.input if i != value), value)
        if flow.invariant(other):
            return weight, transposed, Source(adds[0].path, other)
        value = adds[0].proto.output[0]
    return weight, transposed, None


def cell_weights(flow: GraphDataflow, match: Match, x_value: str) -> Weights:
    x_products = [p for p in _products(flow, match, x_value) if p not in match.products]
    recurrent, candidate = _recurrent_products(flow, match)
    kernel, transposed, kernel_bias = applied_weight(flow, x_products[0] if x_products else None)
    recurrent_weight, recurrent_transposed, recurrent_bias = applied_weight(flow, recurrent)
    candidate_weight = applied_weight(flow, candidate)[0]
    if recurrent_bias == kernel_bias:
        recurrent_bias = None  # one bias added to the sum of both products
    order = _order(flow, match, x_products[0] if x_products else None)
    recurrent_order = _order(flow, match, recurrent)
    return Weights(flow.graph.path, kernel, recurrent_weight, kernel_bias, recurrent_bias, transposed,
                   recurrent_transposed, order, recurrent_order, candidate_weight)


def _recurrent_products(flow: GraphDataflow, match: Match) -> tuple[str | None, str | None]:
    """The product of the state with the recurrent kernel and, for a GRU that resets the state before its
    candidate's product, that second product (of r (.) H)."""
    if not match.products:
        return None, None
    reset = match.series.get("r")
    if match.kind != "GRU" or match.reset_after or reset is None:
        return match.products[0], None
    on_reset = [p for p in match.products if reset in flow.cone(flow.index.nodes[p].proto.input[0])]
    plain = [p for p in match.products if p not in on_reset]
    return (plain[0] if plain else None), (on_reset[0] if on_reset else None)


def _order(flow: GraphDataflow, match: Match, product: str | None) -> tuple[str, ...]:
    """The gate letters in the order of their blocks in the output of `product` (empty when not fused)."""
    if product is None or match.kind not in ("GRU", "LSTM"):
        return ()
    output = flow.index.nodes[product].proto.output[0]
    gates = GATE_ORDER[match.kind]
    stops = {match.series[g] for g in gates} | set(match.states)
    chunks: dict[str, int] = {}
    for gate in gates:
        activation = flow.activation_node(match.series[gate])
        if activation is None:
            return ()
        for name in flow.cone(activation.proto.input[0], stop=stops):
            chunk = _chunk(flow, name, output) if name not in stops else None
            if chunk is not None:
                chunks[gate] = chunk
                break
    if len(chunks) != len(gates) or len(set(chunks.values())) != len(gates):
        return ()
    return tuple(sorted(gates, key=chunks.__getitem__))


def _chunk(flow: GraphDataflow, name: str, fused: str) -> int | None:
    """Which block of `fused` the value `name` is, when a Split or a Slice on the last axis cut it out."""
    node = flow.producer.get(name)
    if node is None or not node.proto.input or fused not in flow.cone(node.proto.input[0]):
        return None
    if node.op_type == "Split":
        return list(node.proto.output).index(name)
    if node.op_type == "Slice" and len(node.proto.input) >= 3:
        starts, ends = flow.constant(node.proto.input[1]), flow.constant(node.proto.input[2])
        if starts is not None and ends is not None and starts.size == 1 and ends.size == 1:
            width = int(ends.flat[0]) - int(starts.flat[0])
            return int(starts.flat[0]) // width if width > 0 else None
    return None


def hidden_size(flow: GraphDataflow, match: Match, weights: Weights) -> int | None:
    """The number of units of the state: from the recurrent kernel's shape, else from the state's declared
    shape (all but its batch dim: a ConvLSTM's positions x channels)."""
    product = flow.index.nodes[weights.recurrent.node] if weights.recurrent is not None else None
    if weights.recurrent is not None and product is not None and product.op_type in ("MatMul", "Gemm"):
        shape = _shape(flow, weights.recurrent.value)
        if shape is not None and len(shape) == 2:
            joined = flow.producer.get(flow.strip(product.proto.input[0]))
            if joined is not None and joined.op_type == "Concat":  # W [x, h]: the units are its outputs per gate
                outputs = shape[0] if weights.recurrent_transposed else shape[1]
                return int(outputs) // max(1, len(weights.recurrent_order)) if outputs is not None else None
            units = shape[1] if weights.recurrent_transposed else shape[0]
            if units is not None:
                return int(units)
    declared = _shape(flow, match.states[0])
    if declared is not None and len(declared) >= 2 and None not in declared[1:]:
        return int(np.prod([d for d in declared[1:] if d is not None]))
    return None


def _shape(flow: GraphDataflow, name: str) -> tuple[int | None, ...] | None:
    value = flow.constant(name)
    if value is not None:
        return tuple(value.shape)
    declared = flow.index.value_type(name, flow.graph.path)
    if declared is None or not declared.HasField("tensor_type") or not declared.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in declared.tensor_type.shape.dim)


def operator_hidden(flow: GraphDataflow, path: str) -> int | None:
    """A GRU/LSTM/RNN operator's hidden size: its attribute, else the last dim of R."""
    node = flow.index.nodes[path]
    size = next((a.i for a in node.proto.attribute if a.name == "hidden_size"), None)
    if size:
        return int(size)
    shape = _shape(flow, node.proto.input[2]) if len(node.proto.input) > 2 else None
    return shape[-1] if shape and len(shape) == 3 else None
