"""A float16 copy of ts_lstm_2layer.onnx, converted as onnxconverter-common's convert_float_to_float16 does with
keep_io_types=True, written out by hand with onnx.helper (no converter needed): float32 in and out with Casts at
the edges, every float weight and constant in float16, and the operators onnxruntime's CPU has no float16 kernel
for (LSTM) kept in float32 behind Casts. Run from this folder: python fp16_models.py."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
SOURCE, TARGET = "ts_lstm_2layer", "ts_lstm_2layer_fp16"
FLOAT32_ONLY = frozenset({"LSTM"})  # onnxruntime's CPU computes these in float32 only


def _half(tensor: onnx.TensorProto) -> onnx.TensorProto:
    if tensor.data_type != TensorProto.FLOAT:
        return tensor
    return numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float16), tensor.name)


def convert(model: onnx.ModelProto) -> onnx.ModelProto:
    """The float16 conversion of a model without subgraphs."""
    graph = model.graph
    kept = {t.name for t in graph.initializer if any(n.op_type in FLOAT32_ONLY and t.name in n.input
                                                     for n in graph.node)}
    initializers = [t if t.name in kept else _half(t) for t in graph.initializer]
    nodes: list[onnx.NodeProto] = []
    rename = {i.name: f"{i.name}_fp16" for i in graph.input if i.type.tensor_type.elem_type == TensorProto.FLOAT}
    for name, half in rename.items():
        nodes.append(helper.make_node("Cast", [name], [half], name=f"{name}_cast_to_fp16", to=TensorProto.FLOAT16))
    outputs = {o.name for o in graph.output if o.type.tensor_type.elem_type == TensorProto.FLOAT}
    for node in graph.node:
        node = onnx.NodeProto.FromString(node.SerializeToString())
        node.input[:] = [rename.get(name, name) for name in node.input]
        for att in node.attribute:
            if att.type == onnx.AttributeProto.TENSOR:
                att.t.CopyFrom(_half(att.t))
            if node.op_type == "Cast" and att.name == "to" and att.i == TensorProto.FLOAT:
                att.i = TensorProto.FLOAT16
        if node.op_type in FLOAT32_ONLY:
            for k, name in enumerate(node.input):
                if name and name not in kept and k in (0, 5, 6):  # X, initial_h, initial_c
                    nodes.append(helper.make_node("Cast", [name], [f"{name}_to_fp32"], name=f"{node.name}_in{k}",
                                                  to=TensorProto.FLOAT))
                    node.input[k] = f"{name}_to_fp32"
            nodes.append(node)
            for k, name in enumerate(list(node.output)):
                if name:
                    node.output[k] = f"{name}_fp32"
                    nodes.append(helper.make_node("Cast", [f"{name}_fp32"], [name], name=f"{node.name}_out{k}",
                                                  to=TensorProto.FLOAT16))
            continue
        for k, name in enumerate(node.output):
            if name in outputs:
                node.output[k] = f"{name}_fp16"
                nodes.append(node)
                node = helper.make_node("Cast", [f"{name}_fp16"], [name], name=f"{name}_cast_to_fp32",
                                        to=TensorProto.FLOAT)
        nodes.append(node)
    converted = helper.make_model(
        helper.make_graph(nodes, graph.name, list(graph.input), list(graph.output), initializers),
        opset_imports=list(model.opset_import), producer_name=model.producer_name,
        producer_version=model.producer_version)
    converted.ir_version = model.ir_version
    return converted


def main() -> None:
    converted = convert(onnx.load(str(HERE / f"{SOURCE}.onnx")))
    onnx.checker.check_model(converted, full_check=True)
    onnx.save(converted, str(HERE / f"{TARGET}.onnx"))
    print(f"{TARGET}.onnx: {len(converted.graph.node)} nodes")


if __name__ == "__main__":
    main()
