"""The formal inputs and outputs of control-flow bodies as the ONNX spec defines them (If, Loop, Scan-8,
Scan-9+, SequenceMap): which body input is the iteration counter, the condition, loop-carried state or a scan
slice (with its axis and direction), and which body output is carried, stacked or becomes a node output."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import onnx

from .graph import attribute as attribute_value


@dataclass(frozen=True)
class Slot:
    """One formal input or output of a body: its position and name there, the node's value it comes from or
    becomes (`outer`, "" when the node omits it), and for scan slices and scan outputs the axis along which
    they are sliced or stacked and whether that axis is walked backwards."""

    index: int
    name: str
    outer: str = ""
    axis: int = 0
    reverse: bool = False


@dataclass(frozen=True)
class Carried:
    """A loop-carried value: the body input holding it and the body output that feeds it to the next
    iteration; `input.outer` is its initial value, `output.outer` the node output with its final value."""

    input: Slot
    output: Slot


@dataclass(frozen=True)
class BodySignature:
    """What each formal input and output of one body means (see the module docstring). `problems` lists, in
    the order a runtime checks them, where the node and its body disagree with the spec (empty when valid)."""

    op_type: str
    attribute: str
    inputs: tuple[str, ...]  # the body's formal input names
    outputs: tuple[str, ...]  # the body's formal output names
    counter: Slot | None = None  # Loop: the iteration number
    cond_in: Slot | None = None  # Loop: the condition in (outer: the node's initial cond, "" when omitted)
    cond_out: Slot | None = None  # Loop: the condition the body computes for the next iteration
    max_trip_count: str = ""  # Loop: the node's trip count input, "" when omitted
    carried: tuple[Carried, ...] = ()  # Loop: carried values; Scan: state variables
    scan_inputs: tuple[Slot, ...] = ()  # Scan: slices; SequenceMap: every input (a tensor is passed whole)
    scan_outputs: tuple[Slot, ...] = ()  # Scan/Loop: stacked per iteration; SequenceMap: collected
    results: tuple[Slot, ...] = ()  # If: each branch output and the node output it becomes
    sequence_lens: str | None = None  # Scan-8: the node's sequence_lens input ("" when omitted)
    batch_axis: int | None = None  # Scan-8: inputs and outputs are [batch, sequence, ...]
    problems: tuple[str, ...] = ()

    @property
    def carried_pairs(self) -> tuple[tuple[int, int], ...]:
        """(body output index, body input index) of every value flowing from one iteration into the next."""
        pairs = ((self.cond_out.index, self.cond_in.index),) if self.cond_out and self.cond_in else ()
        return pairs + tuple((c.output.index, c.input.index) for c in self.carried)


def _at(names: Sequence[str], i: int) -> str:
    return names[i] if 0 <= i < len(names) else ""


def _check_list(name: str, values: list[int], count: int, allowed: tuple[int, ...] | None = None) -> list[str]:
    """A per-input/per-output attribute must have one entry each (when given), from `allowed` values."""
    found = []
    if values and len(values) != count:
        found.append(f"{name} has {len(values)} entries for {count} values")
    if allowed is not None and any(v not in allowed for v in values):
        found.append(f"{name} {values} may only hold {' or '.join(map(str, allowed))}")
    return found


def _check_body(attribute: str, body_in: int, body_out: int, inputs: int, outputs: int, node_out: int,
                carried: int = 0) -> list[str]:
    """A body must take exactly `inputs` formal inputs and make `outputs` outputs; the node must declare at least
    its `carried` loop-carried (or state) outputs."""
    if body_in != inputs:
        return [f"its {attribute} has {body_in} inputs, the node passes it {inputs}"]
    if body_out != outputs:
        return [f"its {attribute} has {body_out} outputs, the node needs {outputs}"]
    if node_out < carried:
        return [f"it declares {node_out} outputs for {carried} carried values"]
    return []


def _ints(node: onnx.NodeProto, name: str) -> list[int]:
    return [int(v) for v in attribute_value(node, name, []) or []]


def body_signature(node: onnx.NodeProto, opset: int, attribute: str = "body",
                   body: onnx.GraphProto | None = None) -> BodySignature:
    """The signature of the body `attribute` of an If/Loop/Scan/SequenceMap `node` at default-domain `opset`;
    `body` defaults to the node's own attribute graph. Tolerant of malformed nodes: what does not fit the spec is
    listed in `problems`, and each slot exists only where both the node and its body have it."""
    if body is None:
        body = next((a.g for a in node.attribute if a.name == attribute and a.type == onnx.AttributeProto.GRAPH),
                    onnx.GraphProto())
    ins = tuple(i.name for i in body.input)
    outs = tuple(o.name for o in body.output)
    op = node.op_type if node.domain in ("", "ai.onnx") else ""
    builder = {"If": _if, "Loop": _loop, "Scan": _scan, "SequenceMap": _sequence_map}.get(op)
    if builder is None:
        return BodySignature(node.op_type, attribute, ins, outs)
    return builder(node, opset, attribute, ins, outs)


def _if(node: onnx.NodeProto, opset: int, attribute: str, ins: tuple[str, ...],
        outs: tuple[str, ...]) -> BodySignature:
    node_out = list(node.output)
    problems = [] if node.input and node.input[0] else ["the cond input is missing"]
    problems += _check_body(attribute, len(ins), len(outs), 0, len(node_out), len(node_out))
    results = tuple(Slot(i, name, _at(node_out, i)) for i, name in enumerate(outs))
    return BodySignature("If", attribute, ins, outs, results=results, problems=tuple(problems))


def _loop(node: onnx.NodeProto, opset: int, attribute: str, ins: tuple[str, ...],
          outs: tuple[str, ...]) -> BodySignature:
    node_in, node_out = list(node.input), list(node.output)
    n = max(len(node_in) - 2, 0)
    problems = _check_body(attribute, len(ins), len(outs), 2 + n, 1 + len(node_out), len(node_out), n)
    counter = Slot(0, ins[0]) if ins else None
    cond_in = Slot(1, ins[1], _at(node_in, 1)) if len(ins) > 1 else None
    cond_out = Slot(0, outs[0]) if outs else None
    carried = tuple(Carried(Slot(2 + k, ins[2 + k], _at(node_in, 2 + k)), Slot(1 + k, outs[1 + k], _at(node_out, k)))
                    for k in range(n) if 2 + k < len(ins) and 1 + k < len(outs))
    scans = tuple(Slot(1 + k, outs[1 + k], _at(node_out, k)) for k in range(n, len(outs) - 1))
    return BodySignature("Loop", attribute, ins, outs, counter, cond_in, cond_out, _at(node_in, 0), carried,
                         scan_outputs=scans, problems=tuple(problems))


def _scan(node: onnx.NodeProto, opset: int, attribute: str, ins: tuple[str, ...],
          outs: tuple[str, ...]) -> BodySignature:
    skip = 1 if opset < 9 else 0  # Scan-8 takes sequence_lens first
    node_in, node_out = list(node.input), list(node.output)
    m = attribute_value(node, "num_scan_inputs")
    n_inputs = len(node_in) - skip
    problems: list[str] = []
    if m is None:
        problems.append("the required attribute num_scan_inputs is missing")
        m = 0
    elif not 1 <= m <= n_inputs:
        problems.append(f"num_scan_inputs={m} for {n_inputs} inputs")
    else:
        problems += _check_body(attribute, len(ins), len(outs), n_inputs, len(node_out), len(node_out), n_inputs - m)
    state = max(len(ins) - m, 0)
    k = len(outs) - min(state, len(outs))
    if skip:
        directions = _ints(node, "directions")
        problems += _check_list("directions", directions, m, (0, 1))
        in_axes, in_dirs, out_axes, out_dirs = [1] * m, directions, [1] * k, []
    else:
        in_axes, in_dirs = _ints(node, "scan_input_axes"), _ints(node, "scan_input_directions")
        out_axes, out_dirs = _ints(node, "scan_output_axes"), _ints(node, "scan_output_directions")
        problems += _check_list("scan_input_axes", in_axes, m)
        problems += _check_list("scan_input_directions", in_dirs, m, (0, 1))
        problems += _check_list("scan_output_axes", out_axes, k)
        problems += _check_list("scan_output_directions", out_dirs, k, (0, 1))
    carried = tuple(Carried(Slot(j, ins[j], _at(node_in, skip + j)), Slot(j, outs[j], _at(node_out, j)))
                    for j in range(min(state, len(outs))))
    scan_in = tuple(Slot(state + j, ins[state + j], _at(node_in, skip + state + j), _at_int(in_axes, j),
                         bool(_at_int(in_dirs, j))) for j in range(len(ins) - state))
    scan_out = tuple(Slot(len(outs) - k + j, outs[len(outs) - k + j], _at(node_out, len(outs) - k + j),
                          _at_int(out_axes, j), bool(_at_int(out_dirs, j))) for j in range(k))
    return BodySignature("Scan", attribute, ins, outs, carried=carried, scan_inputs=scan_in, scan_outputs=scan_out,
                         sequence_lens=_at(node_in, 0) if skip else None, batch_axis=0 if skip else None,
                         problems=tuple(problems))


def _at_int(values: list[int], j: int) -> int:
    return values[j] if j < len(values) else 0


def _sequence_map(node: onnx.NodeProto, opset: int, attribute: str, ins: tuple[str, ...],
                  outs: tuple[str, ...]) -> BodySignature:
    node_in, node_out = list(node.input), list(node.output)
    problems = _check_body(attribute, len(ins), len(outs), len(node_in), len(node_out), len(node_out))
    elements = tuple(Slot(i, name, _at(node_in, i)) for i, name in enumerate(ins))
    collected = tuple(Slot(i, name, _at(node_out, i)) for i, name in enumerate(outs))
    return BodySignature("SequenceMap", attribute, ins, outs, scan_inputs=elements, scan_outputs=collected,
                         problems=tuple(problems))
