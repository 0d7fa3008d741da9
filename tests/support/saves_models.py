"""The model the save tests write over: its weight in `<name>.data` beside it, as a memory-mapped model has it."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weighted_model(path, n: int = 1 << 18) -> None:
    """y = x * w + w through an Identity the optimizer removes, its weight (n floats) in `<name>.data` beside it."""
    weight = numpy_helper.from_array(np.arange(n, dtype=np.float32), "w")
    nodes = [helper.make_node("Mul", ["x", "w"], ["m"]), helper.make_node("Identity", ["m"], ["i"]),
             helper.make_node("Add", ["i", "w"], ["y"])]
    graph = helper.make_graph(nodes, "weighted", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], [weight])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path,
              save_as_external_data=True, location=f"{path.name}.data", size_threshold=0)
