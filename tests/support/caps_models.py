"""What the tests of a shared app's caps and holdings build and read: a model of many nodes in a row, and the trace
of a session's current run."""
from __future__ import annotations

from onnx import TensorProto, helper


def chain(nodes: int) -> bytes:
    """A model of `nodes` Relu nodes in a row."""
    graph = helper.make_graph([helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"]) for i in range(nodes)], "chain",
                              [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(f"v{nodes}", TensorProto.FLOAT, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def state_trace(at):
    """The trace of the session's current run (its holdings' latest run)."""
    from explorer.ui.owned import KEY

    return at.session_state[KEY]._kinds["runs"][next(reversed(at.session_state[KEY]._kinds["runs"]))].trace
