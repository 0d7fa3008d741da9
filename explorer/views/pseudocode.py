"""The C-style pseudo-code of the Scan and Loop specs, written with a node's real names and attribute values,
and the values of one recorded iteration filled in as comments."""
from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from ..proto.body_signatures import body_signature
from ..proto.graph import NodeRef
from ..trace.trace import Iteration, Trace
from ..trace.values import ValueSummary, type_text

MAX_INLINE = 8
LOOP_OPSET = 21  # Loop's body signature is the same at every opset


def format_value(value: Any) -> str:
    """Compact text of a value: small tensors in full, larger ones as dtype[shape] with their range."""
    if value is None:
        return "<empty>"
    if isinstance(value, ValueSummary):
        return f"{type_text(value.dtype, value.shape)} min={value.min} max={value.max} (summary)"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value[:4]) + (", ..." if len(value) > 4 else "") + "]"
    array = np.asarray(value)
    if array.size <= MAX_INLINE:
        if array.dtype.kind == "f":
            return np.array2string(array, precision=4, separator=", ", suppress_small=True).replace("\n", "")
        return np.array2string(array, separator=", ").replace("\n", "")
    head = type_text(array.dtype, array.shape)
    if array.dtype.kind in "biuf" and array.size:
        return f"{head} min={array.min():.4g} max={array.max():.4g} mean={array.mean():.4g}"
    return head


def _body(node: NodeRef, attribute: str = "body") -> onnx.GraphProto:
    return next(g.proto for g in node.subgraphs if g.attribute == attribute)


def _body_lines(body: onnx.GraphProto, indent: str) -> list[str]:
    lines = [f"{indent}// loop-body '{body.name}' ({len(body.node)} nodes):"]
    for n in body.node:
        inputs = ", ".join(i or "<none>" for i in n.input)
        outputs = ", ".join(o for o in n.output if o)
        lines.append(f"{indent}{outputs} = {n.op_type}({inputs});")
    return lines


def _pick(trace: Trace | None, path: str, iteration: tuple[int, ...] | None) -> Iteration | None:
    if trace is None:
        return None
    records = trace.iterations(path)
    if not records:
        return None
    if iteration is None:
        return records[0]
    for record in records:
        if record.index == tuple(iteration):
            return record
    return None


def _note(record: Iteration | None, name: str, outputs: bool = False) -> str:
    if record is None:
        return ""
    values = record.outputs if outputs else record.inputs
    return f"  // = {format_value(values[name])}" if name in values else ""


def loop_pseudocode(node: NodeRef, trace: Trace | None = None, iteration: tuple[int, ...] | None = None) -> str:
    """The Loop spec's C-style loop for this node; values from the chosen iteration (default: the first)."""
    body = _body(node)
    signature = body_signature(node.proto, LOOP_OPSET, "body", body)
    if signature.counter is None or signature.cond_in is None or signature.cond_out is None:
        raise ValueError(f"Loop {node.path!r}: its body lacks the iteration number, cond in or cond out")
    trip, cond = signature.max_trip_count, signature.cond_in.outer
    iter_name, cond_in = signature.counter.name, signature.cond_in.name
    carried_in = [c.input.name for c in signature.carried]
    scan_out = [s.name for s in signature.scan_outputs]
    stacks = [s.outer or f"{s.name}s" for s in signature.scan_outputs]
    record = _pick(trace, node.path, iteration)
    mode = {(True, True): "trip count and cond", (True, False): "trip count only (a for loop)",
            (False, True): "cond only (a while loop)", (False, False): "neither (runs until the body's cond "
            "is false)"}[(bool(trip), bool(cond))]
    lines = [f"// Loop '{node.path}': {mode}"]
    lines.append(f"int64 max_trip_count = {trip};" if trip else "// max_trip_count omitted: no bound")
    lines.append(f"bool {cond_in} = {cond};" if cond else f"bool {cond_in} = true;  // cond omitted")
    for c in signature.carried:
        lines.append(f"{c.input.name} = {c.input.outer};  // loop-carried")
    for stack in stacks:
        lines.append(f"{stack} = [];  // scan output, stacked along a new axis 0")
    bound = f"{iter_name} < max_trip_count && {cond_in}" if trip else cond_in
    lines.append(f"for (int64 {iter_name} = 0; {bound}; ++{iter_name}) {{")
    if record is not None:
        lines.append(f"    // values at iteration {record.index}:")
        for name in [iter_name, cond_in, *carried_in]:
            lines.append(f"    //   {name} = {format_value(record.inputs.get(name))}")
    lines.extend(_body_lines(body, "    "))
    cond_out = signature.cond_out.name
    lines.append(f"    {cond_in} = {cond_out};{_note(record, cond_out, outputs=True)}")
    for c in signature.carried:
        lines.append(f"    {c.input.name} = {c.output.name};{_note(record, c.output.name, outputs=True)}")
    for name, stack in zip(scan_out, stacks):
        lines.append(f"    {stack}.append({name});{_note(record, name, outputs=True)}")
    lines.append("}")
    for c in signature.carried:
        if c.output.outer:
            lines.append(f"{c.output.outer} = {c.input.name};")
    if trace is not None:
        runs = trace.events_of(node.path)
        if record is not None:
            runs = [e for e in runs if e.iteration == record.index[:-1]]  # none when that run failed inside
        if runs:
            info = runs[-1].info
            lines.append(f"// stopped: {info.get('stop_reason', '?')} after {info.get('iterations', '?')} "
                         "iteration(s)")
    return "\n".join(lines)


def scan_pseudocode(node: NodeRef, trace: Trace | None = None, iteration: tuple[int, ...] | None = None,
                    opset: int = 21) -> str:
    """The Scan spec's C-style loop for this node (opset 9+ axes/directions, or opset 8 batching)."""
    body = _body(node)
    signature = body_signature(node.proto, opset, "body", body)
    scans, states = signature.scan_inputs, signature.carried
    m, n = len(scans), len(states)
    record = _pick(trace, node.path, iteration)
    b_in = [i.name for i in body.input]
    batched = signature.batch_axis is not None
    if batched:
        lens = signature.sequence_lens
        header = [f"// Scan '{node.path}' (opset 8): batch axis 0, sequence axis 1",
                  f"for (int batch = 0; batch < {scans[0].outer if m else '?'}.shape[0]; ++batch) {{",
                  f"  N = {lens or 'max_sequence_length'}" + ("[batch];" if lens else ";")]
        indent = "  "
        slicing = [f"({s.outer}<axis=0>[batch])<axis=1>[" + ("N - 1 - t" if s.reverse else "t") + "]"
                   for s in scans]
    else:
        outputs = len(signature.scan_outputs)
        header = [f"// Scan '{node.path}': {n} state(s), {m} scan input(s), {outputs} scan output(s)",
                  f"sequence_length = {scans[0].outer}.shape[{scans[0].axis}];" if m else "sequence_length = 0;"]
        indent = ""
        slicing = [f"{s.outer}<axis={s.axis}>[" + ("sequence_length - 1 - t" if s.reverse else "t") + "]"
                   for s in scans]
    lines = list(header)
    for c in states:
        lines.append(f"{indent}{c.input.name} = {c.input.outer};  // state")
    stacks = [s.outer or f"{s.name}s" for s in signature.scan_outputs]
    for stack in stacks:
        lines.append(f"{indent}{stack} = [];  // scan output")
    lines.append(f"{indent}for (int t = 0; t < {'N' if batched else 'sequence_length'}; ++t) {{")
    inner = indent + "    "
    if record is not None:
        lines.append(f"{inner}// values at iteration {record.index}:")
        for name in b_in:
            lines.append(f"{inner}//   {name} = {format_value(record.inputs.get(name))}")
    for s, code in zip(scans, slicing):
        lines.append(f"{inner}{s.name} = {code};")
    lines.extend(_body_lines(body, inner))
    for c in states:
        lines.append(f"{inner}{c.input.name} = {c.output.name};{_note(record, c.output.name, outputs=True)}")
    for s, stack in zip(signature.scan_outputs, stacks):
        axis = s.axis - 1 if batched else s.axis  # Scan-8 stacks within one batch item
        pair = f"{s.name}, {stack}" if s.reverse else f"{stack}, {s.name}"
        order = f"Concat<axis={axis}>({pair})"
        lines.append(f"{inner}{stack} = {order};{_note(record, s.name, outputs=True)}")
    lines.append(f"{indent}}}")
    if batched:
        lines.append("}")
    for c in states:
        if c.output.outer:
            lines.append(f"{c.output.outer} = {c.input.name};")
    return "\n".join(lines)


def pseudocode(node: NodeRef, trace: Trace | None = None, iteration: tuple[int, ...] | None = None,
               opset: int = 21) -> str:
    """Pseudo-code for a Scan or Loop node; ValueError for other operators."""
    if node.op_type == "Loop":
        return loop_pseudocode(node, trace, iteration)
    if node.op_type == "Scan":
        return scan_pseudocode(node, trace, iteration, opset)
    raise ValueError(f"pseudo-code is written for Scan and Loop, not {node.op_type} ({node.path!r})")
