"""Which value of one side is which value of the other. First by node path and value name, then by value name
alone (a node renamed or re-indexed, an op fused into another that kept its output's name), then by the
sequence of producing ops in execution order (a re-export that renamed everything, an optimized model): the
two sequences of nodes, each token an op type with its output shapes and loop depth, are matched as a longest
common subsequence and matched nodes pair their outputs by position. What is left is listed, with why."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from .recording import Key, Produced, Recording


@dataclass(frozen=True)
class Pair:
    a: Produced
    b: Produced
    how: str  # "node and name", "value name", "op sequence"


@dataclass(frozen=True)
class Unaligned:
    side: str  # "A" or "B"
    node: str
    name: str
    op_type: str
    reason: str


def _shape(value: object) -> tuple:
    return tuple(value.shape) if isinstance(value, np.ndarray) else (type(value).__name__,)


def _node_tokens(recording: Recording) -> tuple[list[str], list[tuple]]:
    """Nodes in first-execution order and one token per node: op type, output shapes, loop depth."""
    nodes: dict[str, list[Produced]] = {}
    for p in recording.in_order():
        nodes.setdefault(p.node, []).append(p)
    tokens = []
    for outputs in nodes.values():
        first = outputs[0]
        iteration = min(first.values, key=lambda it: first.order.get(it, 0), default=())
        tokens.append((first.op_type, len(iteration),
                       tuple(_shape(o.values.get(iteration)) for o in sorted(outputs, key=lambda o: o.position))))
    return list(nodes), tokens


def align(a: Recording, b: Recording) -> tuple[list[Pair], list[Unaligned]]:
    """Pairs of the same value on both sides, in A's execution order, and what could not be paired."""
    pairs: dict[Key, Pair] = {}
    taken: set[Key] = set()

    def pair(pa: Produced, pb: Produced, how: str) -> None:
        pairs[pa.key] = Pair(pa, pb, how)
        taken.add(pb.key)

    for key, pa in a.produced.items():
        if key in b.produced:
            pair(pa, b.produced[key], "node and name")
    left_a = {k: p for k, p in a.produced.items() if k not in pairs}
    left_b_by_name: dict[str, list[Produced]] = {}
    for key, pb in b.produced.items():
        if key not in taken:
            left_b_by_name.setdefault(pb.name, []).append(pb)
    a_by_name: dict[str, list[Produced]] = {}
    for pa in left_a.values():
        a_by_name.setdefault(pa.name, []).append(pa)
    for name, candidates in a_by_name.items():
        others = left_b_by_name.get(name, [])
        if len(candidates) == 1 and len(others) == 1:
            pair(candidates[0], others[0], "value name")

    if any(k not in pairs for k in a.produced) and any(k not in taken for k in b.produced):
        _by_op_sequence(a, b, pairs, taken, pair)

    unaligned = [Unaligned("A", p.node, p.name, p.op_type, b.missing.get(p.key) or "no counterpart on side B")
                 for p in a.in_order() if p.key not in pairs]
    unaligned += [Unaligned("B", p.node, p.name, p.op_type, "no counterpart on side A")
                  for p in b.in_order() if p.key not in taken]
    unaligned += [Unaligned("B", node, name, "", reason) for (node, name), reason in b.missing.items()
                  if (node, name) not in a.produced]
    ordered = sorted(pairs.values(), key=lambda p: p.a.first_order)
    return ordered, unaligned


def _by_op_sequence(a: Recording, b: Recording, pairs: dict[Key, Pair], taken: set[Key], pair) -> None:
    nodes_a, tokens_a = _node_tokens(a)
    nodes_b, tokens_b = _node_tokens(b)
    outputs_b: dict[str, dict[int, Produced]] = {}
    for pb in b.produced.values():
        outputs_b.setdefault(pb.node, {})[pb.position] = pb
    matcher = difflib.SequenceMatcher(None, tokens_a, tokens_b, autojunk=False)
    mapped: dict[str, str] = {}
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            mapped[nodes_a[block.a + k]] = nodes_b[block.b + k]
    for key, pa in a.produced.items():
        if key in pairs or pa.node not in mapped:
            continue
        found = outputs_b.get(mapped[pa.node], {}).get(pa.position)
        if found is not None and found.key not in taken:
            pair(pa, found, "op sequence")
