"""What makes a loop run over time: the per-step reads of a body (a Scan's slices; in a Loop, a Gather or Slice
of a loop-invariant tensor at the iteration number or at a counter the body carries and steps), and whether the
tensor read was reversed in time before the loop (a backward direction)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..proto.body_signatures import BodySignature
from .dataflow import VIEW_OPS, Flows, GraphDataflow

READ_OPS = frozenset({"Gather", "Slice", "GatherElements", "GatherND", "SequenceAt", "Split"})
REVERSING = frozenset({"ReverseSequence"})


@dataclass(frozen=True)
class StepRead:
    """A value a body reads once per step: its name in the body, the outer tensor it is read from (views and a
    reversal in time looked through), and whether that tensor runs backwards in time."""

    value: str
    source: str
    reverse: bool


def counters(flow: GraphDataflow, signature: BodySignature) -> set[str]:
    """The body's step counters: a Loop's iteration number and every carried value it steps by a constant."""
    found = {signature.counter.name} if signature.counter is not None else set()
    for carried in signature.carried:
        poly = flow.expand(carried.output.name)
        if len(poly) == 2 and poly.get((carried.input.name,)) == 1.0 and () in poly:
            found.add(carried.input.name)
    return found


def step_reads(flows: Flows, flow: GraphDataflow, signature: BodySignature, outer_graph: str) -> list[StepRead]:
    """Every per-step read of the body of a Loop or Scan."""
    if signature.op_type == "Scan":
        return [StepRead(slot.name, *_unreversed(flows, outer_graph, slot.outer, slot.reverse))
                for slot in signature.scan_inputs]
    steps = counters(flow, signature)
    carried = {c.input.name for c in signature.carried} - steps
    found = []
    for name, node in flow.producer.items():
        if node.op_type not in READ_OPS or len(node.proto.input) < 2 or name != node.proto.output[0]:
            continue
        data = flow.strip(node.proto.input[0])
        indices = node.proto.input[1:]
        if not any(steps & flow.cone(i) for i in indices if i) or carried & flow.cone(data):
            continue
        source = data
        if not flow.is_outer(data):
            source = flow.strip(_outer_root(flow, data))
        found.append(StepRead(name, *_unreversed(flows, outer_graph, source, False)))
    return found


def _outer_root(flow: GraphDataflow, name: str) -> str:
    """The outer value a loop-invariant body value is computed from (its first input, repeatedly)."""
    for _ in range(16):
        node = flow.producer.get(name)
        if node is None or not node.proto.input:
            return name
        name = node.proto.input[0]
    return name


def _unreversed(flows: Flows, graph_path: str, name: str, reverse: bool) -> tuple[str, bool]:
    """The tensor `name` is, in the graph at `graph_path`, with a time reversal before it looked through."""
    if not name:
        return name, reverse
    outer = flows.of(graph_path)
    for _ in range(16):
        node = outer.producer.get(name)
        if node is None or not node.proto.input:
            break
        if node.op_type in REVERSING or node.op_type == "Slice" and _negative_steps(outer, node.proto.input):
            reverse = not reverse
        elif node.op_type not in VIEW_OPS | {"Transpose"}:
            break
        name = node.proto.input[0]
    return name, reverse


def _negative_steps(flow: GraphDataflow, inputs: Sequence[str]) -> bool:
    names = list(inputs)
    if len(names) < 5 or not names[4]:
        return False
    steps = flow.constant(names[4])
    return steps is not None and steps.size > 0 and bool((steps < 0).all())
