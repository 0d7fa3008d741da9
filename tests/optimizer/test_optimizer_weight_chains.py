"""Recurrent layers as exporters write them: weight-preparation chains (Transpose, Split, Concat, Unsqueeze of
constant weights into ONNX's gate layout) fold into the weights they produce without growing the file, and zero
initial states built through shape operators (tf2onnx's Unsqueeze(Expand(0, shape)), torch.onnx's Slice of a
ConstantOfShape, a bidirectional Concat of two) go with the shape arithmetic computing them."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

from explorer.model.model_inference import model_bytes
from explorer.optimizer import optimize
from tests.support.optimizer_models import info, make, ops, proven, tensor

RNG = np.random.default_rng(5)
FEATURES, HIDDEN = 48, 64  # weights of 48 KB and 64 KB: far past the 5 % the folds may grow the file by


def keras_chain(prefix: str, kernel: str, nodes: list[onnx.NodeProto]) -> str:
    """A Keras kernel [rows, 4H] in [i, f, c, o] columns -> ONNX's [1, 4H, rows] in [i, o, f, c]."""
    gates = [f"{prefix}_{g}" for g in "ifco"]
    nodes += [h.make_node("Transpose", [kernel], [f"{prefix}_t"], name=f"{prefix}_transpose", perm=[1, 0]),
              h.make_node("Split", [f"{prefix}_t", "quarters"], gates, name=f"{prefix}_split", axis=0),
              h.make_node("Concat", [gates[0], gates[3], gates[1], gates[2]], [f"{prefix}_cat"],
                          name=f"{prefix}_concat", axis=0),
              h.make_node("Unsqueeze", [f"{prefix}_cat", "axis0"], [f"{prefix}_onnx"], name=f"{prefix}_unsqueeze")]
    return f"{prefix}_onnx"


def keras_lstm() -> onnx.ModelProto:
    nodes: list[onnx.NodeProto] = []
    w = keras_chain("w", "kernel", nodes)
    r = keras_chain("r", "recurrent_kernel", nodes)
    bias = ["b_i", "b_f", "b_c", "b_o"]
    nodes += [h.make_node("Split", ["bias", "quarters"], bias, name="b_split", axis=0),
              h.make_node("Concat", ["b_i", "b_o", "b_f", "b_c", "zeros"], ["b_cat"], name="b_concat", axis=0),
              h.make_node("Unsqueeze", ["b_cat", "axis0"], ["b_onnx"], name="b_unsqueeze"),
              h.make_node("LSTM", ["x", w, r, "b_onnx"], ["y"], name="lstm", hidden_size=HIDDEN)]
    inits = [tensor("kernel", RNG.normal(size=(FEATURES, 4 * HIDDEN)) * 0.1),
             tensor("recurrent_kernel", RNG.normal(size=(HIDDEN, 4 * HIDDEN)) * 0.1),
             tensor("bias", RNG.normal(size=4 * HIDDEN)), tensor("zeros", np.zeros(4 * HIDDEN)),
             tensor("quarters", [HIDDEN] * 4, np.int64), tensor("axis0", [0], np.int64)]
    return make(nodes, [info("x", shape=["time", "batch", FEATURES])],
                [info("y", shape=["time", 1, "batch", HIDDEN])], inits)


def test_a_weight_preparation_chain_folds_into_the_weights_without_growing_the_file():
    model = keras_lstm()
    result = optimize(model)
    assert [op for op in ops(result.optimized) if op != "Constant"] == ["LSTM"]  # the weights: Constant nodes
    folded = [s for s in result.steps if s.pattern == "ConstantFolding"]
    assert sorted(n.op_type for s in folded for n in s.before_nodes if n.op_type != "Constant") == sorted(
        ["Transpose", "Split", "Concat", "Unsqueeze"] * 2 + ["Split", "Concat", "Unsqueeze"])
    assert model_bytes(result.optimized) <= model_bytes(model)
    assert result.onnxruntime is not None and result.onnxruntime.status == "loads"
    for batch in (2, 3):
        proven(result, {"x": RNG.normal(size=(4, batch, FEATURES)).astype(np.float32)})


def tf2onnx_zero_state(name: str, nodes: list[onnx.NodeProto]) -> str:
    """tf2onnx's initial state: zeros [batch, H] expanded from a scalar by a shape sliced from Shape(x), then
    unsqueezed to [1, batch, H]."""
    nodes += [h.make_node("Shape", ["x"], [f"{name}_shape"]),
              h.make_node("Cast", [f"{name}_shape"], [f"{name}_shape32"], to=T.INT32),
              h.make_node("Slice", [f"{name}_shape32", "one", "two", "axis0"], [f"{name}_batch"]),
              h.make_node("Concat", [f"{name}_batch", "hidden32"], [f"{name}_dims32"], axis=0),
              h.make_node("Cast", [f"{name}_dims32"], [f"{name}_dims"], to=T.INT64),
              h.make_node("Expand", ["zero", f"{name}_dims"], [f"{name}_zeros"]),
              h.make_node("Unsqueeze", [f"{name}_zeros", "axis0"], [name])]
    return name


def test_zero_states_built_through_shape_operators_go_with_their_shape_arithmetic():
    hidden, features = 3, 2
    nodes: list[onnx.NodeProto] = []
    state = tf2onnx_zero_state("h0", nodes)
    nodes += [h.make_node("Concat", [state, state], ["h0_both"], axis=0),  # a bidirectional layer's two states
              h.make_node("Slice", ["h0_both", "axis0", "one", "axis0"], ["h0_first"]),
              h.make_node("Concat", ["h0_first", "h0_first"], ["h0_sliced"], axis=0),
              h.make_node("LSTM", ["x", "w", "r", "", "", "h0_sliced", "h0_sliced"], ["y"], hidden_size=hidden,
                          direction="bidirectional")]
    inits = [tensor("w", RNG.normal(size=(2, 4 * hidden, features))),
             tensor("r", RNG.normal(size=(2, 4 * hidden, hidden))), tensor("zero", 0.0),
             tensor("one", [1], np.int64), tensor("two", [2], np.int64), tensor("axis0", [0], np.int64),
             tensor("hidden32", [hidden], np.int32)]
    model = make(nodes, [info("x", shape=[4, "batch", features])], [info("y", shape=None)], inits)
    result = optimize(model)
    assert ops(result.optimized) == ["LSTM"] and list(result.optimized.graph.node[0].input) == ["x", "w", "r"]
    facts = [f for s in result.steps if s.pattern == "RnnZeroState" for f in s.facts]
    assert any(f.startswith("h0_sliced is Concat of ") and f.endswith("Unsqueeze of Expand of a constant of zeros")
               for f in facts), facts
    for batch in (1, 3):
        proven(result, {"x": RNG.normal(size=(4, batch, features)).astype(np.float32)})


def test_a_state_sliced_from_nonzero_values_stays():
    nodes = [h.make_node("Slice", ["h0_both", "zero_i", "one", "zero_i"], ["h0"]),
             h.make_node("GRU", ["x", "w", "r", "", "", "h0"], ["y"], hidden_size=1)]
    inits = [tensor("w", np.ones((1, 3, 1))), tensor("r", np.ones((1, 3, 1))), tensor("h0_both", [[[0.0]], [[0.5]]]),
             tensor("zero_i", [1], np.int64), tensor("one", [2], np.int64)]
    model = make(nodes, [info("x", shape=[2, 1, 1])], [info("y", shape=None)], inits)
    result = optimize(model, patterns=["RnnZeroState"])
    assert not result.steps
