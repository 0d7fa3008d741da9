"""Pairs of models for the comparison tests, each with one divergence planted at a known place."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

F = T.FLOAT


def plant_output(event, name: str, value) -> None:
    """Replaces one recorded output of `event`, as if its kernel had computed `value`."""
    position = event.site.outputs.index(name)
    event.output_values = (*event.output_values[:position], value, *event.output_values[position + 1:])


def _model(graph: onnx.GraphProto, opset: int = 21) -> onnx.ModelProto:
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], producer_name="compare tests")
    m.ir_version = 10
    return m


def _const(name: str, value, dtype=np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


# ---- a Loop inside a Scan -------------------------------------------------------------------------------------
PLANTED_NODE = "enc/body/inner/body/plant"


def loop_in_scan(planted: bool, at: tuple[int, int] = (1, 2), steps: int = 3) -> onnx.ModelProto:
    """Scan over x [T, 2] (and the step index t) whose body runs a Loop of `steps` iterations carrying acc:
    acc' = acc * 0.5 + x_t + LeakyRelu(extra), extra = -1 at (t, i) == `at` and 0 elsewhere. Node `plant` is
    that LeakyRelu, with alpha 0.25, or 0.75 in the planted variant: the two differ first exactly at `plant`,
    iteration `at`, by 0.5 (same ops and shapes: a renamed copy still aligns by op sequence)."""
    loop_body = h.make_graph(
        [h.make_node("Cast", ["i"], ["i_f"], name="count", to=F),
         h.make_node("Equal", ["i_f", "at_i"], ["is_i"], name="is_i"),
         h.make_node("Equal", ["t_now", "at_t"], ["is_t"], name="is_t"),
         h.make_node("And", ["is_i", "is_t"], ["both"], name="both"),
         h.make_node("Where", ["both", "minus_one", "zero"], ["extra"], name="extra"),
         h.make_node("LeakyRelu", ["extra"], ["leak"], name="plant", alpha=0.75 if planted else 0.25),
         h.make_node("Mul", ["acc", "half"], ["halved"], name="halve"),
         h.make_node("Add", ["halved", "x_now"], ["mixed"], name="mix"),
         h.make_node("Add", ["mixed", "leak"], ["acc_next"], name="merge"),
         h.make_node("Identity", ["cond"], ["cond_next"], name="go_on")],
        "loop_body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
         h.make_tensor_value_info("acc", F, [2])],
        [h.make_tensor_value_info("cond_next", T.BOOL, []), h.make_tensor_value_info("acc_next", F, [2])],
        [_const("at_i", float(at[1])), _const("half", 0.5), _const("minus_one", -1.0), _const("zero", 0.0)])
    scan_body = h.make_graph(
        [h.make_node("Loop", ["trips", "yes", "s"], ["s_loop"], name="inner", body=loop_body),
         h.make_node("Tanh", ["s_loop"], ["s_next"], name="squash"),
         h.make_node("Identity", ["s_next"], ["y_t"], name="emit")],
        "scan_body",
        [h.make_tensor_value_info("s", F, [2]), h.make_tensor_value_info("x_now", F, [2]),
         h.make_tensor_value_info("t_now", F, [])],
        [h.make_tensor_value_info("s_next", F, [2]), h.make_tensor_value_info("y_t", F, [2])],
        [_const("trips", steps, np.int64), _const("yes", True, np.bool_), _const("at_t", float(at[0]))])
    graph = h.make_graph(
        [h.make_node("Scan", ["s0", "x", "t"], ["s_final", "Y"], name="enc", body=scan_body, num_scan_inputs=2)],
        "loop_in_scan",
        [h.make_tensor_value_info("x", F, [4, 2]), h.make_tensor_value_info("t", F, [4])],
        [h.make_tensor_value_info("s_final", F, [2]), h.make_tensor_value_info("Y", F, [4, 2])],
        [_const("s0", [0.1, -0.2])])
    return _model(graph)


def loop_in_scan_feeds() -> dict[str, np.ndarray]:
    return {"x": np.array([[0.5, -1.0], [1.5, 0.25], [-0.75, 2.0], [1.0, 1.0]], np.float32),
            "t": np.arange(4, dtype=np.float32)}


def renamed(proto: onnx.ModelProto) -> onnx.ModelProto:
    """The same model as a re-export that renamed every node and every value (inputs and outputs too)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(proto)
    names: dict[str, str] = {}

    def new(name: str) -> str:
        if name and name not in names:
            names[name] = f"v{len(names)}"
        return names.get(name, name)

    def walk(graph: onnx.GraphProto) -> None:
        for seq in (graph.input, graph.output, graph.value_info):
            for info in seq:
                info.name = new(info.name)
        for tensor in graph.initializer:
            tensor.name = new(tensor.name)
        for k, node in enumerate(graph.node):
            node.name = f"node{k}_{len(names)}"
            node.input[:] = [new(n) for n in node.input]
            node.output[:] = [new(n) for n in node.output]
            for att in node.attribute:
                if att.type == onnx.AttributeProto.GRAPH:
                    walk(att.g)

    walk(copy.graph)
    return copy


# ---- fp32 and its fp16 variant --------------------------------------------------------------------------------
def fp_pair() -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """y = relu((x + 0.5) / 3) in float32, and the same in float16 between two Casts. Inputs that are multiples
    of 1/4 make `shift` exact in both; `third` rounds in float16: the first divergence."""
    def graph(half: bool) -> onnx.GraphProto:
        dtype = np.float16 if half else np.float32
        nodes = [h.make_node("Add", ["xh" if half else "x", "c_shift"], ["s"], name="shift"),
                 h.make_node("Div", ["s", "c_three"], ["t"], name="third"),
                 h.make_node("Relu", ["t"], ["yh" if half else "y"], name="relu")]
        if half:
            nodes.insert(0, h.make_node("Cast", ["x"], ["xh"], name="to_half", to=T.FLOAT16))
            nodes.append(h.make_node("Cast", ["yh"], ["y"], name="to_float", to=F))
        return h.make_graph(nodes, "fp", [h.make_tensor_value_info("x", F, [8])],
                            [h.make_tensor_value_info("y", F, [8])],
                            [_const("c_shift", 0.5, dtype), _const("c_three", 3.0, dtype)])

    return _model(graph(False)), _model(graph(True))


def fp_feeds() -> dict[str, np.ndarray]:
    return {"x": np.array([1.25, 2.0, -0.25, 0.75, 3.5, 1.0, 5.25, 0.0], np.float32)}


# ---- recurrent nodes ------------------------------------------------------------------------------------------
HIDDEN, INPUT, SEQ, BATCH = 4, 3, 5, 2


def torch_parameters(op: str, seed: int = 0) -> dict[str, np.ndarray]:
    """Parameters shaped like PyTorch's nn.GRU/nn.LSTM (one layer, one direction), in PyTorch's gate order."""
    rng = np.random.default_rng(seed)
    gates = {"GRU": 3, "LSTM": 4}[op]
    shapes = {"weight_ih_l0": (gates * HIDDEN, INPUT), "weight_hh_l0": (gates * HIDDEN, HIDDEN),
              "bias_ih_l0": (gates * HIDDEN,), "bias_hh_l0": (gates * HIDDEN,)}
    return {k: (rng.standard_normal(s) * 0.6).astype(np.float32) for k, s in shapes.items()}


# PyTorch block index of each ONNX block: GRU zrh <- torch rzn; LSTM iofc <- torch ifgo
_EXPORT = {"GRU": [1, 0, 2], "LSTM": [0, 3, 1, 2]}


def exported_rnn(op: str, params: dict[str, np.ndarray], *, linear_before_reset: int = 1,
                 swap: tuple[str, str] | None = None) -> onnx.ModelProto:
    """A recurrent node as an exporter writes PyTorch's parameters: blocks reordered to the spec's, B = [b_ih,
    b_hh]. `swap` exchanges two of the spec's gate blocks (an exporter bug); GRU takes linear_before_reset."""
    letters = {"GRU": "zrh", "LSTM": "iofc"}[op]
    order = list(_EXPORT[op])
    if swap is not None:
        a, b = letters.index(swap[0]), letters.index(swap[1])
        order[a], order[b] = order[b], order[a]

    def blocks(tensor: np.ndarray) -> np.ndarray:
        return np.concatenate([tensor[k * HIDDEN:(k + 1) * HIDDEN] for k in order])[None]

    w, r = blocks(params["weight_ih_l0"]), blocks(params["weight_hh_l0"])
    b = np.concatenate([blocks(params["bias_ih_l0"]), blocks(params["bias_hh_l0"])], axis=1)
    attrs = {"hidden_size": HIDDEN}
    if op == "GRU":
        attrs["linear_before_reset"] = linear_before_reset
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = h.make_node(op, ["X", "W", "R", "B", "", "h0"], outputs, name="rnn", **attrs)
    graph = h.make_graph(
        [node], "rnn", [h.make_tensor_value_info("X", F, [SEQ, BATCH, INPUT]),
                        h.make_tensor_value_info("h0", F, [1, BATCH, HIDDEN])],
        [h.make_tensor_value_info("Y", F, [SEQ, 1, BATCH, HIDDEN]), h.make_tensor_value_info("Y_h", F, None)]
        + ([h.make_tensor_value_info("Y_c", F, None)] if op == "LSTM" else []),
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"), numpy_helper.from_array(b, "B")])
    return _model(graph)


def rnn_feeds(seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"X": rng.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32),
            "h0": (rng.standard_normal((1, BATCH, HIDDEN)) * 0.5).astype(np.float32)}
