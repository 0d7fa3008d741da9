"""The reset gate's placement in a GRU the exporter wrote as a Loop or Scan, where linear_before_reset is the body's
structure, not an attribute. The rewrites, each of one direction's body:
- it resets the state before the candidate's product, (W x + b) + R (r * h) + Rb, where the framework resets
  after it, (W x + b) + r * (R h + Rb) (PyTorch; Keras with reset_after=True): the reset gate's Mul is moved after
  the product (and its bias, when the body adds one to the product alone); the input's projection a Gemm adds as
  its C (tf2onnx's form of a reset_after=False cell) is added after r by an Add of its own;
- it resets after a product of the state alone where the framework resets before it (Keras with
  reset_after=False): the Mul is moved back onto the state the product reads;
- it resets after a cut of one product of the state for every gate (the form of reset_after=True): that product,
  its bias and its cut are copied for r * h, the copy's cut taking the Mul's output name.
Moved nodes keep their names, attributes and output names, so every other node keeps its path."""
from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

import onnx

from ..cells.cell import RecurrentCell
from ..cells.cell_weights import applied_weight
from ..cells.dataflow import PRODUCT_OPS, Flows, GraphDataflow
from ..model.model import Model
from ..proto.graph import NodeRef
from .weight_writes import graph_of


@dataclass(frozen=True)
class ResetMove:
    """One direction's move of the reset gate's Mul `reset` (r times something): `after` moves it from the state,
    (r * h) read by the product, to what the product makes (the product, and its bias's Add when included, are
    `chain`, in order); else from what the product makes back to the state the product then reads. `state` is h."""

    graph: str
    reset: str
    chain: tuple[str, ...]
    state: str
    gate: str
    after: bool = True
    copied: bool = False  # the product is of every gate at once, cut after: r * h gets a copy of that chain
    outside: str = ""  # moving after: the input's part a Gemm adds as its C, added after r instead

    def apply(self, proto: onnx.ModelProto, model: Model) -> str:
        """Rewrites `proto` (a copy of `model` as given); returns why it could not, or ""."""
        graph = graph_of(proto, model, self.graph)
        if self.copied:
            return self._copy(graph, model)
        paths = (self.reset, *self.chain) if self.after else (*self.chain, self.reset)
        refs = [model.node(path) for path in paths]
        if any(ref.graph.path != self.graph for ref in refs):
            return "the nodes to move lie in different graphs"
        positions = [ref.index for ref in refs]
        nodes = [copy.deepcopy(graph.node[k]) for k in positions]
        reset, chain = (nodes[0], nodes[1:]) if self.after else (nodes[-1], nodes[:-1])
        if self.after:  # r * h -> product -> [bias] becomes product(h) -> [bias] -> r * that [-> + input's part]
            leaving, chain[0].input[0] = chain[-1].output[0], self.state
            reset.input[:] = [self.gate, leaving]
            made, moved = reset.output[0], [*chain, reset]
            if self.outside:
                del chain[0].input[2:]
                taken = {o for n in graph.node for o in n.output} | {n.name for n in graph.node}
                made = _free(f"{reset.output[0]}/with_input", taken)
                moved.append(onnx.helper.make_node("Add", [self.outside, reset.output[0]], [made],
                                                   name=_free(f"{reset.name or 'reset'}/with_input", taken)))
        else:  # product(h) -> [bias] -> r * that becomes r * h -> product -> [bias]
            leaving = reset.output[0]
            reset.input[:] = [self.gate, self.state]
            chain[0].input[0] = reset.output[0]
            made, moved = chain[-1].output[0], [reset, *chain]
        readers = [n for k, n in enumerate(graph.node) if k not in positions and leaving in n.input]
        if leaving in {o.name for o in graph.output} or not readers:
            return f"{leaving!r} is a graph output or read by no node"
        for node in readers:
            for k, name in enumerate(node.input):
                if name == leaving:
                    node.input[k] = made
        order: list[onnx.NodeProto] = []  # the moved nodes in the place of the last: what they read is made before
        for k, node in enumerate(graph.node):
            if k == positions[-1]:
                order.extend(moved)
            elif k not in positions:
                order.append(copy.deepcopy(node))
        del graph.node[:]
        graph.node.extend(order)
        return ""

    def _copy(self, graph: onnx.GraphProto, model: Model) -> str:
        """r * (cut of the product of h) becomes the same cut of a copy of the product (and its bias) of r * h: the
        Mul is replaced by itself on the state and the chain's copy, the copy's last value taking the Mul's name."""
        at = model.node(self.reset).index
        reset = copy.deepcopy(graph.node[at])
        leaving = reset.output[0]
        taken = {o for n in graph.node for o in n.output} | {n.name for n in graph.node}
        state = _free(f"{leaving}/reset_state", taken)
        reset.input[:] = [self.gate, self.state]
        reset.output[:] = [state]
        renamed: dict[str, str] = {}
        copies = []
        for k, path in enumerate(self.chain):
            node = copy.deepcopy(graph.node[model.node(path).index])
            node.name = _free(f"{node.name or node.op_type}/reset_before", taken)
            node.input[:] = [renamed.get(name, name) for name in node.input]
            if k == 0:
                node.input[0] = state
            for j, name in enumerate(node.output):
                renamed[name] = _free(f"{name}/reset_before", taken) if name else name
                node.output[j] = renamed[name]
            copies.append(node)
        cut = next((name for name in graph.node[at].input if name != self.gate), "")
        if cut not in renamed:
            return f"{cut!r} is not made by the nodes to copy"
        last = copies[-1]
        last.output[list(last.output).index(renamed[cut])] = leaving
        nodes = list(graph.node)
        nodes[at:at + 1] = [reset, *copies]
        del graph.node[:]
        graph.node.extend(nodes)
        return ""


def _free(wanted: str, taken: set[str]) -> str:
    name, k = wanted, 1
    while name in taken:
        k += 1
        name = f"{wanted}{k}"
    taken.add(name)
    return name


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


def _product_reset(flow: GraphDataflow, cell: RecurrentCell, d: int,
                   state: str) -> tuple[NodeRef, tuple[str, ...], str, bool] | None:
    """A body resetting after its product: the Mul r * q in the candidate's pre-activation, q the product of the
    state (or that plus a bias), or a cut of one product of the state for every gate; (the Mul, the nodes from the
    product to q, r, whether q is such a cut), None when not written so."""
    steps = cell.layout.directions[d] if cell.layout is not None and d < len(cell.layout.directions) else None
    if steps is None or "r" not in steps.series or "h" not in steps.series:
        return None
    r = steps.series["r"].value
    activation = flow.activation_node(steps.series["h"].value)
    if activation is None or not activation.proto.input:
        return None
    for name in flow.cone(activation.proto.input[0], stop={state}):
        node = flow.producer.get(name)
        if node is None or node.op_type != "Mul" or len(node.proto.input) != 2:
            continue
        for gate, q in (tuple(node.proto.input), tuple(node.proto.input)[::-1]):
            if gate != r:
                continue
            chain = _state_product(flow, q, state)
            if chain is not None:
                return node, chain, gate, False
            chain = _cut_product(flow, q, state)
            if chain is not None:
                return node, chain, gate, True
    return None


def _cut_product(flow: GraphDataflow, value: str, state: str) -> tuple[str, ...] | None:
    """The nodes making `value` as a cut (Slice, Split) of one product of the state for every gate, with the bias
    Adds between: the product first, `value`'s writer last; None when it is not made so."""
    chain: list[str] = []
    current = value
    for _ in range(5):
        node = flow.producer.get(current)
        if node is None:
            return None
        chain.insert(0, node.path)
        if node.op_type in PRODUCT_OPS and node.proto.input and flow.strip(node.proto.input[0]) == state:
            cut = any(flow.index.nodes[path].op_type in ("Slice", "Split") for path in chain)
            return tuple(chain) if cut else None
        if node.op_type in ("Slice", "Split") and node.proto.input:
            current = node.proto.input[0]
        elif node.op_type == "Add" and len(node.proto.input) == 2:
            reads = [name for name in node.proto.input if not flow.invariant(name)]
            if len(reads) != 1:
                return None
            current = reads[0]
        else:
            return None
    return None


def _state_product(flow: GraphDataflow, value: str, state: str) -> tuple[str, ...] | None:
    """The product of the state writing `value` (read by one node only), or that product and the Add of its bias."""
    node = flow.producer.get(value)
    if node is None or len(flow.consumers.get(value, [])) != 1:
        return None
    if node.op_type in PRODUCT_OPS and node.proto.input and flow.strip(node.proto.input[0]) == state:
        return (node.path,)
    if node.op_type == "Add" and len(node.proto.input) == 2:
        for read, bias in (tuple(node.proto.input), tuple(node.proto.input)[::-1]):
            inner = _state_product(flow, read, state) if flow.invariant(bias) else None
            if inner is not None and len(inner) == 1:
                return (*inner, node.path)
    return None


def _input_part(flow: GraphDataflow, product: NodeRef) -> str:
    """The C a Gemm adds to the candidate's product when it changes from step to step (tf2onnx adds the input's
    projection there), or ""."""
    inputs = product.proto.input
    plain = all(a.name != "beta" or a.f == 1.0 for a in product.proto.attribute)
    if product.op_type != "Gemm" or len(inputs) < 3 or not inputs[2] or not plain or flow.invariant(inputs[2]):
        return ""
    return str(inputs[2])


def _direction_moves(model: Model, flow: GraphDataflow, cell: RecurrentCell, d: int) -> list[tuple[str, ResetMove]]:
    """One direction's moves, with its product's own bias first (resetting before: the bias may be the input's)."""
    weights, state = cell.weights[d], cell.states[d]["H"]
    if not cell.reset_after:
        if weights.candidate is None:
            return []
        product = model.node(weights.candidate.node)
        found = _reset_mul(flow, product, state)
        if found is None:
            return []
        reset, gate = found
        bias = applied_weight(flow, product.path)[2]
        chains: list[tuple[str, tuple[str, ...]]] = []
        if bias is not None and bias.node != product.path and _reads(model, bias.node, product):
            chains.append(("with its bias", (product.path, bias.node)))
        chains.append(("", (product.path,)))
        part = _input_part(flow, product)
        return [(", ".join(w for w in (what, "the input's part added after" if outside else "") if w),
                 ResetMove(weights.graph, reset.path, chain, state, gate, outside=outside))
                for outside in ([part, ""] if part else [""]) for what, chain in chains]
    moved = _product_reset(flow, cell, d, state)
    if moved is None:
        return []
    reset, chain, gate, cut = moved
    return [("", ResetMove(weights.graph, reset.path, chain, state, gate, after=False, copied=cut))]


def reset_moves(model: Model, cell: RecurrentCell) -> Iterator[tuple[str, tuple[ResetMove, ...]]]:
    """For a loop-form GRU: (which directions, with or without the product's own bias, in words; the moves of its
    reset gate to the other side of the recurrent product), every direction together first."""
    if cell.kind != "GRU" or cell.reset_after is None or not cell.states:
        return
    flows = Flows(model.index)
    options: list[list[tuple[str, ResetMove]]] = []  # per direction
    for d, weights in enumerate(cell.weights):
        if d >= len(cell.states) or "H" not in cell.states[d]:
            options.append([])
            continue
        flow = flows.of(weights.graph)
        flow.variant = set(cell.states[d].values()) | {s.value for s in cell.inputs[d:d + 1]}  # what steps change
        options.append(_direction_moves(model, flow, cell, d))
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
