"""Which branch an If takes when that is known before running: a constant or known condition, or a rank check
that one branch's declared outputs contradict.

A rank check is `[Not](Equal(Size(Shape(v)), k))`. A branch returning `Unsqueeze/Squeeze/Identity` chains of `v`
under a declared shape pins `v`'s rank whenever that branch runs; if that rank contradicts the condition under
which the branch runs, the branch never runs in a run that keeps the model's declared types (the same trust
that reading declared shapes rests on), so the If always takes the other one. PyTorch exports of batched-or-not
RNN cells are made of such checks.
"""
from __future__ import annotations

import numpy as np
import onnx

from ...proto.weights import tensor_value
from ..ir import ONNX_DOMAINS, Node
from ..scope import graph_definitions
from ..state import GraphState
from ..tensors import constant_value, tensor_shape


def branch(node: Node, then: bool) -> onnx.GraphProto | None:
    name = "then_branch" if then else "else_branch"
    return next((a.g for a in node.attribute if a.name == name), None)


def decided(g: GraphState, node: Node) -> tuple[bool, str | None] | None:
    """(the branch taken: True for then, the fact it rests on or None for a constant condition), or None when
    unknown. A condition with more than one element is never decided."""
    cond = g.constant(node.input[0])
    if cond is None:
        known = g.known_value(node.input[0])
        if known is not None and known.size == 1 and isinstance(known.reshape(-1)[0], (bool, np.bool_)):
            cond = known
    if cond is not None:
        return (bool(np.asarray(cond).reshape(-1)[0]), None) if cond.size == 1 else None
    test = rank_test(g, node.input[0])
    if test is None:
        return None
    value, k, equal = test
    key = (g.path, node.input[0])
    if key not in g.ctx.conditions:
        g.ctx.conditions[key] = _contradiction(g, node.input[0], value, k, equal)
    return g.ctx.conditions[key]


def _contradiction(g: GraphState, cond: str, value: str, k: int, equal: bool) -> tuple[bool, str] | None:
    """The value of the rank check `cond` when a branch of some If reading it contradicts it, else None."""
    says = f"rank({value}) {'==' if equal else '!='} {k}"
    for reader in g.consumers(cond):
        if not reader.is_onnx("If") or reader.input[0] != cond:
            continue
        for then in (True, False):
            body = branch(reader, then)
            implied = None if body is None else implied_rank(g, body, value)
            if implied is not None and (implied == k) != (equal if then else not equal):
                return (not then, f"the {'then' if then else 'else'}_branch of {reader.name} declares outputs that "
                        f"give {value} rank {implied}, which its condition excludes: {says} is always {not then}")
    return None


def rank_test(g: GraphState, cond: str) -> tuple[str, int, bool] | None:
    """(v, k, equal) when `cond` is `rank(v) == k` (equal) or `rank(v) != k` (not equal), else None."""
    equal = True
    test = g.producer_op(cond, "Not", "Equal")
    if test is not None and test.op_type == "Not":
        equal, test = False, g.producer_op(test.input[0], "Equal")
    if test is None:
        return None
    for size_side, k_side in ((0, 1), (1, 0)):
        k = g.constant(test.input[k_side])
        size = g.producer_op(test.input[size_side], "Size")
        shape = None if size is None else g.producer_op(size.input[0], "Shape")
        if k is None or k.size != 1 or shape is None or len(shape.attribute):  # Shape with start/end: no rank
            continue
        return shape.input[0], int(k.reshape(-1)[0]), equal
    return None


def implied_rank(g: GraphState, body: onnx.GraphProto, value: str) -> int | None:
    """The rank `value` (an outer value) must have for some declared output of `body` to hold: an output
    reached from `value` through Identity, Unsqueeze and Squeeze with known axes, under a declared rank."""
    if value in graph_definitions(body):
        return None  # shadowed inside the branch
    producers = {o: n for n in body.node for o in n.output if o}
    for out in body.output:
        declared = tensor_shape(out.type) if out.HasField("type") else None
        if declared is None:
            continue
        name, delta = out.name, 0
        while name != value:
            step = producers.get(name)
            if step is None or step.domain not in ONNX_DOMAINS:
                break
            if step.op_type == "Identity":
                change = 0
            elif step.op_type in ("Unsqueeze", "Squeeze"):
                count = _axes_count(g, body, step, producers)
                if count is None:
                    break
                change = count if step.op_type == "Unsqueeze" else -count
            else:
                break
            delta += change
            name = step.input[0]
        else:
            return len(declared) - delta
    return None


def _axes_count(g: GraphState, body: onnx.GraphProto, node: onnx.NodeProto,
                producers: dict[str, onnx.NodeProto]) -> int | None:
    """How many axes a Squeeze/Unsqueeze of a branch names (attribute, or a constant of the branch or outside)."""
    if len(node.input) > 1 and node.input[1]:
        source = producers.get(node.input[1])
        if source is not None:
            value = constant_value(source) if source.op_type == "Constant" else None
        else:
            local = next((t for t in body.initializer if t.name == node.input[1]), None)
            value = tensor_value(local) if local is not None else g.constant(node.input[1])
        return None if value is None else int(np.asarray(value).size)
    for att in node.attribute:
        if att.name == "axes":
            return len(att.ints)
    return None
