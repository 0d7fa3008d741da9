"""Which value of one side is which value of the other. First by node path and value name, then by value name
alone (a node renamed or re-indexed, an op fused into another that kept its output's name), then by producers
(a re-export that renamed everything, an optimized model: see structure.py), matched nodes pairing their
outputs by position; inside bodies, executions pair by iteration tuple. Two Constants are never paired by name
alone when their contents differ (exporters number them `/Constant_3` whatever they hold): their consumers then
show the difference. What is left is listed, with why."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .recording import Key, Produced, Recording
from .structure import match_nodes, other_constant


@dataclass(frozen=True)
class Pair:
    a: Produced
    b: Produced
    how: str  # "node and name", "value name", "producers"


@dataclass(frozen=True)
class Unaligned:
    side: str  # "A" or "B"
    node: str
    name: str
    op_type: str
    reason: str


PairFn = Callable[[Produced, Produced, str], None]


def align(a: Recording, b: Recording) -> tuple[list[Pair], list[Unaligned]]:
    """Pairs of the same value on both sides, in A's execution order, and what could not be paired."""
    pairs: dict[Key, Pair] = {}
    taken: set[Key] = set()
    reasons: dict[Key, str] = {}

    def pair(pa: Produced, pb: Produced, how: str) -> None:
        if how != "producers" and a.model is not None and b.model is not None \
                and other_constant(a.model, b.model, pa.node, pb.node):
            reasons[pa.key] = reasons[pb.key] = (f"a Constant of the same name on the other side holds other "
                                                 f"values ({pb.node!r} / {pa.node!r})")
            return
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

    if a.model is not None and b.model is not None and any(k not in pairs for k in a.produced) \
            and any(k not in taken for k in b.produced):
        _by_producers(a, b, pairs, taken, pair)

    unaligned = [Unaligned("A", p.node, p.name, p.op_type,
                           b.missing.get(p.key) or reasons.get(p.key) or "no counterpart on side B")
                 for p in a.in_order() if p.key not in pairs]
    unaligned += [Unaligned("B", p.node, p.name, p.op_type, reasons.get(p.key) or "no counterpart on side A")
                  for p in b.in_order() if p.key not in taken]
    unaligned += [Unaligned("B", node, name, "", reason) for (node, name), reason in b.missing.items()
                  if (node, name) not in a.produced]
    ordered = sorted(pairs.values(), key=lambda p: p.a.first_order)
    return ordered, unaligned


def _by_producers(a: Recording, b: Recording, pairs: dict[Key, Pair], taken: set[Key], pair: PairFn) -> None:
    assert a.model is not None and b.model is not None
    seeds = {p.a.node: p.b.node for p in pairs.values()}
    mapped = match_nodes(a.model, b.model, seeds)
    outputs_b: dict[str, dict[int, Produced]] = {}
    for pb in b.produced.values():
        outputs_b.setdefault(pb.node, {})[pb.position] = pb
    for key, pa in a.produced.items():
        if key in pairs or pa.node not in mapped:
            continue
        found = outputs_b.get(mapped[pa.node], {}).get(pa.position)
        if found is not None and found.key not in taken:
            pair(pa, found, "producers")
