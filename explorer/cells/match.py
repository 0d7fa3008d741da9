"""Which cell updates a carried state, read from the dataflow alone (names play no part):
- LSTM: C' = f (.) C + i (.) g and H' = o (.) act(C'), C' possibly layer-normalized (torchaudio's RNN-T);
- GRU: H' = (1 - z) (.) h~ + z (.) H in any of its spellings (also with the gate weighing the candidate, as RAFT's
  ConvGRU writes it: z is then recorded as the graph computes it), h~ = act(x.W + r (.) (H.R + b)) (reset after
  the recurrent product, PyTorch and Keras reset_after=True) or act(x.W + (r (.) H).R + b) (reset before it);
- RNN: H' = act(x.W + H.R + b);
- a state updated through a learned product of itself that is none of these: a "recurrence".
A mask that keeps the state at some steps (Where(mask, H', H)) is looked through and noted."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..spec.rnn import CELLS
from .dataflow import ACTIVATION_OPS, NORM_OPS, PRODUCT_OPS, SIGMOID_OPS, GraphDataflow, Poly


@dataclass
class Match:
    """What updates one carried state (two for an LSTM): series letter -> value name in the graph."""

    kind: str
    series: dict[str, str]
    states: tuple[str, ...]  # the state inputs the cell consumes (H, and C for an LSTM)
    reset_after: bool | None = None
    gate_activation: str = "Sigmoid"
    activation: str = "Tanh"
    mask: str | None = None  # the condition under which the state takes its new value
    products: list[str] = field(default_factory=list)  # the nodes' paths of the learned products of the state
    normalized: bool = False  # a layer normalization between the products and the gates, or on the cell state
    operator: str = ""  # a GRU/LSTM/RNN operator over one step computes the update (its path)


def unmask(flow: GraphDataflow, new: str, old: str) -> tuple[str, str | None]:
    """`new` with a mask that keeps the old state looked through: Where(mask, updated, old), or its arithmetic
    spelling Cast(mask) * updated + Cast(Not(mask)) * old (tf2onnx's SelectV2). (updated, mask), else
    (new, None)."""
    node = flow.producer.get(flow.strip(new))
    if node is None:
        return new, None
    if node.op_type == "Where" and len(node.proto.input) == 3:
        cond, a, b = node.proto.input
        if flow.strip(b) == old:
            return a, cond
    if node.op_type != "Add" or len(node.proto.input) != 2:
        return new, None
    products = [_operands(flow, i) for i in node.proto.input]
    for keep, take in (products, products[::-1]):
        mask = next((_negated(flow, w) for s, w in (keep, keep[::-1]) if s == old and _negated(flow, w)), None)
        if mask is not None:
            updated = next((u for u, w in (take, take[::-1]) if w == mask), None)
            if updated is not None:
                return updated, mask
    return new, None


def _operands(flow: GraphDataflow, name: str) -> tuple[str, str]:
    """The two operands of a Mul (looked through views), or ("", "")."""
    node = flow.producer.get(flow.strip(name))
    if node is None or node.op_type != "Mul" or len(node.proto.input) != 2:
        return "", ""
    return flow.strip(node.proto.input[0]), flow.strip(node.proto.input[1])


def _negated(flow: GraphDataflow, name: str) -> str | None:
    """The mask `name` is the negation of (Not(mask), looked through views), else None."""
    node = flow.producer.get(name)
    return flow.strip(node.proto.input[0]) if node is not None and node.op_type == "Not" else None


def is_gate(flow: GraphDataflow, value: str) -> bool:
    """Whether `value` is a gate: a sigmoid, or a hard sigmoid written out (Clip(x + 3, 0, 6) / 6, Keras 3)."""
    return gate_activation(flow, value) != ""


def gate_activation(flow: GraphDataflow, value: str) -> str:
    """"Sigmoid" or "HardSigmoid" for a gate value, "" for anything else."""
    node = flow.activation_node(value)
    if node is not None:
        return node.op_type if node.op_type in SIGMOID_OPS else ""
    poly = flow.expand(value)
    if len(poly) == 1:
        ((term, scale),) = poly.items()
        clip = flow.producer.get(term[0]) if len(term) == 1 else None
        if clip is not None and clip.op_type == "Clip" and len(clip.proto.input) == 3:
            low, high = (flow.constant(i) for i in clip.proto.input[1:])
            if low is not None and high is not None and float(low) == 0.0 and abs(float(high) * scale - 1) < 1e-6:
                return "HardSigmoid"
    return ""


def scaled(flow: GraphDataflow, atom: str, scale: float) -> str | None:
    """The value that is `scale` times `atom` in the graph (the atom itself for 1): a Mul by a constant or a
    Div by one on it."""
    if scale == 1.0:
        return atom
    for node in flow.consumers.get(atom, []):
        if node.op_type in ("Mul", "Div") and len(node.proto.output) == 1:
            poly = flow.expand(node.proto.output[0])
            if poly == {(atom,): scale}:
                return node.proto.output[0]
    return None


def expand_gates(flow: GraphDataflow, value: str, states: frozenset[str] = frozenset()) -> Poly:
    """`value` as a polynomial whose coefficients a scaled gate has absorbed: a hard sigmoid written as
    Clip(x + 3, 0, 6) / 6 expands to (1/6) * Clip(...), which reads back as the gate value itself."""
    out: Poly = {}
    for term, coefficient in flow.expand(value, atoms=states).items():
        size = abs(coefficient)
        if term and size != 1.0:
            for k, atom in enumerate(term):
                found = scaled(flow, atom, size)
                if found is not None:
                    term, coefficient = tuple(sorted(term[:k] + (found,) + term[k + 1:])), coefficient / size
                    break
        out[term] = out.get(term, 0.0) + coefficient
    return out


def _is(flow: GraphDataflow, value: str, ops: frozenset[str] | set[str]) -> bool:
    node = flow.activation_node(value)
    return node is not None and node.op_type in ops


def _act(flow: GraphDataflow, value: str) -> str:
    node = flow.activation_node(value)
    return node.op_type if node is not None else ""


def _products_of(flow: GraphDataflow, value: str, state: str) -> list[str]:
    """The learned products that read `state` (through views and elementwise ops) on the way to `value`."""
    found = []
    for name in flow.cone(value, stop={state}):
        node = flow.producer.get(name)
        if node is not None and node.op_type in PRODUCT_OPS and node.proto.input and \
                state in flow.cone(node.proto.input[0], stop={state}):
            found.append(node.path)
    return sorted(set(found))


def unnormalized(flow: GraphDataflow, value: str) -> str:
    """What a layer normalization producing `value` normalizes (torchaudio's layer-normalized LSTM normalizes its
    cell state), else `value`."""
    node = flow.producer.get(flow.strip(value))
    return node.proto.input[0] if node is not None and node.op_type in NORM_OPS and node.proto.input else value


def match_lstm(flow: GraphDataflow, h_in: str, h_out: str, c_in: str, c_out: str,
               recurrent: bool = True) -> Match | None:
    """An LSTM step from (h_in, c_in) to (h_out, c_out); `recurrent=False` for a first step whose zero initial
    state the exporter folded away (its gates read no state)."""
    c_new, c_mask = unmask(flow, c_out, c_in)
    h_new, h_mask = unmask(flow, h_out, h_in)
    pc = expand_gates(flow, unnormalized(flow, c_new), frozenset((h_in, c_in)))
    if len(pc) != 2 or any(c != 1.0 or len(t) != 2 for t, c in pc.items()):
        return None
    with_c = [t for t in pc if c_in in t]
    if len(with_c) != 1:
        return None
    f = next(a for a in with_c[0] if a != c_in) if with_c[0].count(c_in) == 1 else None
    other = next(t for t in pc if t is not with_c[0])
    if f is None or c_in in other:
        return None
    i, g = other if is_gate(flow, other[0]) and not is_gate(flow, other[1]) else other[::-1]
    ph = expand_gates(flow, h_new, frozenset((h_in, c_in)))
    if len(ph) != 1:
        return None
    (term, coefficient), = ph.items()
    if coefficient != 1.0 or len(term) != 2:
        return None
    c_key = flow.strip(c_new)
    o = next((a for a, b in (term, term[::-1]) if _applied_to(flow, b, c_key)), None)
    if o is None or not all(is_gate(flow, v) for v in (f, i, o)) or not _is(flow, g, ACTIVATION_OPS):
        return None
    if recurrent and h_in not in flow.cone(i, stop={h_in}) and h_in not in flow.cone(g, stop={h_in}):
        return None  # the gates must read the state: else it is not recurrent
    series = {"i": i, "o": o, "f": f, "c": g, "C": c_out, "H": h_out}
    normalized = unnormalized(flow, c_new) != c_new or any(
        node is not None and node.op_type in NORM_OPS
        for node in (flow.producer.get(name) for name in flow.cone(i, stop={h_in, c_in})))
    return Match("LSTM", series, (h_in, c_in), None, gate_activation(flow, i), _act(flow, g), h_mask or c_mask,
                 _products_of(flow, i, h_in), normalized=normalized)


def _applied_to(flow: GraphDataflow, value: str, target: str) -> bool:
    """Whether `value` is an activation applied to `target` (looked through views)."""
    node = flow.activation_node(value)
    return node is not None and node.op_type in ACTIVATION_OPS and bool(node.proto.input) and \
        flow.strip(node.proto.input[0]) == target


def match_gru(flow: GraphDataflow, h_in: str, h_out: str) -> Match | None:
    h_new, mask = unmask(flow, h_out, h_in)
    p = expand_gates(flow, h_new, frozenset((h_in,)))
    z, n = _interpolation(p, h_in)
    if z is None or n is None or not is_gate(flow, z):
        return None
    candidate = flow.activation_node(n)
    if candidate is None or candidate.op_type not in ACTIVATION_OPS or not candidate.proto.input:
        return None
    pre = candidate.proto.input[0]
    r, reset_after = _reset_gate(flow, pre, h_in, z)
    if r is None:
        return None
    series = {"z": z, "r": r, "h": n, "H": h_out}
    return Match("GRU", series, (h_in,), reset_after, gate_activation(flow, z), candidate.op_type, mask,
                 _products_of(flow, h_new, h_in))


def _interpolation(p: Poly, h_in: str) -> tuple[str | None, str | None]:
    """(z, n) when p = z*h_in + n - z*n, the GRU's (1 - z) n + z h; or when p = h_in - z*h_in + z*n, the same
    interpolation with the gate weighing the candidate (RAFT's ConvGRU: (1 - z) h + z q), z then being the graph's
    gate, 1 - the spec's."""
    if len(p) != 3:
        return None, None
    with_h = [t for t in p if h_in in t and len(t) == 2 and t.count(h_in) == 1]
    if len(with_h) != 1 or abs(p[with_h[0]]) != 1.0:
        return None, None
    z = next(a for a in with_h[0] if a != h_in)
    if p[with_h[0]] == -1.0:  # h - z h + z n
        pairs = [t for t in p if len(t) == 2 and z in t and h_in not in t and p[t] == 1.0]
        if p.get((h_in,)) != 1.0 or len(pairs) != 1 or pairs[0].count(z) != 1:
            return None, None
        return z, next(a for a in pairs[0] if a != z)
    singles = [t for t in p if len(t) == 1 and t != (h_in,)]
    if len(singles) != 1 or p[singles[0]] != 1.0:
        return None, None
    n = singles[0][0]
    pair = tuple(sorted((n, z)))
    return (z, n) if p.get(pair) == -1.0 else (None, None)


def _reset_gate(flow: GraphDataflow, pre: str, h_in: str, z: str) -> tuple[str | None, bool | None]:
    """The reset gate inside the candidate's pre-activation, and whether it is applied after the recurrent
    product (r (.) (H.R + b)) rather than to the state before it ((r (.) H).R)."""
    for term in expand_gates(flow, pre, frozenset((h_in,))):
        if len(term) == 2:
            for r, rest in (term, term[::-1]):
                if r != z and is_gate(flow, r) and not is_gate(flow, rest) and h_in in flow.cone(rest, stop={h_in}):
                    return r, True
    for name in flow.cone(pre, stop={h_in}):
        node = flow.producer.get(name)
        if node is None or node.op_type != "Mul" or len(node.proto.input) != 2:
            continue
        a, b = (flow.strip(i) for i in node.proto.input)
        for r, state in ((a, b), (b, a)):
            if state == h_in and r != z and is_gate(flow, r):
                return r, False
    return None, None


def match_rnn(flow: GraphDataflow, h_in: str, h_out: str) -> Match | None:
    h_new, mask = unmask(flow, h_out, h_in)
    node = flow.producer.get(flow.strip(h_new))
    if node is None or node.op_type not in ACTIVATION_OPS or not node.proto.input:
        return None
    pre = node.proto.input[0]
    products = _products_of(flow, pre, h_in)
    terms = flow.expand(pre, atoms=frozenset((h_in,)))
    if not products or not any(h_in in flow.cone(t[0], stop={h_in}) for t in terms if len(t) == 1):
        return None
    return Match("RNN", {"a": pre, "H": h_out}, (h_in,), None, "", node.op_type, mask, products)


def match_recurrence(flow: GraphDataflow, h_in: str, h_out: str) -> Match | None:
    """A state updated through a learned product of itself (a cell explorer does not know by name)."""
    h_new, mask = unmask(flow, h_out, h_in)
    products = _products_of(flow, h_new, h_in)
    if not products:
        return None
    return Match("recurrence", {"H": h_out}, (h_in,), None, "", "", mask, products)


def match_state(flow: GraphDataflow, h_in: str, h_out: str) -> Match | None:
    """The cell updating one carried state (GRU, RNN, recurrence), None when none does."""
    return match_gru(flow, h_in, h_out) or match_rnn(flow, h_in, h_out) or match_recurrence(flow, h_in, h_out)



def operator_steps(flow: GraphDataflow, states: list[tuple[str, str, str]],
                   used: set[str]) -> list[tuple[Match, dict[str, str]]]:
    """Carried states a GRU/LSTM/RNN operator over one step updates (TorchScript's LSTMCell in a loop): the
    operator starts from the state (initial_h, initial_c) and its Y_h (Y_c) is carried on."""
    found = []
    for node in dict.fromkeys(flow.producer.values()):
        if node.op_type not in CELLS or node.domain not in ("", "ai.onnx"):
            continue
        inputs = list(node.proto.input) + [""] * 8
        outputs = list(node.proto.output) + [""] * 3
        carried = {letter: next(((h_in, h0) for h_in, h_out, h0 in states if h_in not in used
                                 and flow.strip(inputs[position]) == h_in and flow.strip(h_out) == outputs[out]), None)
                   for letter, position, out in (("H", 5, 1), ("C", 6, 2))}
        if carried["H"] is None:
            continue
        kind = node.op_type
        names = {"H": carried["H"][0]}
        initial = {"H": carried["H"][1]}
        if kind == "LSTM" and carried["C"] is not None:
            names["C"], initial["C"] = carried["C"]
        series = {letter: node.path for letter in CELLS[kind].computed}
        used.update(names.values())
        found.append((Match(kind, series, tuple(names.values()), None, "Sigmoid", "Tanh", operator=node.path),
                      initial))
    return found
