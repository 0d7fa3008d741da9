"""The graph one call of a model-local function runs: the function's nodes with the call's attributes bound."""
from __future__ import annotations

import onnx


def _bind_attributes(node: onnx.NodeProto, bound: dict[str, onnx.AttributeProto]) -> onnx.NodeProto:
    """A copy of a function-body node whose attribute references (`ref_attr_name`) take the call's values."""
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    del copy.attribute[:]
    for att in node.attribute:
        if att.ref_attr_name:
            source = bound.get(att.ref_attr_name)
            if source is None:
                continue  # not given by the call and no default: the attribute is absent
            value = onnx.AttributeProto()
            value.CopyFrom(source)
            value.name = att.name
            copy.attribute.append(value)
            continue
        value = onnx.AttributeProto()
        value.CopyFrom(att)
        if att.type == onnx.AttributeProto.GRAPH:
            value.g.CopyFrom(_bind_graph(att.g, bound))
        elif att.type == onnx.AttributeProto.GRAPHS:
            del value.graphs[:]
            value.graphs.extend(_bind_graph(g, bound) for g in att.graphs)
        copy.attribute.append(value)
    return copy


def _bind_graph(graph: onnx.GraphProto, bound: dict[str, onnx.AttributeProto]) -> onnx.GraphProto:
    copy = onnx.GraphProto()
    copy.CopyFrom(graph)
    del copy.node[:]
    copy.node.extend(_bind_attributes(n, bound) for n in graph.node)
    return copy


def function_body(function: onnx.FunctionProto, call: onnx.NodeProto) -> onnx.GraphProto:
    """The graph one call of a model-local function runs: the function's nodes with the call's attributes
    (or the function's defaults) bound, its formal inputs and outputs as graph inputs and outputs."""
    bound = {a.name: a for a in function.attribute_proto}
    bound.update({a.name: a for a in call.attribute})
    typed = {v.name: v for v in function.value_info}
    graph = onnx.GraphProto(name=f"{function.domain}.{function.name}" if function.domain else function.name)
    graph.node.extend(_bind_attributes(n, bound) for n in function.node)
    graph.input.extend(typed.get(n, onnx.ValueInfoProto(name=n)) for n in function.input)
    graph.output.extend(typed.get(n, onnx.ValueInfoProto(name=n)) for n in function.output)
    return graph
