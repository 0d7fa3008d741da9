"""What each formal input and output of a control-flow body means, as text for the diagram (`carried ←
v_initial`), plus the loop-carried (output, input) index pairs drawn as back edges. The meaning itself comes
from the spec's body signature."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import onnx

from ..proto.body_signatures import BodySignature, Slot, body_signature


@dataclass(frozen=True)
class BodyRoles:
    """Role texts of a body's formal inputs and outputs; `carried` pairs (output index, input index) whose
    value flows from one iteration into the next."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    carried: tuple[tuple[int, int], ...] = ()


def _outer(slot: Slot) -> str:
    return slot.outer or "∅"


def _direction(slot: Slot) -> str:
    return f"axis {slot.axis}{', reversed' if slot.reverse else ''}"


def _texts(signature: BodySignature, is_sequence: Callable[[str], bool]) -> tuple[dict[int, str], dict[int, str]]:
    ins: dict[int, str] = {}
    outs: dict[int, str] = {}
    op = signature.op_type
    if signature.counter:
        ins[signature.counter.index] = "iteration number"
    if signature.cond_in:
        ins[signature.cond_in.index] = "condition in"
    if signature.cond_out:
        outs[signature.cond_out.index] = "condition out"
    word = "carried" if op == "Loop" else "state"
    for c in signature.carried:
        ins[c.input.index] = f"{word} ← {_outer(c.input)}"
        outs[c.output.index] = f"{word} → {_outer(c.output)}"
    for j, s in enumerate(signature.scan_inputs):
        if op == "SequenceMap":
            ins[s.index] = f"element of {_outer(s)}" if j == 0 or is_sequence(_outer(s)) else f"= {_outer(s)}"
        else:
            ins[s.index] = f"slice of {_outer(s)} ({_direction(s)})"
    for s in signature.scan_outputs:
        outs[s.index] = {"Loop": f"scan output → {_outer(s)} (stacked)",
                         "SequenceMap": f"→ sequence {_outer(s)}"}.get(op, f"scan output → {_outer(s)} ({_direction(s)})")
    for s in signature.results:
        outs[s.index] = f"→ {_outer(s)}"
    return ins, outs


def body_roles(node: onnx.NodeProto, attribute: str, body: onnx.GraphProto, opset: int,
               is_sequence: Callable[[str], bool] = lambda name: False) -> BodyRoles:
    """Roles for `body` (attribute `attribute` of `node`); `is_sequence(outer name)` tells SequenceMap whether
    an additional input is a sequence (iterated) or a tensor (passed whole)."""
    signature = body_signature(node, opset, attribute, body)
    ins, outs = _texts(signature, is_sequence)
    return BodyRoles(tuple(ins.get(i, f"formal input {i}") for i in range(len(body.input))),
                     tuple(outs.get(i, f"formal output {i}") for i in range(len(body.output))),
                     signature.carried_pairs)
