"""What each formal input and output of a control-flow body means (ONNX spec of If, Loop, Scan, SequenceMap):
texts like `carried ← v_initial`, plus the loop-carried (output, input) index pairs drawn as back edges."""
from __future__ import annotations

from dataclasses import dataclass

import onnx

from ..graph import attribute as attribute_value


@dataclass(frozen=True)
class BodyRoles:
    """Role texts of a body's formal inputs and outputs; `carried` pairs (output index, input index) whose
    value flows from one iteration into the next."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    carried: tuple[tuple[int, int], ...] = ()


def _name(names, i: int) -> str:
    return names[i] if i < len(names) and names[i] else "∅"


def body_roles(node: onnx.NodeProto, attribute: str, body: onnx.GraphProto, opset: int,
               is_sequence=lambda name: False) -> BodyRoles:
    """Roles for `body` (attribute `attribute` of `node`); `is_sequence(outer name)` tells SequenceMap whether
    an additional input is a sequence (iterated) or a tensor (passed whole)."""
    n_in, n_out = len(body.input), len(body.output)
    outer_in, outer_out = list(node.input), list(node.output)
    op = node.op_type if node.domain in ("", "ai.onnx") else ""
    if op == "If":
        return BodyRoles((), tuple(f"→ {_name(outer_out, i)}" for i in range(n_out)))
    if op == "Loop":
        carried = max(n_in - 2, 0)
        ins = ["iteration number", "condition in"][:n_in] + [
            f"carried ← {_name(outer_in, 2 + k)}" for k in range(carried)]
        outs = ["condition out"][:n_out] + [
            f"carried → {_name(outer_out, k)}" if k < carried
            else f"scan output → {_name(outer_out, k)} (stacked)"
            for k in range(n_out - 1)]
        pairs = ((0, 1),) if n_in >= 2 and n_out >= 1 else ()
        pairs += tuple((1 + k, 2 + k) for k in range(carried) if 1 + k < n_out)
        return BodyRoles(tuple(ins), tuple(outs), pairs)
    if op == "Scan":
        skip = 1 if opset < 9 else 0  # Scan-8 takes sequence_lens first
        scans = attribute_value(node, "num_scan_inputs", 0)
        state = max(n_in - scans, 0)
        in_axes = attribute_value(node, "scan_input_axes", [])
        in_dirs = attribute_value(node, "scan_input_directions", [])
        out_axes = attribute_value(node, "scan_output_axes", [])
        out_dirs = attribute_value(node, "scan_output_directions", [])
        ins = [f"state ← {_name(outer_in, skip + k)}" for k in range(state)]
        for j in range(n_in - state):
            axis = in_axes[j] if j < len(in_axes) else 0
            rev = ", reversed" if j < len(in_dirs) and in_dirs[j] else ""
            ins.append(f"slice of {_name(outer_in, skip + state + j)} (axis {axis}{rev})")
        outs = [f"state → {_name(outer_out, k)}" for k in range(min(state, n_out))]
        for j in range(n_out - len(outs)):
            axis = out_axes[j] if j < len(out_axes) else 0
            rev = ", reversed" if j < len(out_dirs) and out_dirs[j] else ""
            outs.append(f"scan output → {_name(outer_out, state + j)} (axis {axis}{rev})")
        return BodyRoles(tuple(ins), tuple(outs), tuple((k, k) for k in range(min(state, n_out))))
    if op == "SequenceMap":
        ins = []
        for i in range(n_in):
            outer = _name(outer_in, i)
            ins.append(f"element of {outer}" if i == 0 or is_sequence(outer) else f"= {outer}")
        outs = [f"→ sequence {_name(outer_out, i)}" for i in range(n_out)]
        return BodyRoles(tuple(ins), tuple(outs))
    return BodyRoles(tuple(f"formal input {i}" for i in range(n_in)),
                     tuple(f"formal output {i}" for i in range(n_out)))
