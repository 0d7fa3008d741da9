"""The recipe of the Keras exports in this folder: Keras 3 recurrent layers on TensorFlow, converted by tf2onnx
(tf2onnx.convert.from_keras on a functional model, or tf2onnx.convert.from_function on a Sequential model called
in a tf.function), and loops that are no recurrent cell (TimeDistributed's pfor loop, tf.while_loops over a
counter). Every layer's weights are seeded uniform values (biases included, so a wrong bias split shows), every
input is seeded.

For each model it writes the .onnx file, its entry in feeds.json (the exact inputs) and reference/<model>.npz:
  inputs/<name>, outputs/<name>    the inputs and Keras's own outputs on them (ONNX input and output names)
  <layer>/<weight>                 every weight under its Keras name (kernel, recurrent_kernel, bias, embeddings),
                                   <layer> the layer's path without the model and the cell ("gru",
                                   "bidirectional/forward_gru")
  gates/<layer>/<letter>           every gate of every recurrent layer at every step, float64, from Keras's
                                   equations (below) and those weights: [seq, num_directions, batch, hidden],
                                   time first in input-position order, forward direction first; named as the ONNX
                                   operators name them (GRU z r h H, LSTM i o f c C H, RNN a H; h and c are the
                                   candidates, C the cell state, a the pre-activation); steps a mask skips are NaN
  gates/<layer>/mask               [seq, num_directions, batch], False where the mask keeps the state
The recomputed output sequence must equal Keras's output to 1e-5 and onnxruntime's run of the export must equal
Keras's output to 1e-5, or the recipe stops. ConvLSTM2D's hidden axis is its state [rows, cols, filters]
flattened in C order (filters fastest, as Keras holds it in NHWC).

Run from this folder with the TensorFlow venv: python export_models.py; then, with a Python that has
onnxconverter-common (the PyTorch venv), python fp16_models.py. CI has no TensorFlow: the files are committed."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf2onnx  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from cell_steps import Step, layer_gates, run_direction, sigmoid  # noqa: E402
from recipe_files import check_close, describe, save_reference, update_feeds  # noqa: E402

L = keras.layers


# ---- Keras's equations in float64 -------------------------------------------------------------------------------
def hard_sigmoid(v: np.ndarray) -> np.ndarray:
    """Keras 3's hard_sigmoid: x/6 + 1/2 clipped to [0, 1]."""
    return np.clip(v / 6.0 + 0.5, 0.0, 1.0)


ACTIVATIONS = {"sigmoid": sigmoid, "hard_sigmoid": hard_sigmoid, "tanh": np.tanh}


def gru_step(w: dict[str, np.ndarray], reset_after: bool, gate: Callable) -> Step:
    """Keras GRU, kernel columns [z, r, h]: reset_after applies r to the recurrent product (bias [2, 3u]: input
    and recurrent), else to the state before it (bias [3u])."""
    k, rk, b = w["kernel"], w["recurrent_kernel"], w["bias"]
    u = rk.shape[0]

    def step(x: np.ndarray, state: tuple[np.ndarray, ...]) -> tuple[dict, tuple]:
        (h,) = state
        mx = x @ k + (b[0] if reset_after else b)
        mh = h @ rk + (b[1] if reset_after else 0.0)
        z = gate(mx[:, :u] + mh[:, :u])
        r = gate(mx[:, u:2 * u] + mh[:, u:2 * u])
        if reset_after:
            cand = np.tanh(mx[:, 2 * u:] + r * mh[:, 2 * u:])
        else:
            cand = np.tanh(mx[:, 2 * u:] + (r * h) @ rk[:, 2 * u:])
        new = z * h + (1.0 - z) * cand
        return {"z": z, "r": r, "h": cand, "H": new}, (new,)
    return step


def lstm_step(w: dict[str, np.ndarray], gate: Callable) -> Step:
    """Keras LSTM, kernel columns [i, f, c, o]."""
    k, rk, b = w["kernel"], w["recurrent_kernel"], w["bias"]
    u = rk.shape[0]

    def step(x: np.ndarray, state: tuple[np.ndarray, ...]) -> tuple[dict, tuple]:
        h, c = state
        a = x @ k + h @ rk + b
        i, f, g, o = gate(a[:, :u]), gate(a[:, u:2 * u]), np.tanh(a[:, 2 * u:3 * u]), gate(a[:, 3 * u:])
        c_new = f * c + i * g
        h_new = o * np.tanh(c_new)
        return {"i": i, "o": o, "f": f, "c": g, "C": c_new, "H": h_new}, (h_new, c_new)
    return step


def rnn_step(w: dict[str, np.ndarray]) -> Step:
    """Keras SimpleRNN: a = x kernel + bias + h recurrent_kernel, H = tanh(a)."""
    k, rk, b = w["kernel"], w["recurrent_kernel"], w["bias"]

    def step(x: np.ndarray, state: tuple[np.ndarray, ...]) -> tuple[dict, tuple]:
        a = x @ k + b + state[0] @ rk
        return {"a": a, "H": np.tanh(a)}, (np.tanh(a),)
    return step


def conv_same(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """2-D convolution, stride 1, 'same' padding, NHWC input and [kh, kw, in, out] kernel (odd sizes)."""
    kh, kw = kernel.shape[:2]
    rows, cols = x.shape[1:3]
    padded = np.pad(x, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    out = np.zeros(x.shape[:3] + (kernel.shape[3],))
    for dy in range(kh):
        for dx in range(kw):
            out += padded[:, dy:dy + rows, dx:dx + cols, :] @ kernel[dy, dx]
    return out


def conv_lstm_step(w: dict[str, np.ndarray]) -> Step:
    """Keras ConvLSTM2D ('same' padding), kernel output channels [i, f, c, o]; gates flattened per batch item."""
    k, rk, b = w["kernel"], w["recurrent_kernel"], w["bias"]
    f_out = rk.shape[2]

    def step(x: np.ndarray, state: tuple[np.ndarray, ...]) -> tuple[dict, tuple]:
        h, c = state
        a = conv_same(x, k) + b + conv_same(h, rk)
        i, f = sigmoid(a[..., :f_out]), sigmoid(a[..., f_out:2 * f_out])
        g, o = np.tanh(a[..., 2 * f_out:3 * f_out]), sigmoid(a[..., 3 * f_out:])
        c_new = f * c + i * g
        h_new = o * np.tanh(c_new)
        gates = {"i": i, "o": o, "f": f, "c": g, "C": c_new, "H": h_new}
        return {n: v.reshape(v.shape[0], -1) for n, v in gates.items()}, (h_new, c_new)
    return step


ROUTES = {"keras": "from_keras", "function": "from_function"}


# ---- the models ------------------------------------------------------------------------------------------------
class Export:
    """One model to export: its Keras model, how tf2onnx converts it, its inputs, and how to recompute it."""

    def __init__(self, name: str, model: keras.Model, inputs: np.ndarray, opset: int, route: str,
                 recompute: Callable[[keras.Model, np.ndarray], tuple[dict, np.ndarray]] | None = None,
                 dynamic_time: bool = False, note: str = "") -> None:
        self.name, self.model, self.inputs, self.opset, self.route = name, model, inputs, opset, route
        self.recompute, self.dynamic_time, self.note = recompute, dynamic_time, note


def seeded(model: keras.Model, seed: int, scale: float = 0.6) -> keras.Model:
    """Replaces every weight with seeded uniform values in [-scale, scale]."""
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        layer.set_weights([rng.uniform(-scale, scale, w.shape).astype(np.float32) for w in layer.get_weights()])
    return model


def weights_of(model: keras.Model) -> dict[str, np.ndarray]:
    """Every weight by its Keras path, without the model's name and the cell's (e.g. bidirectional/forward_gru/bias)."""
    out = {}
    for w in model.weights:
        parts = [p for p in w.path.split("/") if not p.endswith("_cell")]
        if parts[0] == model.name:
            parts = parts[1:]
        out["/".join(parts)] = np.asarray(w.numpy(), np.float64)
    return out


def layer_weights(weights: dict[str, np.ndarray], layer: str) -> dict[str, np.ndarray]:
    prefix = layer + "/"
    return {k[len(prefix):]: v for k, v in weights.items() if k.startswith(prefix) and "/" not in k[len(prefix):]}


def recurrent(layer_name: str, kind: str, **options: object) -> Callable:
    """A recompute for a model whose recurrent layer `layer_name` reads the model input (after Masking, if any)."""
    def recompute(model: keras.Model, x: np.ndarray) -> tuple[dict, np.ndarray]:
        weights = weights_of(model)
        mask = np.ones(x.shape[:2], bool) if not options.get("masking") else np.any(x != 0.0, axis=-1)
        gates, out = cell_layer(kind, layer_weights(weights, layer_name), x.astype(np.float64), mask,
                                **options)
        return {layer_name: layer_gates([gates])}, out
    return recompute


def cell_layer(kind: str, w: dict[str, np.ndarray], x: np.ndarray, mask: np.ndarray,
               reverse: bool = False, zero_masked: bool = False, **options: object) -> tuple[dict, np.ndarray]:
    """One direction of one recurrent layer: (its gates {letter: [seq, batch, units]}, the mask), and its output."""
    batch = x.shape[0]
    if kind == "GRU":
        gate = ACTIVATIONS[str(options.get("recurrent_activation", "sigmoid"))]
        step, state = gru_step(w, bool(options.get("reset_after", True)), gate), 1
    elif kind == "LSTM":
        step, state = lstm_step(w, sigmoid), 2
    elif kind == "RNN":
        step, state = rnn_step(w), 1
    else:
        step, state = conv_lstm_step(w), 2
    if kind == "ConvLSTM2D":
        shape: tuple[int, ...] = (batch,) + x.shape[2:4] + (w["recurrent_kernel"].shape[2],)
    else:
        shape = (batch, w["recurrent_kernel"].shape[0])
    gates, out = run_direction(step, x, mask, (np.zeros(shape),) * state, reverse, zero_masked)
    return (gates, mask), out


def embedding_bigru(model: keras.Model, x: np.ndarray) -> tuple[dict, np.ndarray]:
    """Embedding(mask_zero=True) then Bidirectional(GRU): the mask is x != 0, masked outputs are zero."""
    weights = weights_of(model)
    emb = weights["embedding/embeddings"][x]
    mask = x != 0
    fw, out_f = cell_layer("GRU", layer_weights(weights, "bidirectional/forward_gru"), emb, mask,
                           zero_masked=True)
    bw, out_b = cell_layer("GRU", layer_weights(weights, "bidirectional/backward_gru"), emb, mask,
                           reverse=True, zero_masked=True)
    return {"bidirectional": layer_gates([fw, bw])}, np.concatenate([out_f, out_b], axis=-1)


def bilstm(model: keras.Model, x: np.ndarray) -> tuple[dict, np.ndarray]:
    weights = weights_of(model)
    mask = np.ones(x.shape[:2], bool)
    fw, out_f = cell_layer("LSTM", layer_weights(weights, "bidirectional/forward_lstm"), x.astype(np.float64),
                           mask)
    bw, out_b = cell_layer("LSTM", layer_weights(weights, "bidirectional/backward_lstm"), x.astype(np.float64),
                           mask, reverse=True)
    return {"bidirectional": layer_gates([fw, bw])}, np.concatenate([out_f, out_b], axis=-1)


def stacked_lstm(model: keras.Model, x: np.ndarray) -> tuple[dict, np.ndarray]:
    weights = weights_of(model)
    mask = np.ones(x.shape[:2], bool)
    first, out1 = cell_layer("LSTM", layer_weights(weights, "lstm"), x.astype(np.float64), mask)
    second, out2 = cell_layer("LSTM", layer_weights(weights, "lstm_1"), out1, mask)
    return {"lstm": layer_gates([first]), "lstm_1": layer_gates([second])}, out2


def sequential(*layers: keras.layers.Layer) -> keras.Sequential:
    return keras.Sequential(list(layers))


def fresh(seed: int) -> None:
    """Default layer names restart (gru, lstm, sequential) and seeds are fixed."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)


def exports() -> list[Export]:
    rng = np.random.default_rng(0)

    def normal(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    made = []
    fresh(1)
    made.append(Export("keras_gru", seeded(sequential(keras.Input((5, 3)), L.GRU(4, return_sequences=True)), 1),
                       normal(2, 5, 3), 13, "function", recurrent("gru", "GRU")))
    fresh(1)
    made.append(Export("keras_gru_opset17", seeded(sequential(keras.Input((5, 3)), L.GRU(4, return_sequences=True)), 1),
                       normal(2, 5, 3), 17, "keras", recurrent("gru", "GRU")))
    fresh(2)
    model = sequential(keras.Input((None, 2)), L.GRU(3, reset_after=False, return_sequences=True))
    made.append(Export("keras_gru_reset_before", seeded(model, 2), normal(3, 6, 2), 13, "keras",
                       recurrent("gru", "GRU", reset_after=False), dynamic_time=True))
    fresh(3)
    model = sequential(keras.Input((4, 4)), L.SimpleRNN(5, return_sequences=True))
    made.append(Export("keras_simple_rnn", seeded(model, 3), normal(2, 4, 4), 17, "function",
                       recurrent("simple_rnn", "RNN")))
    fresh(4)
    x = normal(3, 6, 3)
    x[1, 4:] = 0.0  # padding at the end
    x[2, 2] = 0.0  # and a step skipped inside the sequence
    model = sequential(keras.Input((6, 3)), L.Masking(0.0), L.LSTM(4, return_sequences=True))
    made.append(Export("keras_lstm_masking", seeded(model, 4), x, 13, "keras",
                       recurrent("lstm", "LSTM", masking=True)))
    fresh(5)
    tokens = rng.integers(1, 10, (3, 5)).astype(np.int32)
    tokens[0, 3:] = 0
    tokens[2, 4:] = 0
    model = sequential(keras.Input((5,), dtype="int32"), L.Embedding(10, 3, mask_zero=True),
                       L.Bidirectional(L.GRU(4, return_sequences=True)))
    made.append(Export("keras_embedding_bigru", seeded(model, 5), tokens, 13, "keras", embedding_bigru))
    fresh(6)
    model = sequential(keras.Input((4, 4, 4, 1)), L.ConvLSTM2D(2, 3, padding="same", return_sequences=True))
    made.append(Export("keras_convlstm2d", seeded(model, 6, 0.4), normal(2, 4, 4, 4, 1), 17, "keras",
                       recurrent("conv_lstm2d", "ConvLSTM2D")))
    fresh(7)
    model = sequential(keras.Input((7, 2)), L.GRU(6, recurrent_activation="hard_sigmoid", return_sequences=True))
    made.append(Export("keras_gru_hard_sigmoid", seeded(model, 7), normal(2, 7, 2) * 2, 13, "keras",
                       recurrent("gru", "GRU", recurrent_activation="hard_sigmoid")))
    fresh(8)
    model = sequential(keras.Input((5, 3)), L.LSTM(4, return_sequences=True))
    made.append(Export("keras_lstm", seeded(model, 8), normal(2, 5, 3), 13, "keras", recurrent("lstm", "LSTM")))
    fresh(9)
    model = sequential(keras.Input((5, 3)), L.LSTM(4, return_sequences=True), L.LSTM(4, return_sequences=True))
    made.append(Export("keras_lstm_stacked", seeded(model, 9), normal(2, 5, 3), 13, "keras", stacked_lstm))
    fresh(10)
    model = sequential(keras.Input((5, 3)), L.Bidirectional(L.LSTM(3, return_sequences=True)))
    made.append(Export("keras_bilstm", seeded(model, 10), normal(2, 5, 3), 13, "keras", bilstm))
    fresh(11)
    model = sequential(keras.Input((None, 3)), L.TimeDistributed(L.Dense(4)))
    made.append(Export("keras_time_distributed", seeded(model, 11), normal(3, 5, 3), 13, "keras",
                       dynamic_time=True, note="TimeDistributed(Dense) over a time axis of unknown length "
                       "(Keras's pfor path, see below)"))
    return made


@tf.function(input_signature=[tf.TensorSpec((None, 3), tf.float32, name="x"), tf.TensorSpec((), tf.int32, name="n")])
def repeated_doubling(x: tf.Tensor, n: tf.Tensor) -> tf.Tensor:
    """n steps of y = 2 y + 1: a while loop over a counter, no cell."""
    def body(i: tf.Tensor, y: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        return i + 1, y * 2.0 + 1.0
    return tf.while_loop(lambda i, y: i < n, body, (tf.constant(0), x))[1]


@tf.function(input_signature=[tf.TensorSpec((None, 5, 3), tf.float32, name="x")])
def cumulative_product(x: tf.Tensor) -> tf.Tensor:
    """The running product over time, written step by step into a TensorArray: a carried state, no cell."""
    n = tf.shape(x)[1]

    def body(i: tf.Tensor, acc: tf.Tensor, ta: tf.TensorArray) -> tuple:
        acc = acc * x[:, i]
        return i + 1, acc, ta.write(i, acc)
    _, _, ta = tf.while_loop(lambda i, acc, ta: i < n, body,
                             (tf.constant(0), tf.ones_like(x[:, 0]), tf.TensorArray(tf.float32, size=n)))
    return tf.transpose(ta.stack(), [1, 0, 2])


# ---- conversion, checks and files -------------------------------------------------------------------------------
def convert(export: Export) -> tuple[onnx.ModelProto, np.ndarray]:
    """The export, and Keras's output on the inputs from the same traced call tf2onnx converts."""
    spec_shape = (None, None) + export.inputs.shape[2:] if export.dynamic_time else (None,) + export.inputs.shape[1:]
    signature = [tf.TensorSpec(spec_shape, tf.as_dtype(export.inputs.dtype), name="x")]
    model = export.model
    traced = tf.function(lambda x: model(x), input_signature=signature)
    if export.route == "function":  # a Sequential model called in a tf.function
        proto, _ = tf2onnx.convert.from_function(traced, input_signature=signature, opset=export.opset)
    else:  # from_keras needs a functional model under Keras 3 (a Sequential's output names are not found)
        functional = keras.Model(model.inputs, model.outputs, name=model.name)
        proto, _ = tf2onnx.convert.from_keras(functional, input_signature=signature, opset=export.opset)
    return proto, np.asarray(traced(export.inputs))


def write(name: str, proto: onnx.ModelProto, inputs: dict[str, np.ndarray], outputs: dict[str, np.ndarray],
          arrays: dict[str, np.ndarray], feeds: dict) -> None:
    onnx.checker.check_model(proto)
    onnx.save(proto, str(HERE / f"{name}.onnx"))
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for (out_name, expected), got in zip(outputs.items(), session.run(None, inputs)):
        check_close(f"{name}: onnxruntime's {out_name} against the framework", got, expected)
    save_reference(HERE, name, inputs, outputs, arrays)
    feeds[f"{name}.onnx"] = inputs


def export_keras(export: Export, feeds: dict, table: list[str]) -> None:
    proto, expected = convert(export)
    (input_name,) = [i.name for i in proto.graph.input]
    (output_name,) = [o.name for o in proto.graph.output]
    arrays = {k: v.astype(np.float32) for k, v in weights_of(export.model).items()}
    if export.recompute is not None:
        gates, recomputed = export.recompute(export.model, export.inputs)
        check_close(f"{export.name}: Keras's equations against Keras", recomputed, expected)
        arrays |= {f"gates/{layer}/{letter}": v for layer, g in gates.items() for letter, v in g.items()}
    write(export.name, proto, {input_name: export.inputs}, {output_name: expected}, arrays, feeds)
    layers = ", ".join(type(layer).__name__ for layer in export.model.layers)
    table.append(f"| {export.name}.onnx | tf2onnx {tf2onnx.__version__} `{ROUTES[export.route]}` | "
                 f"{export.note or layers} | {describe(proto)} | {export.opset} |")


def export_function(name: str, function: tf.types.experimental.GenericFunction, inputs: dict[str, np.ndarray],
                    note: str, feeds: dict, table: list[str]) -> None:
    proto, _ = tf2onnx.convert.from_function(function, input_signature=function.input_signature, opset=13)
    expected = np.asarray(function(**inputs))
    (output_name,) = [o.name for o in proto.graph.output]
    write(name, proto, inputs, {output_name: expected}, {}, feeds)
    table.append(f"| {name}.onnx | tf2onnx {tf2onnx.__version__} `from_function` | {note} | {describe(proto)} | 13 |")


def main() -> None:
    feeds: dict = {}
    table: list[str] = []
    for export in exports():
        export_keras(export, feeds, table)
    rng = np.random.default_rng(1)
    export_function("tf_while_doubling", repeated_doubling,
                    {"x": rng.standard_normal((2, 3)).astype(np.float32), "n": np.array(3, np.int32)},
                    "tf.while_loop over a counter: y = 2 y + 1, n times", feeds, table)
    export_function("tf_while_cumprod", cumulative_product, {"x": rng.uniform(0.5, 1.5, (2, 5, 3)).astype(np.float32)},
                    "tf.while_loop writing the running product over time into a TensorArray", feeds, table)
    update_feeds(HERE, feeds)
    print(f"tensorflow {tf.__version__}, keras {keras.__version__}, tf2onnx {tf2onnx.__version__}, "
          f"onnx {onnx.__version__}, onnxruntime {ort.__version__}, numpy {np.__version__}")
    print("\n".join(table))


if __name__ == "__main__":
    main()
