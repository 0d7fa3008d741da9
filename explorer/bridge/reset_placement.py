"""The reset gate's placement in a GRU the exporter wrote as a Loop or Scan, where linear_before_reset is the body's
structure, not an attribute: a body that resets the state before the candidate's recurrent product,
(W x + b) + R (r * h) + Rb, where the framework resets after it, (W x + b) + r * (R h + Rb) (PyTorch; Keras with
reset_after=True), is rewritten by moving the reset gate's Mul after the product (and its bias, when the body adds
one to the product alone). The moved nodes keep their names, attributes and output names; no node is added or
removed, and every node outside the moved ones keeps its path."""
from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

import onnx

from ..cells.cell import RecurrentCell
from ..cells.cell_weights import applied_weight
from ..cells.dataflow import Flows, GraphDataflow
from ..model.model import Model
from ..proto.graph import NodeRef
from .weight_writes import graph_of


@dataclass(frozen=True)
class ResetMove:
    """One direction's move: the Mul (r, h) `reset`, and the nodes from the candidate's product to what r is to
    multiply (the product, and its bias's Add when included), in order; `state` is the h the Mul reads."""

    graph: str
    reset: str
    chain: tuple[str, ...]
    state: str
    gate: str

    def apply(self, proto: onnx.ModelProto, model: Model) -> str:
        """Rewrites `proto` (a copy of `model` as given); returns why it could not, or ""."""
        graph = graph_of(proto, model, self.graph)
        refs = [model.node(path) for path in (self.reset, *self.chain)]
        if any(ref.graph.path != self.graph for ref in refs):
            return "the nodes to move lie in different graphs"
        positions = [ref.index for ref in refs]
        nodes = [graph.node[k] for k in positions]
        reset, product, rest = copy.deepcopy(nodes[0]), copy.deepcopy(nodes[1]), [copy.deepcopy(n) for n in nodes[2:]]
        last = (rest[-1] if rest else product).output[0]
        readers = [n for k, n in enumerate(graph.node) if k not in positions and last in n.input]
        if last in {o.name for o in graph.output} or not readers:
            return f"{last!r} is a graph output or read by no node"
        product.input[0] = self.state
        reset.input[:] = [self.gate, last]
        for node in readers:
            for k, name in enumerate(node.input):
                if name == last:
                    node.input[k] = reset.output[0]
        moved = [product, *rest, reset]  # in the place of the last: every input they read is made before it
        order: list[onnx.NodeProto] = []
        for k, node in enumerate(graph.node):
            if k == positions[-1]:
                order.extend(moved)
            elif k not in positions:
                order.append(copy.deepcopy(node))
        del graph.node[:]
        graph.node.extend(order)
        return ""


def _reset_mul(flow: GraphDataflow, product: NodeRef, state: str) -> tuple[NodeRef, str] | None:
    """The Mul (r, h) whose result the candidate's product reads, and r; None when the body is not written so."""
    read = product.proto.input[0] if product.proto.input else ""
    node = flow.producer.get(read)
    if node is None or node.op_type != "Mul" or len(node.proto.input) != 2:
        return None
    if len(flow.consumers.get(read, [])) != 1:
        return None
    a, b = node.proto.input
    for gate, h in ((a, b), (b, a)):
        if flow.strip(h) == state and gate != h:
            return node, gate
    return None


def reset_moves(model: Model, cell: RecurrentCell) -> Iterator[tuple[str, tuple[ResetMove, ...]]]:
    """For a loop-form GRU that resets before its product: (which directions, with or without the product's own
    bias, in words; the moves), every direction together first."""
    if cell.kind != "GRU" or cell.reset_after is not False or not cell.states:
        return
    flows = Flows(model.index)
    options: list[list[tuple[str, ResetMove]]] = []  # per direction: its moves, with the bias first
    for d, weights in enumerate(cell.weights):
        if weights.candidate is None or d >= len(cell.states) or "H" not in cell.states[d]:
            options.append([])
            continue
        flow = flows.of(weights.graph)
        flow.variant = set(cell.states[d].values()) | {s.value for s in cell.inputs[d:d + 1]}  # what steps change
        product = model.node(weights.candidate.node)
        found = _reset_mul(flow, product, cell.states[d]["H"])
        if found is None:
            options.append([])
            continue
        reset, gate = found
        bias = applied_weight(flow, product.path)[2]
        chains: list[tuple[str, tuple[str, ...]]] = []
        if bias is not None and bias.node != product.path and _reads(model, bias.node, product):
            chains.append(("with its bias", (product.path, bias.node)))
        chains.append(("", (product.path,)))
        options.append([(what, ResetMove(weights.graph, reset.path, chain, cell.states[d]["H"], gate))
                        for what, chain in chains])
    if not any(options):
        return
    for k in range(max(len(o) for o in options)):
        chosen = [o[min(k, len(o) - 1)] for o in options if o]
        yield ", ".join(dict.fromkeys(what for what, _ in chosen if what)), tuple(m for _, m in chosen)
    if len([o for o in options if o]) > 1:
        for d, moves in enumerate(options):
            for what, move in moves:
                yield f"direction {d} alone" + (f", {what}" if what else ""), (move,)


def _reads(model: Model, path: str, product: NodeRef) -> bool:
    """Whether the node at `path` reads the product's output directly (the bias added to it alone)."""
    return product.proto.output[0] in model.node(path).proto.input
