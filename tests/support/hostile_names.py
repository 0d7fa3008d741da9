"""A model whose every name and text is a Markdown or HTML payload: value, node, graph and dimension names, doc
strings, metadata, producer. The names stay distinct (each payload numbered) and each maps one old name, so the
model runs exactly as before."""
from __future__ import annotations

import itertools

import onnx

PAYLOADS = ("`![y](http://198.51.100.1/b.png)`", "`<img src=y onerror=alert(2)>`", "``[z](http://198.51.100.1/z)``",
            "![x](http://198.51.100.1/a.png)", "[link](http://198.51.100.1/l)", "<img src=x onerror=alert(1)>",
            "**b**", "`tick`", "$math$", ":red[x]", ":smile:", "www.example.org", "<script>alert(1)</script>",
            "a@example.org", "_i_ ~~s~~", "# h", "> q", "1. n")
LIVE = (":red[x", ":smile:", "$math", "://", "www.", "@example")  # a payload's text, live when left unescaped
FILE_NAME = "![f](http://198.51.100.1/f.png) <img src=x onerror=alert(1)> `t`.onnx"


class _Names:
    def __init__(self, first: int) -> None:
        self.given: dict[str, str] = {}
        self.count = itertools.count(first)

    def __call__(self, name: str) -> str:
        if not name:
            return name
        if name not in self.given:
            i = next(self.count)
            self.given[name] = f"{PAYLOADS[i % len(PAYLOADS)]} {i}"
        return self.given[name]


def _text(i: int) -> str:
    return " ".join(PAYLOADS[i:] + PAYLOADS[:i])


def hostile(proto: onnx.ModelProto, first: int = 0) -> onnx.ModelProto:
    """A copy of `proto` whose names and texts are payloads, the first name PAYLOADS[first] (functions' bodies
    are left as they are)."""
    model = onnx.ModelProto()
    model.CopyFrom(proto)
    names, dims = _Names(first), _Names(first)
    model.doc_string = _text(0)
    model.producer_name = f"{model.producer_name} {_text(1)}"
    model.domain = PAYLOADS[1]
    del model.metadata_props[:]
    for i, payload in enumerate(PAYLOADS):
        model.metadata_props.add(key=f"{payload} {i}", value=_text(i))
    _graph(model.graph, names, dims)
    return model


def _shape(info: onnx.ValueInfoProto, names: _Names, dims: _Names) -> None:
    info.name = names(info.name)
    info.doc_string = _text(3)
    for dim in info.type.tensor_type.shape.dim:
        if dim.HasField("dim_param"):
            dim.dim_param = dims(dim.dim_param)


def _graph(graph: onnx.GraphProto, names: _Names, dims: _Names) -> None:
    graph.name = names(graph.name)
    graph.doc_string = _text(2)
    for info in [*graph.input, *graph.output, *graph.value_info]:
        _shape(info, names, dims)
    for tensor in graph.initializer:
        tensor.name = names(tensor.name)
        tensor.doc_string = _text(4)
    for node in graph.node:
        node.name = names(node.name or f"{node.op_type} node")
        node.doc_string = _text(5)
        node.input[:] = [names(n) for n in node.input]
        node.output[:] = [names(n) for n in node.output]
        for attribute in node.attribute:
            attribute.doc_string = _text(6)
            for body in [attribute.g, *attribute.graphs] if attribute.HasField("g") else attribute.graphs:
                _graph(body, names, dims)
