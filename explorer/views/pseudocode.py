"""The C-style pseudo-code of the Scan and Loop specs, written with a node's real names and attribute values,
and the values of one recorded iteration filled in as comments."""
from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from ..graph import NodeRef, attribute
from ..trace import Iteration, Trace
from ..values import ValueSummary

MAX_INLINE = 8


def format_value(value: Any) -> str:
    """Compact text of a value: small tensors in full, larger ones as dtype[shape] with their range."""
    if value is None:
        return "<empty>"
    if isinstance(value, ValueSummary):
        return f"{value.dtype}[{', '.join(map(str, value.shape))}] min={value.min} max={value.max} (summary)"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value[:4]) + (", ..." if len(value) > 4 else "") + "]"
    array = np.asarray(value)
    if array.size <= MAX_INLINE:
        if array.dtype.kind == "f":
            return np.array2string(array, precision=4, separator=", ", suppress_small=True).replace("\n", "")
        return np.array2string(array, separator=", ").replace("\n", "")
    head = f"{array.dtype}[{', '.join(map(str, array.shape))}]"
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
    ins = list(node.proto.input) + ["", ""]
    trip, cond = ins[0], ins[1]
    carried_init = list(node.proto.input[2:])
    b_in = [i.name for i in body.input]
    b_out = [o.name for o in body.output]
    n = len(carried_init)
    iter_name, cond_in = b_in[0], b_in[1]
    carried_in, carried_out = b_in[2:2 + n], b_out[1:1 + n]
    scan_out = b_out[1 + n:]
    finals = list(node.proto.output) + [""] * len(b_out)
    stacks = [finals[n + k] or f"{name}s" for k, name in enumerate(scan_out)]
    record = _pick(trace, node.path, iteration)
    mode = {(True, True): "trip count and cond", (True, False): "trip count only (a for loop)",
            (False, True): "cond only (a while loop)", (False, False): "neither (runs until the body's cond "
            "is false)"}[(bool(trip), bool(cond))]
    lines = [f"// Loop '{node.path}': {mode}"]
    lines.append(f"int64 max_trip_count = {trip};" if trip else "// max_trip_count omitted: no bound")
    lines.append(f"bool {cond_in} = {cond};" if cond else f"bool {cond_in} = true;  // cond omitted")
    for init, name in zip(carried_init, carried_in):
        lines.append(f"{name} = {init};  // loop-carried")
    for stack in stacks:
        lines.append(f"{stack} = [];  // scan output, stacked along a new axis 0")
    bound = f"{iter_name} < max_trip_count && {cond_in}" if trip else cond_in
    lines.append(f"for (int64 {iter_name} = 0; {bound}; ++{iter_name}) {{")
    if record is not None:
        lines.append(f"    // values at iteration {record.index}:")
        for name in [iter_name, cond_in, *carried_in]:
            lines.append(f"    //   {name} = {format_value(record.inputs.get(name))}")
    lines.extend(_body_lines(body, "    "))
    lines.append(f"    {cond_in} = {b_out[0]};{_note(record, b_out[0], outputs=True)}")
    for name_in, name_out in zip(carried_in, carried_out):
        lines.append(f"    {name_in} = {name_out};{_note(record, name_out, outputs=True)}")
    for name, stack in zip(scan_out, stacks):
        lines.append(f"    {stack}.append({name});{_note(record, name, outputs=True)}")
    lines.append("}")
    for final, name in zip(finals[:n], carried_in):
        if final:
            lines.append(f"{final} = {name};")
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
    m = int(attribute(node.proto, "num_scan_inputs"))
    record = _pick(trace, node.path, iteration)
    b_in = [i.name for i in body.input]
    b_out = [o.name for o in body.output]
    if opset < 9:
        inputs = list(node.proto.input[1:])
        n = len(inputs) - m
        header = [f"// Scan '{node.path}' (opset 8): batch axis 0, sequence axis 1",
                  f"for (int batch = 0; batch < {inputs[n] if m else '?'}.shape[0]; ++batch) {{",
                  f"  N = {node.proto.input[0] or 'max_sequence_length'}"
                  + ("[batch];" if node.proto.input[0] else ";")]
        indent = "  "
        dirs = list(attribute(node.proto, "directions", []) or [0] * m)
        slicing = [f"({inputs[n + j]}<axis=0>[batch])<axis=1>[" + ("N - 1 - t" if dirs[j] else "t") + "]"
                   for j in range(m)]
    else:
        inputs = list(node.proto.input)
        n = len(inputs) - m
        axes = list(attribute(node.proto, "scan_input_axes", []) or [0] * m)
        dirs = list(attribute(node.proto, "scan_input_directions", []) or [0] * m)
        header = [f"// Scan '{node.path}': {n} state(s), {m} scan input(s), {len(b_out) - n} scan output(s)",
                  f"sequence_length = {inputs[n]}.shape[{axes[0]}];" if m else "sequence_length = 0;"]
        indent = ""
        slicing = [f"{inputs[n + j]}<axis={axes[j]}>[" + ("sequence_length - 1 - t" if dirs[j] else "t") + "]"
                   for j in range(m)]
    lines = list(header)
    for init, name in zip(inputs[:n], b_in[:n]):
        lines.append(f"{indent}{name} = {init};  // state")
    out_axes = list(attribute(node.proto, "scan_output_axes", []) or [])
    out_dirs = list(attribute(node.proto, "scan_output_directions", []) or [])
    scan_out = b_out[n:]
    outputs = list(node.proto.output) + [""] * len(b_out)
    stacks = [outputs[n + k] or f"{name}s" for k, name in enumerate(scan_out)]
    for stack in stacks:
        lines.append(f"{indent}{stack} = [];  // scan output")
    lines.append(f"{indent}for (int t = 0; t < {'N' if opset < 9 else 'sequence_length'}; ++t) {{")
    inner = indent + "    "
    if record is not None:
        lines.append(f"{inner}// values at iteration {record.index}:")
        for name in b_in:
            lines.append(f"{inner}//   {name} = {format_value(record.inputs.get(name))}")
    for j, name in enumerate(b_in[n:]):
        lines.append(f"{inner}{name} = {slicing[j]};")
    lines.extend(_body_lines(body, inner))
    for name_in, name_out in zip(b_in[:n], b_out[:n]):
        lines.append(f"{inner}{name_in} = {name_out};{_note(record, name_out, outputs=True)}")
    for j, (name, stack) in enumerate(zip(scan_out, stacks)):
        axis = out_axes[j] if j < len(out_axes) else 0
        prepend = j < len(out_dirs) and out_dirs[j]
        order = f"Concat<axis={axis}>({name}, {stack})" if prepend else f"Concat<axis={axis}>({stack}, {name})"
        lines.append(f"{inner}{stack} = {order};{_note(record, name, outputs=True)}")
    lines.append(f"{indent}}}")
    if opset < 9:
        lines.append("}")
    for final, name in zip(outputs[:n], b_in[:n]):
        if final:
            lines.append(f"{final} = {name};")
    return "\n".join(lines)


def pseudocode(node: NodeRef, trace: Trace | None = None, iteration: tuple[int, ...] | None = None,
               opset: int = 21) -> str:
    """Pseudo-code for a Scan or Loop node; ValueError for other operators."""
    if node.op_type == "Loop":
        return loop_pseudocode(node, trace, iteration)
    if node.op_type == "Scan":
        return scan_pseudocode(node, trace, iteration, opset)
    raise ValueError(f"pseudo-code is written for Scan and Loop, not {node.op_type} ({node.path!r})")
