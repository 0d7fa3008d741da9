"""Cells unrolled by the exporter (dynamo writes nn.RNN so): the same cell once per time step, its recurrent
products sharing one weight. Each product's data input is the state of the step before; following the cell
update from one product to the state the next product reads links the steps into a chain, one chain per layer
and direction. A first step whose initial state was folded away (zeros) joins its chain when it applies the
same activation to the same kind of pre-activation."""
from __future__ import annotations

from collections.abc import Iterator

from ..proto.graph import NodeRef
from ..trace.cell_layout import CellLayout, DirectionSteps, Source
from .cell import RecurrentCell, Weights
from .cell_weights import applied_weight, hidden_size
from .dataflow import ACTIVATION_OPS, NORM_OPS, PART_OPS, VIEW_OPS, Flows, GraphDataflow
from .match import Match, match_lstm, match_state, unnormalized

FORWARD_OPS = frozenset({"Add", "Sub", "Mul", "Div", "Neg", "Where", "Concat"}) | ACTIVATION_OPS | PART_OPS | VIEW_OPS \
    | NORM_OPS
REACH = 12  # how far past a recurrent product the state it updates may lie
STEP_PRODUCTS = frozenset({"MatMul", "Gemm", "Conv"})  # the products a weight applied once per step may be


def unrolled_cells(flows: Flows, framework: str) -> list[RecurrentCell]:
    """Every unrolled cell of the main graph, in the order of its first step."""
    flow = flows.of("")
    groups: dict[str, list[NodeRef]] = {}
    for node in dict.fromkeys(flow.producer.values()):
        if node.op_type in STEP_PRODUCTS and len(node.proto.input) > 1 and \
                flow.constant(flow.strip(node.proto.input[1])) is not None:
            groups.setdefault(flow.strip(node.proto.input[1]), []).append(node)  # a traced copy is the same
    links: dict[str, tuple[Match, str]] = {}
    for products in groups.values():
        if len(products) < 2:
            continue  # a recurrent weight is applied once per step: an input projection only once
        candidates = {p.path: _state_candidates(flow, p) for p in products}
        everything = {state for states in candidates.values() for state in states}
        found = {}
        for product in products:
            for state in candidates[product.path]:
                link = _link(flow, state, product, everything)
                if link is not None:
                    found[state] = link
                    break
        states = set(found) | {candidates[p.path][-1] for p in products if not set(candidates[p.path]) & set(found)}
        if 2 * len(states & {out for _, out in found.values()}) >= len(states):
            links.update(found)  # a recurrent weight reads the states its own steps produce (an input's does not)
    return _cells(flow, [chain for chain in _chains(flow, links) if len(chain) >= 2], framework)


def _state_candidates(flow: GraphDataflow, product: NodeRef) -> list[str]:
    """The values a recurrent product may read the state as: what its data input concatenates (a convolution
    over [h, x], RAFT's ConvGRU), else that input."""
    data = flow.strip(product.proto.input[0])
    node = flow.producer.get(data)
    parts = [flow.strip(i) for i in node.proto.input if i] if node is not None and node.op_type == "Concat" else []
    return [*parts, data]


def _forward(flow: GraphDataflow, start: str) -> Iterator[str]:
    """Values computed from `start` through elementwise operations, nearest first."""
    seen, frontier = {start}, [start]
    for _ in range(REACH):
        following: list[str] = []
        for value in frontier:
            for node in flow.consumers.get(value, []):
                if node.op_type in FORWARD_OPS:
                    for out in node.proto.output:
                        if out and out not in seen:
                            seen.add(out)
                            following.append(out)
                            yield out
        frontier = following


PREFERENCE = {"LSTM": 0, "GRU": 1, "RNN": 2}


def _link(flow: GraphDataflow, state: str, product: NodeRef, states: set[str]) -> tuple[Match, str] | None:
    """The cell update taking `state` (read by the recurrent `product`) to the next step's state: the update
    whose result the next step's product reads, else the most specific (an RNN's activation of a gate is no
    step of its own)."""
    found = []
    for order, candidate in enumerate(_forward(flow, product.proto.output[0])):
        match = _lstm_from_h(flow, state, candidate) or match_state(flow, state, candidate)
        if match is not None and match.kind in PREFERENCE:
            found.append((candidate not in states, PREFERENCE[match.kind], order, match, candidate))
    if not found:
        return None
    *_, match, candidate = min(found, key=lambda f: f[:3])
    return match, candidate


def _lstm_from_h(flow: GraphDataflow, h_in: str, h_out: str, recurrent: bool = True) -> Match | None:
    """An LSTM step ending at `h_out` = o * act(C'), its previous cell state found among the operands of the
    products C' = f * C + i * g adds (not an activation's output: the state itself, or its zero start)."""
    terms = flow.expand(h_out, atoms=frozenset((h_in,)))
    if len(terms) != 1:
        return None
    for atom in next(iter(terms)):
        activation = flow.activation_node(atom)
        if activation is None or not activation.proto.input:
            continue
        c_new = flow.strip(activation.proto.input[0])
        add = flow.producer.get(flow.strip(unnormalized(flow, c_new)))
        if add is None or add.op_type != "Add":
            continue
        for product in (flow.producer.get(flow.strip(i)) for i in add.proto.input):
            if product is None or product.op_type != "Mul":
                continue
            for c_in in (flow.strip(i) for i in product.proto.input):
                if flow.activation_node(c_in) is None:
                    match = match_lstm(flow, h_in, h_out, c_in, c_new, recurrent)
                    if match is not None:
                        return match
    return None


def _chains(flow: GraphDataflow, links: dict[str, tuple[Match, str]]) -> list[list[tuple[Match, str]]]:
    """Links strung into chains of steps, from a state no link produces; a folded first step put in front."""
    produced = {out for _, out in links.values()}
    chains = []
    for start in links:
        if start in produced:
            continue
        chain: list[tuple[Match, str]] = []
        state = start
        while state in links and len(chain) <= len(links):
            match, state = links[state]
            chain.append((match, state))
        first = _folded_first_step(flow, start, chain[0][0])
        chains.append(([first] if first is not None else []) + chain)
    return chains


def _folded_first_step(flow: GraphDataflow, state: str, next_step: Match) -> tuple[Match, str] | None:
    """The first step of an RNN or LSTM whose zero initial state was folded away: `state` is the same activation
    of a pre-activation the next step's resembles (without its recurrent product), or an LSTM step's output whose
    gates read no state."""
    if next_step.kind == "LSTM":
        first = _lstm_from_h(flow, "", state, recurrent=False)
        return (first, state) if first is not None else None
    if next_step.kind != "RNN":
        return None
    node = flow.producer.get(state)
    if node is None or node.op_type != next_step.activation or not node.proto.input:
        return None
    return Match("RNN", {"a": node.proto.input[0], "H": state}, ("",), None, "", node.op_type), state


def _upward(flow: GraphDataflow, start: str, stop: set[str]) -> Iterator[NodeRef]:
    """The nodes `start` is computed by and from, nearest first, not looking past `stop`."""
    seen, frontier = set(), [start]
    for _ in range(REACH):
        following: list[str] = []
        for name in frontier:
            node = flow.producer.get(name)
            if node is None or name in stop or name in seen:
                continue
            seen.add(name)
            yield node
            following.extend(i for i in node.proto.input if i)
        frontier = following


def _step_index(flow: GraphDataflow, match: Match) -> tuple[int | None, bool, str]:
    """The time step a step reads (the constant index of the nearest Slice or Gather picking its input), whether
    the sequence it picks from was reversed first (a Slice with negative steps), and that sequence."""
    pre = match.series.get("a") or next(iter(match.series.values()))
    for node in _upward(flow, pre, set(match.states)):
        if node.op_type in ("Slice", "Gather") and len(node.proto.input) > 1 and not _negative(flow, node):
            index = flow.constant(flow.strip(node.proto.input[1]))
            if index is not None and index.size == 1:
                data = flow.producer.get(flow.strip(node.proto.input[0]))
                flipped = data is not None and data.op_type == "Slice" and _negative(flow, data)
                sequence = flow.strip(data.proto.input[0]) if flipped and data is not None else \
                    flow.strip(node.proto.input[0])
                return int(index.reshape(-1)[0]), flipped, _projected(flow, sequence)
    return None, False, ""


def _negative(flow: GraphDataflow, node: NodeRef) -> bool:
    steps = flow.constant(node.proto.input[4]) if len(node.proto.input) > 4 and node.proto.input[4] else None
    return steps is not None and steps.size > 0 and bool((steps < 0).all())


def _projected(flow: GraphDataflow, sequence: str) -> str:
    """The input sequence a projected one was computed from (x of x.W + b: the nearest product with a constant
    weight above it), else the sequence itself."""
    for node in _upward(flow, sequence, set()):
        if node.op_type in ("MatMul", "Gemm") and flow.constant(flow.strip(node.proto.input[1])) is not None:
            return flow.strip(node.proto.input[0])
    return sequence


def _direction(flow: GraphDataflow, chain: list[tuple[Match, str]]) -> tuple[DirectionSteps, str]:
    """One chain as a direction of a cell, and the sequence it reads."""
    read = [_step_index(flow, m) for m, _ in chain]
    indices = [i for i, _, _ in read]
    flipped = read[0][1]
    descending = None not in indices and len(indices) > 1 and indices[0] > indices[-1]  # type: ignore[operator]

    def source(value: str) -> Source:
        writer = flow.producer.get(value)
        return Source(writer.path if writer is not None else "", value)

    steps = tuple({k: source(v) for k, v in m.series.items()} for m, _ in chain)
    return DirectionSteps(None, flipped != descending, {}, steps), read[0][2]


def _cells(flow: GraphDataflow, chains: list[list[tuple[Match, str]]], framework: str) -> list[RecurrentCell]:
    """Chains as cells: a forward and a reversed chain of one kind over the same sequence are one cell."""
    directions = [_direction(flow, chain) for chain in chains]
    cells, taken = [], set()
    for i, (steps, sequence) in enumerate(directions):
        if i in taken:
            continue
        partner = next((j for j, (other, seq) in enumerate(directions) if j != i and j not in taken and seq
                        and seq == sequence and other.reverse != steps.reverse
                        and chains[j][-1][0].kind == chains[i][-1][0].kind), None)
        members = [i] if partner is None else sorted([i, partner], key=lambda k: directions[k][0].reverse)
        taken.update(members)
        cells.append(_cell(flow, [chains[k] for k in members], [directions[k][0] for k in members], framework))
    return cells


def _step_input(flow: GraphDataflow, match: Match) -> tuple[Source | None, NodeRef | None]:
    """What a step reads: x_t with the product applying the kernel to it, or (no such product: the exporter
    projected the whole sequence at once) the step's slice of that projection, with no product."""
    pre = match.series.get("a") or next((n.proto.input[0] for n in (flow.activation_node(match.series[g])
                                                                     for g in ("z", "i") if g in match.series)
                                         if n is not None), "")
    stops = set(match.states) - {""}
    for node in _upward(flow, pre, stops):
        if node.op_type in ("MatMul", "Gemm") and flow.constant(flow.strip(node.proto.input[1])) is not None and \
                not stops & flow.cone(node.proto.input[0], stop=stops):
            data = flow.strip(node.proto.input[0])
            writer = flow.producer.get(data)
            if writer is not None and writer.op_type in ("Gather", "Slice", "Squeeze"):
                return Source(writer.path, data), node
            break
    for term in flow.expand(pre, atoms=frozenset(stops)):
        if len(term) == 1 and flow.constant(term[0]) is None and not stops & flow.cone(term[0], stop=stops):
            writer = flow.producer.get(term[0])
            return (Source(writer.path, term[0]) if writer is not None else None), None
    return None, None


def _weights(flow: GraphDataflow, chain: list[tuple[Match, str]]) -> tuple[Weights, tuple[Source, ...]]:
    """A direction's recurrent kernel and, when each step multiplies its own x_t, its kernel and bias; with the
    input of each step."""
    recurrent = next((flow.index.nodes[p] for m, _ in chain for p in m.products), None)
    read = [_step_input(flow, m) for m, _ in chain]
    inputs = tuple(source for source, _ in read if source is not None)
    kernel_node = read[-1][1]
    kernel, transposed, kernel_bias = applied_weight(flow, kernel_node.path if kernel_node is not None else None)
    recurrent_weight, recurrent_transposed, recurrent_bias = applied_weight(flow, recurrent.path if recurrent else None)
    if len(inputs) != len(chain) or any((k is None) != (kernel_node is None) for _, k in read):
        inputs = ()
    return Weights("", kernel, recurrent_weight, kernel_bias, recurrent_bias, transposed, recurrent_transposed), inputs


def _initial(flow: GraphDataflow, chain: list[tuple[Match, str]]) -> dict[str, str]:
    """The values a chain's first step starts from (H, and C for an LSTM) unless they are folded away or
    constant zeros."""
    first = chain[0][0]
    out = {}
    for letter, state in zip("HC", first.states):
        value = flow.constant(state) if state else None
        if state and (value is None or value.any()):
            out[letter] = state
    return out


def _cell(flow: GraphDataflow, chains: list[list[tuple[Match, str]]], directions: list[DirectionSteps],
          framework: str) -> RecurrentCell:
    last, _ = chains[0][-1]
    first_steps = directions[0].steps[0]
    weights, inputs = zip(*(_weights(flow, chain) for chain in chains))
    initial = tuple(_initial(flow, chain) for chain in chains)
    return RecurrentCell(
        path=f"unrolled:{first_steps['H'].node}", kind=last.kind, form="unrolled", initial=initial,
        hidden_size=hidden_size(flow, last, weights[0]), num_directions=len(chains),
        gate_nodes=tuple({k: s.node for k, s in d.steps[0].items()} for d in directions), framework=framework,
        reset_after=last.reset_after, gate_activation=last.gate_activation, activation=last.activation,
        normalized=any(m.normalized for chain in chains for m, _ in chain), weights=tuple(weights),
        conv=any(flow.index.nodes[p].op_type == "Conv" for chain in chains for m, _ in chain for p in m.products), layout=CellLayout(last.kind, "unrolled", tuple(directions)),
        step_inputs=tuple(inputs) if all(inputs) else ())
