"""Recurrent samples: a GRU laid out the way PyTorch exports one, a ragged bidirectional LSTM, a Relu RNN."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from builders import Sample

OPSET = [h.make_opsetid("", 21)]


def _float(name: str, *shape: int) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, T.FLOAT, list(shape))


def _weights(rng: np.random.Generator, directions: int, gates: int, hidden: int, inputs: int,
             scale: float = 0.5) -> list[onnx.TensorProto]:
    def tensor(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    return [tensor("W", directions, gates * hidden, inputs), tensor("R", directions, gates * hidden, hidden),
            tensor("B", directions, 2 * gates * hidden)]


def gru_pytorch_batch_first() -> onnx.ModelProto:
    """nn.GRU(4, 5, batch_first=True) as torch.onnx writes it: Transposes around a layout-0 GRU with
    linear_before_reset=1 (PyTorch's n = tanh(W_in x + b_in + r * (W_hn h + b_hn))), Y squeezed to 3-D."""
    rng = np.random.default_rng(1)
    nodes = [
        h.make_node("Transpose", ["input"], ["input_seq_first"], name="to_seq_first", perm=[1, 0, 2]),
        h.make_node("GRU", ["input_seq_first", "W", "R", "B", "", "h0"], ["Y", "h_n"], name="gru",
                    hidden_size=5, linear_before_reset=1),
        h.make_node("Squeeze", ["Y", "direction_axis"], ["Y_seq_first"], name="drop_direction"),
        h.make_node("Transpose", ["Y_seq_first"], ["output"], name="to_batch_first", perm=[1, 0, 2]),
    ]
    inits = _weights(rng, 1, 3, 5, 4) + [numpy_helper.from_array(np.array([1], np.int64), "direction_axis")]
    graph = h.make_graph(
        nodes, "gru_pytorch_batch_first",
        [_float("input", 2, 6, 4), _float("h0", 1, 2, 5)],
        [_float("output", 2, 6, 5), _float("h_n", 1, 2, 5)], inits)
    return h.make_model(graph, opset_imports=OPSET, producer_name="explorer samples")


def lstm_bidirectional_ragged() -> onnx.ModelProto:
    """Three sequences of lengths 6, 4 and 2 padded into one batch, run both ways."""
    rng = np.random.default_rng(2)
    inits = _weights(rng, 2, 4, 5, 4) + [numpy_helper.from_array(np.array([6, 4, 2], np.int32), "lengths")]
    node = h.make_node("LSTM", ["X", "W", "R", "B", "lengths"], ["Y", "Y_h", "Y_c"], name="lstm",
                       hidden_size=5, direction="bidirectional")
    graph = h.make_graph([node], "lstm_bidirectional_ragged", [_float("X", 6, 3, 4)],
                         [_float("Y", 6, 2, 3, 5), _float("Y_h", 2, 3, 5), _float("Y_c", 2, 3, 5)], inits)
    return h.make_model(graph, opset_imports=OPSET, producer_name="explorer samples")


def rnn_relu() -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    node = h.make_node("RNN", ["X", "W", "R", "B"], ["Y", "Y_h"], name="rnn", hidden_size=4,
                       activations=["Relu"])
    graph = h.make_graph([node], "rnn_relu", [_float("X", 8, 2, 3)],
                         [_float("Y", 8, 1, 2, 4), _float("Y_h", 1, 2, 4)],
                         _weights(rng, 1, 1, 4, 3, scale=0.6))
    return h.make_model(graph, opset_imports=OPSET, producer_name="explorer samples")


SAMPLES = [
    Sample("gru_pytorch_batch_first", "A GRU laid out the way torch.onnx exports nn.GRU(batch_first=True): "
           "Transposes around a layout-0 GRU with linear_before_reset=1.", gru_pytorch_batch_first),
    Sample("lstm_bidirectional_ragged", "A bidirectional LSTM over a padded batch of lengths 6, 4 and 2: "
           "zeros in Y past each length, Y_h/Y_c from each sequence's last valid step.",
           lstm_bidirectional_ragged),
    Sample("rnn_relu", "A simple RNN with Relu instead of Tanh: units that die at 0 and units that grow.",
           rnn_relu),
]
