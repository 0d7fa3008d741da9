"""The spec's typing rules that onnxruntime enforces and a step-through executor could silently ignore: Loop's
trip count is int64 and its cond bool, If's cond is bool and both branches give the same output types, every
value is written by one node only (and never by a body node when an enclosing graph defined it before the body's node), a model-local function is called with at most the inputs it declares, scan
axes lie within their rank. `violations(model)` lists each broken rule naming the node; `load` refuses such a
model unless the caller asks for lenient mode, where each becomes a warning. The schema's type constraints on
inputs (type_constraints.py) are checked here too."""
from __future__ import annotations

import onnx

from ..proto.body_signatures import body_signature
from ..proto.graph import subgraph_attributes
from .type_constraints import constraint_violations

BOOL, INT64 = onnx.TensorProto.BOOL, onnx.TensorProto.INT64
_CHECKED = frozenset({"Loop", "If", "Scan"})  # the operators _check_node has rules for (besides function calls)


def _types(graph: onnx.GraphProto, outer: dict[str, onnx.TypeProto]) -> dict[str, onnx.TypeProto]:
    """Declared types of the names a graph sees: the outer scope's, then its own inputs, value_info, outputs,
    initializers."""
    types = dict(outer)
    for info in [*graph.input, *graph.value_info, *graph.output]:
        if info.type.WhichOneof("value"):
            types[info.name] = info.type
    for tensor in graph.initializer:
        types[tensor.name] = onnx.helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims))
    return types


def _elem(tp: onnx.TypeProto | None) -> int | None:
    """Element type of a tensor type (None when unknown or not a tensor)."""
    if tp is None or tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.elem_type:
        return None
    return int(tp.tensor_type.elem_type)


def _rank(tp: onnx.TypeProto | None) -> int | None:
    if tp is None or tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return None
    return len(tp.tensor_type.shape.dim)


def _name(elem: int) -> str:
    return onnx.TensorProto.DataType.Name(elem).lower()


def _label(node: onnx.NodeProto, where: str) -> str:
    return f"{node.op_type} node {node.name or '(unnamed)'!r} in {where}"


def _check_node(node: onnx.NodeProto, types: dict[str, onnx.TypeProto], where: str,
                functions: dict[tuple[str, str], onnx.FunctionProto], opset: int) -> list[str]:
    found: list[str] = []
    label = _label(node, where)

    def expect(index: int, elem: int, what: str) -> None:
        if index < len(node.input) and node.input[index]:
            got = _elem(types.get(node.input[index]))
            if got is not None and got != elem:
                found.append(f"{label}: {what} {node.input[index]!r} is {_name(got)}, the spec requires {_name(elem)}")

    if node.domain in ("", "ai.onnx") and node.op_type == "Loop":
        expect(0, INT64, "trip count")
        expect(1, BOOL, "cond")
    elif node.domain in ("", "ai.onnx") and node.op_type == "If":
        expect(0, BOOL, "cond")
        branches = dict(subgraph_attributes(node))
        then, other = branches.get("then_branch"), branches.get("else_branch")
        if then is not None and other is not None:
            if len(then.output) != len(other.output):
                found.append(f"{label}: then_branch gives {len(then.output)} outputs, else_branch "
                             f"{len(other.output)}")
            for k, (a, b) in enumerate(zip(then.output, other.output)):
                ea, eb = _elem(a.type), _elem(b.type)
                if ea is not None and eb is not None and ea != eb:
                    found.append(f"{label}: output {k} is {_name(ea)} in then_branch but {_name(eb)} in "
                                 "else_branch")
    elif node.domain in ("", "ai.onnx") and node.op_type == "Scan":
        found += _scan_axes(node, label, opset)
    function = functions.get((node.domain, node.op_type))
    if function is not None:
        if len(node.input) > len(function.input):
            found.append(f"{label}: calls function {function.name!r} with {len(node.input)} inputs; it declares "
                         f"{len(function.input)}")
        if len(node.output) > len(function.output):
            found.append(f"{label}: expects {len(node.output)} outputs from function {function.name!r}, which "
                         f"declares {len(function.output)}")
    return found


def _scan_axes(node: onnx.NodeProto, label: str, opset: int) -> list[str]:
    """Scan-9+'s scan axes against the ranks its body declares (Scan-8 has no axes: it scans axis 1)."""
    body = next((a.g for a in node.attribute if a.name == "body" and a.type == onnx.AttributeProto.GRAPH), None)
    if body is None or opset < 9:
        return []
    signature = body_signature(node, opset, body=body)
    given = {a.name for a in node.attribute}
    found = []
    for key, slots, infos in (("scan_input_axes", signature.scan_inputs, body.input),
                              ("scan_output_axes", signature.scan_outputs, body.output)):
        if key not in given:
            continue
        for k, slot in enumerate(slots):
            rank = _rank(infos[slot.index].type)
            if rank is None:
                continue
            rank += 1  # the scanned tensor has one axis more than the body's slice
            if not -rank <= slot.axis < rank:
                found.append(f"{label}: {key}[{k}]={slot.axis} lies outside the {rank} axes of {slot.name!r}")
    return found


def _writer(writer: str | onnx.NodeProto) -> str:
    """What wrote a value first: "a graph input", "an initializer" or the node, named."""
    return writer if isinstance(writer, str) else f"node {writer.name or writer.op_type!r}"


def violations(model: onnx.ModelProto) -> list[str]:
    """Every broken typing rule of the model, each naming its node and graph (an empty list for a valid model)."""
    functions = {(f.domain, f.name): f for f in model.functions}
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    opset = opsets.get("", 0)
    found: list[str] = []
    # what a body may not write: the names its enclosing graphs define before its node, kept per enclosing graph
    # as (position of each name's definition, the node's position): linear in the model's size
    stack: list[tuple[onnx.GraphProto, str, dict[str, onnx.TypeProto], tuple[tuple[dict[str, int], int], ...]]] = [
        (model.graph, "the main graph", _types(model.graph, {}), ())]
    while stack:
        graph, where, types, enclosing = stack.pop()
        writers: dict[str, str | onnx.NodeProto] = {info.name: "a graph input" for info in graph.input}
        writers.update({t.name: "an initializer" for t in graph.initializer})
        position = dict.fromkeys(writers, -1)
        typed = types.keys()
        for index, node in enumerate(graph.node):
            op_type, domain = node.op_type, node.domain
            local = bool(functions) and (domain, op_type) in functions
            if op_type in _CHECKED or local:
                found += _check_node(node, types, where, functions, opset)
            schema_domain = "" if domain == "ai.onnx" else domain
            if schema_domain in opsets and not local and not typed.isdisjoint(node.input):
                found += [f"{_label(node, where)}: {problem}"
                          for problem in constraint_violations(node, types, opsets[schema_domain])]
            for name in node.output:
                if not name:
                    continue
                if name in writers:
                    found.append(f"{_label(node, where)}: writes {name!r}, which {_writer(writers[name])} already "
                                 "defines")
                elif enclosing and any(defined.get(name, cutoff) < cutoff for defined, cutoff in enclosing):
                    found.append(f"{_label(node, where)}: writes {name!r}, which an enclosing graph defines before "
                                 "this body (names are single-assignment across nested graphs)")
                writers[name] = node
                position.setdefault(name, index)
            if not node.attribute:
                continue
            for attribute, body in subgraph_attributes(node):
                stack.append((body, f"{where} > {node.name or op_type}.{attribute}", _types(body, types),
                              (*enclosing, (position, index))))
    return found
