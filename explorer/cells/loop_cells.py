"""Cells written as loops: a Loop or Scan that runs over time (its body reads a slice of a sequence each step, or,
in a decoder, feeds back what it made) and updates a carried state the way a GRU, LSTM or RNN does. Two such loops of the same cell over the same
sequence, one of them reversed, are one bidirectional cell (Keras's Bidirectional, a reversed copy in PyTorch)."""
from __future__ import annotations

from itertools import permutations

from ..proto.body_signatures import BodySignature, body_signature
from ..proto.graph import NodeRef
from ..trace.cell_layout import CellLayout, DirectionSteps, Source
from .cell import RecurrentCell, Weights
from .cell_weights import cell_weights, hidden_size, operator_hidden
from .dataflow import PRODUCT_OPS, Flows, GraphDataflow
from .match import Match, match_lstm, match_state, operator_steps
from .steps import StepRead, step_reads


class LoopCell:
    """One direction found in one loop, before directions are paired."""

    def __init__(self, node: NodeRef, form: str, flow: GraphDataflow, match: Match, read: StepRead,
                 initial: dict[str, str]) -> None:
        self.node, self.form, self.flow, self.match, self.read, self.initial = node, form, flow, match, read, initial

    def steps(self) -> DirectionSteps:
        if self.match.operator:
            return DirectionSteps(self.node.path, self.read.reverse,
                                  {k: Source(self.match.operator, "", gate=k) for k in self.match.series})
        series = {k: self.source(v) for k, v in self.match.series.items()}
        mask = None if self.match.mask is None else self.source(self.match.mask)
        return DirectionSteps(self.node.path, self.read.reverse, series, mask=mask)

    def source(self, value: str) -> Source:
        """Where a series is written; a ConvLSTM's gates, computed channels-first, are brought to the layout of
        the state they update (the Transpose its H is written through: Keras's channels-last)."""
        state_layout = self.flow.transposed_by(self.match.series["H"]) if self.conv else ()
        perm = state_layout if state_layout and not self.flow.transposed_by(value) else ()
        return Source(self.writer(value), value, perm)

    @property
    def conv(self) -> bool:
        return any(self.flow.index.nodes[p].op_type == "Conv" for p in self.match.products)

    def writer(self, value: str) -> str:
        node = self.flow.producer.get(value)
        return node.path if node is not None else self.node.path


def loop_cells(flows: Flows, nodes: list[NodeRef], opsets: dict[str, int], framework: str) -> list[RecurrentCell]:
    """Every cell written as a Loop or Scan among `nodes`, bidirectional pairs joined."""
    found: list[LoopCell] = []
    for node in nodes:
        if node.op_type not in ("Loop", "Scan") or node.domain not in ("", "ai.onnx"):
            continue
        body = next((g for g in node.subgraphs if g.attribute == "body"), None)
        if body is None:
            continue
        signature = body_signature(node.proto, opsets.get("", 1), "body", body.proto)
        if signature.problems:
            continue
        found.extend(_cells_of(flows, node, signature, flows.of(body.path)))
    return _pair(found, framework)


def _cells_of(flows: Flows, node: NodeRef, signature: BodySignature, flow: GraphDataflow) -> list[LoopCell]:
    flow.variant = {s.name for s in (signature.counter, signature.cond_in) if s is not None}
    flow.variant.update(c.input.name for c in signature.carried if flow.strip(c.output.name) != c.input.name)
    flow.variant.update(s.name for s in signature.scan_inputs)
    reads = step_reads(flows, flow, signature, node.graph.path)
    states = [(c.input.name, c.output.name, c.input.outer) for c in signature.carried]
    matches: list[tuple[Match, dict[str, str]]] = []
    used: set[str] = set()
    for (h_in, h_out, h0), (c_in, c_out, c0) in permutations(states, 2):
        if {h_in, c_in} & used:
            continue
        match = match_lstm(flow, h_in, h_out, c_in, c_out)
        if match is not None:
            matches.append((match, {"H": h0, "C": c0}))
            used.update((h_in, c_in))
    for match, initial in operator_steps(flow, states, used):
        matches.append((match, initial))
    for h_in, h_out, h0 in states:
        if h_in in used:
            continue
        found = match_state(flow, h_in, h_out)
        if found is not None:
            matches.append((found, {"H": h0}))
            used.add(h_in)
    form = "scan" if node.op_type == "Scan" else "loop"
    cells = []
    carried = {c.input.name for c in signature.carried}
    for match, initial in matches:
        cone = flow.cone(flow.index.nodes[match.operator].proto.input[0] if match.operator else match.series["H"])
        mask_cone = flow.cone(match.mask) if match.mask else set()
        read = next((r for r in reads if r.value in cone and r.value not in mask_cone), None)
        if read is None and not reads and match.kind != "recurrence":
            read = fed_back_read(flow, match, carried - set(match.states))
        if read is not None:
            cells.append(LoopCell(node, form, flow, match, read, initial))
    return cells


def fed_back_read(flow: GraphDataflow, match: Match, others: set[str]) -> StepRead | None:
    """The input of a cell in a loop that reads no sequence (a decoder): what a product of the cell's input
    multiplies (or what one product concatenates with the state), computed from another carried value (the
    embedding of the token fed back, the output fed back)."""
    states = set(match.states)
    for value in match.series.values():
        for name in sorted(flow.cone(value, stop=states)):
            node = flow.producer.get(name)
            if node is None or node.op_type not in PRODUCT_OPS or not node.proto.input:
                continue
            data = flow.strip(node.proto.input[0])
            joined = flow.producer.get(data)
            if node.path not in match.products:
                candidates = [data]
            elif joined is not None and joined.op_type == "Concat":
                candidates = [flow.strip(i) for i in joined.proto.input if i]
            else:
                continue
            for x in candidates:
                cone = flow.cone(x)
                if others & cone and not states & cone:
                    return StepRead(x, x, False)
    return None


def _pair(found: list[LoopCell], framework: str) -> list[RecurrentCell]:
    """Joins a forward and a reversed loop of the same kind over the same sequence into one bidirectional cell."""
    cells = []
    taken: set[int] = set()
    for i, cell in enumerate(found):
        if i in taken:
            continue
        partner = next((j for j, other in enumerate(found) if j != i and j not in taken
                        and other.read.source == cell.read.source and other.read.reverse != cell.read.reverse
                        and other.match.kind == cell.match.kind and other.node.path != cell.node.path
                        and other.node.graph is cell.node.graph), None)
        directions = [cell] if partner is None else sorted([cell, found[partner]], key=lambda c: c.read.reverse)
        taken.add(i)
        if partner is not None:
            taken.add(partner)
        cells.append(_cell(directions, framework, len([c for c in found if c.node is cell.node]) > 1))
    return cells


def _cell(directions: list[LoopCell], framework: str, shared_loop: bool) -> RecurrentCell:
    first = directions[0]
    match = first.match
    path = first.node.path + (f"#{match.series['H']}" if shared_loop else "")
    layout = CellLayout(match.kind, first.form, tuple(d.steps() for d in directions))
    weights = tuple(Weights(d.flow.graph.path) if match.operator else cell_weights(d.flow, d.match, d.read.value)
                    for d in directions)
    return RecurrentCell(
        path=path, kind=match.kind, form=first.form,
        hidden_size=operator_hidden(first.flow, match.operator) if match.operator else
        hidden_size(first.flow, match, weights[0]),
        num_directions=len(directions),
        gate_nodes=tuple({k: s.node for k, s in d.steps().series.items()} for d in directions),
        framework=framework, reset_after=match.reset_after, gate_activation=match.gate_activation,
        activation=match.activation, masked=match.mask is not None,
        conv=first.conv, normalized=any(d.match.normalized for d in directions),
        weights=weights, inputs=tuple(d.source(d.read.value) for d in directions),
        initial=tuple(d.initial for d in directions), loops=tuple(d.node.path for d in directions),
        states=tuple(dict(zip("HC", d.match.states)) for d in directions),
        layout=layout, operator=match.operator)

