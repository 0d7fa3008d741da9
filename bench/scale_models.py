"""The models of bench_scale.py, generated into a folder: MatMul chains whose float32 weights (128 MiB each) sit in
one external-data file, a Loop whose body reads a 512 MiB weight of the main graph, and a long stacked LSTM."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

ALIGN = 1 << 16  # each weight starts on a 64 KiB boundary, as onnx's own writer aligns them
WIDE, NARROW = 8192, 4096  # a [4096, 8192] or [8192, 4096] float32 weight is 128 MiB


class _Weights:
    """Writes weights one after another into one external-data file and makes their TensorProtos."""

    def __init__(self, folder: Path, location: str) -> None:
        self.location = location
        self.file = open(folder / location, "wb")  # noqa: SIM115 - written weight by weight, closed by close()
        self.rng = np.random.default_rng(0)

    def add(self, name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
        offset = -self.file.tell() % ALIGN + self.file.tell()
        self.file.seek(offset)
        scale = np.float32(1 / np.sqrt(shape[0]))
        for row in range(0, shape[0], 512):  # written in slices: generating stays within a few MiB
            part = self.rng.standard_normal((min(512, shape[0] - row), *shape[1:]), dtype=np.float32) * scale
            self.file.write(part.tobytes())
        tensor = onnx.TensorProto(name=name, data_type=T.FLOAT, dims=list(shape))
        tensor.data_location = T.EXTERNAL
        for key, value in (("location", self.location), ("offset", str(offset)),
                           ("length", str(int(np.prod(shape)) * 4))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        return tensor

    def close(self) -> None:
        self.file.close()


def chain(folder: Path, weights: int) -> Path:
    """x [1, 4096] through `weights` MatMuls, alternately [4096, 8192] and [8192, 4096] (128 MiB each)."""
    folder.mkdir(parents=True, exist_ok=True)
    store = _Weights(folder, "weights.bin")
    nodes, inits, current = [], [], "x"
    for k in range(weights):
        shape = (NARROW, WIDE) if k % 2 == 0 else (WIDE, NARROW)
        inits.append(store.add(f"w{k}", shape))
        nodes.append(h.make_node("MatMul", [current, f"w{k}"], [f"m{k}"], name=f"/layer{k}/MatMul"))
        current = f"m{k}"
    store.close()
    out_width = WIDE if weights % 2 else NARROW
    graph = h.make_graph(nodes, "chain", [h.make_tensor_value_info("x", T.FLOAT, [1, NARROW])],
                         [h.make_tensor_value_info(current, T.FLOAT, [1, out_width])], inits)
    return _save(graph, folder / "model.onnx")


def loop_capture(folder: Path, trips: int = 4) -> Path:
    """A Loop of `trips` iterations whose body reads W [8192, 16384] (512 MiB) of the main graph:
    h -> Tanh(ReduceMean(Reshape(h @ W, [2, 8192]), axis 0))."""
    folder.mkdir(parents=True, exist_ok=True)
    store = _Weights(folder, "weights.bin")
    weight = store.add("W", (WIDE, 2 * WIDE))
    store.close()
    body = h.make_graph(
        [h.make_node("MatMul", ["h", "W"], ["wide"]),
         h.make_node("Reshape", ["wide", "halves"], ["split"]),
         h.make_node("ReduceMean", ["split"], ["mean"], axes=[0], keepdims=1),
         h.make_node("Tanh", ["mean"], ["h_next"]),
         h.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
         h.make_tensor_value_info("h", T.FLOAT, [1, WIDE])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("h_next", T.FLOAT, [1, WIDE])],
        [onnx.numpy_helper.from_array(np.array([2, WIDE], np.int64), "halves")])
    graph = h.make_graph(
        [h.make_node("Loop", ["trips", "keep_going", "x"], ["y"], body=body)], "loop_capture",
        [h.make_tensor_value_info("x", T.FLOAT, [1, WIDE])], [h.make_tensor_value_info("y", T.FLOAT, [1, WIDE])],
        [weight, onnx.numpy_helper.from_array(np.array(trips, np.int64), "trips"),
         onnx.numpy_helper.from_array(np.array(True), "keep_going")])
    return _save(graph, folder / "model.onnx", opset=17)


def stacked_lstm(path: Path, seq: int = 6000, batch: int = 8, hidden: int = 512, layers: int = 4,
                 features: int = 64) -> Path:
    """`layers` LSTMs one after another (X [seq, batch, features] in), each hidden `hidden`, weights in the file."""
    rng = np.random.default_rng(0)
    nodes, inits, current, width = [], [], "X", features
    for k in range(layers):
        for name, shape in ((f"W{k}", (1, 4 * hidden, width)), (f"R{k}", (1, 4 * hidden, hidden)),
                            (f"B{k}", (1, 8 * hidden))):
            inits.append(onnx.numpy_helper.from_array(
                (rng.standard_normal(shape) / np.sqrt(hidden)).astype(np.float32), name))
        nodes += [h.make_node("LSTM", [current, f"W{k}", f"R{k}", f"B{k}"], [f"Y{k}"], hidden_size=hidden,
                              name=f"lstm{k}"),
                  h.make_node("Squeeze", [f"Y{k}", "one"], [f"H{k}"], name=f"squeeze{k}")]
        current, width = f"H{k}", hidden
    inits.append(onnx.numpy_helper.from_array(np.array([1], np.int64), "one"))
    graph = h.make_graph(nodes, "stacked_lstm", [h.make_tensor_value_info("X", T.FLOAT, [seq, batch, features])],
                         [h.make_tensor_value_info(current, T.FLOAT, [seq, batch, hidden])], inits)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _save(graph, path)


def _save(graph: onnx.GraphProto, path: Path, opset: int = 18) -> Path:
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def folder_bytes(folder: Path) -> int:
    return sum(os.path.getsize(folder / name) for name in os.listdir(folder))
