"""The recipe of the Keras models in this folder: small functional Keras 3 models (seeded) exported by tf2onnx,
each stored with what Keras computed (`<model>.npz`, written by explorer.bridge.capture_keras: every layer's
input and output, a Bidirectional layer's two directions, each layer's source line: the models are built inside
`keras_sources`), its inputs (`<model>_feeds.npz`) and copies with faults planted by editing the ONNX file
(`faults/`). Run it from this folder with the TensorFlow venv:

    python make_keras_models.py            # writes everything
    python make_keras_models.py --check    # checks the stored captures against a fresh run, writes nothing

Made with tensorflow 2.21.0, keras 3.15.1, tf2onnx 1.17.0, onnx 1.23.2, onnxruntime 1.32.0."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf2onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from explorer.bridge.capture_keras import build_with_sources, capture_keras  # noqa: E402
from explorer.bridge.captured import load_captured  # noqa: E402


def keras_tagger() -> keras.Model:
    """A Bidirectional GRU (reset_after=True, biases drawn at random), an LSTM and a Dense head over [2, 6, 3]."""
    keras.utils.set_random_seed(0)
    x = keras.Input((6, 3), batch_size=2, name="x")
    gru = keras.layers.GRU(4, return_sequences=True, reset_after=True, bias_initializer="random_normal")
    h = keras.layers.Bidirectional(gru, name="bigru")(x)
    h = keras.layers.LSTM(5, return_sequences=True, name="lstm")(h)
    return keras.Model(x, keras.layers.Dense(2, name="head")(h), name="tagger")


def keras_conv() -> keras.Model:
    """A Conv1D over time, a GRU with reset_after=False and a Dense head over [2, 7, 3]."""
    keras.utils.set_random_seed(1)
    x = keras.Input((7, 3), batch_size=2, name="x")
    h = keras.layers.Conv1D(4, 3, padding="same", activation="relu", name="conv")(x)
    h = keras.layers.GRU(4, return_sequences=True, reset_after=False, name="gru")(h)
    return keras.Model(x, keras.layers.Dense(2, name="head")(h), name="convgru")


def keras_masked() -> keras.Model:
    """A Masking layer (steps of zeros are padding), an LSTM it masks and a Dense head over [2, 6, 3]."""
    keras.utils.set_random_seed(2)
    x = keras.Input((6, 3), batch_size=2, name="x")
    h = keras.layers.Masking(0.0, name="mask")(x)
    h = keras.layers.LSTM(4, return_sequences=True, name="lstm")(h)
    return keras.Model(x, keras.layers.Dense(2, name="head")(h), name="masked")


MODELS = {"keras_tagger": (keras_tagger, (2, 6, 3)), "keras_conv": (keras_conv, (2, 7, 3)),
          "keras_masked": (keras_masked, (2, 6, 3))}


def feeds(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Seeded inputs; the masked model's are padded with steps of zeros (the first sequence after step 3, the
    second at step 2)."""
    x = np.random.default_rng(len(name)).standard_normal(shape).astype(np.float32)
    if name == "keras_masked":
        x[0, 4:] = 0.0
        x[1, 2] = 0.0
    return x


def _init(proto: onnx.ModelProto, name: str) -> onnx.TensorProto:
    return next(t for t in proto.graph.initializer if t.name == name)


def fault_lstm_if(proto: onnx.ModelProto) -> str:
    """The LSTM operator's input and forget gate blocks swapped in W, R and B (ONNX order i, o, f, c)."""
    node = next(n for n in proto.graph.node if n.op_type == "LSTM")
    for k in (1, 2, 3):
        value = numpy_helper.to_array(_init(proto, node.input[k]))
        parts = np.split(value, 8 if k == 3 else 4, axis=1)
        order = [2, 1, 0, 3, 6, 5, 4, 7] if k == 3 else [2, 1, 0, 3]
        _init(proto, node.input[k]).CopyFrom(numpy_helper.from_array(np.concatenate([parts[i] for i in order], 1),
                                                                     node.input[k]))
    return f"LSTM {node.name!r}: the input and forget gate blocks swapped"


def fault_loop_constant(proto: onnx.ModelProto) -> str:
    """The constant 1 of the GRU cell's `1 - z` inside the (first) Loop's body set to 0.9."""
    loop = next(n for n in proto.graph.node if n.op_type == "Loop")
    body = next(a.g for a in loop.attribute if a.name == "body")
    one = next(t for t in body.initializer if t.name.endswith("gru_cell_1/sub/x:0"))
    one.CopyFrom(numpy_helper.from_array(np.full_like(numpy_helper.to_array(one), 0.9), one.name))
    return f"Loop {loop.name!r}: its body's constant {one.name} (1 in 1 - z) set to 0.9"


def _loops(proto: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [n for n in proto.graph.node if n.op_type == "Loop"]


def _stored(proto: onnx.ModelProto, loop: onnx.NodeProto, width: int) -> list[onnx.TensorProto]:
    """The weights tf2onnx hands the Loop of a recurrent layer (kernel, recurrent kernel, bias: `width`, gates
    times units, wide), as stored."""
    stored = {t.name: t for t in proto.graph.initializer}
    return [stored[name] for name in loop.input if name in stored and stored[name].dims[-1:] == [width]]


def _permute_blocks(tensor: onnx.TensorProto, gates: int, order: list[int]) -> None:
    value = numpy_helper.to_array(tensor)
    parts = np.split(value, gates, axis=-1)
    tensor.CopyFrom(numpy_helper.from_array(np.concatenate([parts[k] for k in order], axis=-1), tensor.name))


def fault_gru_gates(proto: onnx.ModelProto) -> str:
    """The z and r blocks of the forward GRU's kernel, recurrent kernel and bias swapped (read in its Loop)."""
    loop = _loops(proto)[0]
    for tensor in _stored(proto, loop, 12):
        _permute_blocks(tensor, 3, [1, 0, 2])
    return f"Loop {loop.name!r}: the z and r blocks of its kernel, recurrent kernel and bias swapped"


def fault_gru_directions(proto: onnx.ModelProto) -> str:
    """The forward and backward GRUs' weights swapped between their two Loops."""
    forward, backward = (_stored(proto, loop, 12) for loop in _loops(proto)[:2])
    for a in forward:
        b = next(t for t in backward if list(t.dims) == list(a.dims))
        va, vb = numpy_helper.to_array(a), numpy_helper.to_array(b)
        a.CopyFrom(numpy_helper.from_array(vb, a.name))
        b.CopyFrom(numpy_helper.from_array(va, b.name))
    return "the forward and backward GRU Loops' weights swapped"


def fault_gru_bias_halves(proto: onnx.ModelProto) -> str:
    """The input and recurrent rows of the forward GRU's bias ([2, 3 units] with reset_after=True) swapped."""
    loop = _loops(proto)[0]
    bias = next(t for t in _stored(proto, loop, 12) if list(t.dims[:1]) == [2])
    bias.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(bias)[::-1].copy(), bias.name))
    return f"Loop {loop.name!r}: the input and recurrent rows of its bias swapped"


def fault_masked_lstm_if(proto: onnx.ModelProto) -> str:
    """The i and f blocks of the masked LSTM's kernel, recurrent kernel and bias swapped (read in its Loop)."""
    loop = _loops(proto)[0]
    for tensor in _stored(proto, loop, 16):
        _permute_blocks(tensor, 4, [1, 0, 2, 3])
    return f"Loop {loop.name!r}: the i and f blocks of its kernel, recurrent kernel and bias swapped"


def fault_gru_reset_after(proto: onnx.ModelProto) -> str:
    """The GRU (reset_after=False) written as if it reset after its recurrent product: the body's candidate
    (r * h) U + (x W + b) becomes r * (h U) + (x W + b), as a GRU with linear_before_reset=1 computes it."""
    loop = _loops(proto)[0]
    body = next(a.g for a in loop.attribute if a.name == "body")
    state = loop_state = body.input[3].name  # the carried h (after the counter, the condition and the time)
    made = {o: n for n in body.node for o in n.output}
    product = next(n for n in body.node if n.op_type == "Gemm" and n.input[0] in made
                   and made[n.input[0]].op_type == "Mul" and loop_state in made[n.input[0]].input)
    reset = made[product.input[0]]
    gate = next(i for i in reset.input if i != state)
    moved = [onnx.helper.make_node("MatMul", [state, product.input[1]], ["reset_after/product:0"],
                                   name="reset_after/product"),
             onnx.helper.make_node("Mul", [gate, "reset_after/product:0"], [reset.output[0]], name=reset.name),
             onnx.helper.make_node("Add", [product.input[2], reset.output[0]], [product.output[0]], name=product.name)]
    nodes = [n for n in body.node if n is not reset]
    at = nodes.index(product)
    nodes[at:at + 1] = moved
    del body.node[:]
    body.node.extend(nodes)
    return f"Loop {loop.name!r}: its body's reset gate applied after the recurrent product"


def fault_gru_reset_after_cut(proto: onnx.ModelProto) -> str:
    """The same, written as an exporter that assumes reset_after=True does: one product of h with the whole
    recurrent kernel, cut in three, r times the candidate's third: r * (h U)[:, 2 units:] + (x W + b)."""
    loop = _loops(proto)[0]
    body = next(a.g for a in loop.attribute if a.name == "body")
    state = body.input[3].name
    made = {o: n for n in body.node for o in n.output}
    product = next(n for n in body.node if n.op_type == "Gemm" and n.input[0] in made
                   and made[n.input[0]].op_type == "Mul" and state in made[n.input[0]].input)
    reset = made[product.input[0]]
    gate = next(i for i in reset.input if i != state)
    kernel = made[product.input[1]].input[0]  # the candidate's columns are cut from the whole recurrent kernel
    parts = [f"reset_after/cut:{k}" for k in range(3)]
    moved = [onnx.helper.make_node("MatMul", [state, kernel], ["reset_after/product:0"], name="reset_after/product"),
             onnx.helper.make_node("Split", ["reset_after/product:0"], parts, name="reset_after/cut", axis=1),
             onnx.helper.make_node("Mul", [gate, parts[2]], [reset.output[0]], name=reset.name),
             onnx.helper.make_node("Add", [product.input[2], reset.output[0]], [product.output[0]], name=product.name)]
    nodes = [n for n in body.node if n is not reset]
    at = nodes.index(product)
    nodes[at:at + 1] = moved
    del body.node[:]
    body.node.extend(nodes)
    return f"Loop {loop.name!r}: its body's reset gate applied to the candidate's cut of one product of h"


def fault_gru_reset_before(proto: onnx.ModelProto) -> str:
    """The forward GRU (reset_after=True) written as if it reset before its recurrent product, the way tf2onnx
    writes a reset_after=False cell: r * (h U + b) + (x W + b') becomes (r * h) U + b + (x W + b'), the candidate's
    columns of U and of the recurrent bias cut out in the body, the input's part the Gemm's C."""
    loop = _loops(proto)[0]
    body = next(a.g for a in loop.attribute if a.name == "body")
    state = body.input[3].name
    made = {o: n for n in body.node for o in n.output}
    reset = next(n for n in body.node if n.op_type == "Mul" and any(
        i in made and made[i].op_type == "Slice" for i in n.input) and state not in n.input)
    cut = next(made[i] for i in reset.input if i in made and made[i].op_type == "Slice")
    gate = next(i for i in reset.input if i != cut.output[0])
    fused = made[cut.input[0]]  # one Gemm of h with the whole recurrent kernel and bias
    after = next(n for n in body.node if n.op_type == "Add" and reset.output[0] in n.input)
    part = next(i for i in after.input if i != reset.output[0])  # the input's projection of the candidate
    starts, ends = (numpy_helper.to_array(next(t for t in body.initializer if t.name == name))[-1:]
                    for name in cut.input[1:3])  # the cut's bounds on the last axis (the gates' units)
    body.initializer.extend([numpy_helper.from_array(starts, "reset_before/starts"),
                             numpy_helper.from_array(ends, "reset_before/ends"),
                             numpy_helper.from_array(np.array([-1], np.int64), "reset_before/axes")])
    bounds = ["reset_before/starts", "reset_before/ends", "reset_before/axes"]
    nodes = [onnx.helper.make_node("Mul", [gate, state], ["reset_before/state"], name="reset_before/state"),
             onnx.helper.make_node("Slice", [fused.input[1], *bounds], ["reset_before/kernel"],
                                   name="reset_before/kernel"),
             onnx.helper.make_node("Slice", [fused.input[2], *bounds], ["reset_before/bias"], name="reset_before/bias"),
             onnx.helper.make_node("Gemm", ["reset_before/state", "reset_before/kernel", part],
                                   ["reset_before/product"], name="reset_before/product"),
             onnx.helper.make_node("Add", ["reset_before/product", "reset_before/bias"], [after.output[0]],
                                   name=after.name)]
    kept = [n for n in body.node if n is not reset]
    at = kept.index(after)
    kept[at:at + 1] = nodes
    del body.node[:]
    body.node.extend(kept)
    return f"Loop {loop.name!r}: its body's reset gate applied to the state before the recurrent product"


FAULTS = {"keras_tagger": {"lstm_if": fault_lstm_if, "loop_constant": fault_loop_constant,
                           "gru_gates": fault_gru_gates, "gru_directions": fault_gru_directions,
                           "gru_bias_halves": fault_gru_bias_halves, "gru_reset_before": fault_gru_reset_before},
          "keras_conv": {"loop_constant": fault_loop_constant, "gru_reset_after": fault_gru_reset_after,
                         "gru_reset_after_cut": fault_gru_reset_after_cut},
          "keras_masked": {"lstm_if": fault_masked_lstm_if}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="check the stored captures, write nothing")
    parser.add_argument("--only", nargs="+", metavar="MODEL", help="these models alone (default: every one)")
    args = parser.parse_args()
    os.chdir(HERE)
    (HERE / "faults").mkdir(exist_ok=True)
    for name, (build, shape) in MODELS.items():
        if args.only and name not in args.only:
            continue
        model = build_with_sources(build)  # each layer keeps the line that made it
        x = feeds(name, shape)
        captured = capture_keras(model, [x])
        if args.check:
            stored = load_captured(HERE / f"{name}.npz")
            assert set(stored.values) == set(captured.values), name
            for key, value in captured.values.items():
                np.testing.assert_allclose(stored.values[key], value, rtol=1e-6, atol=1e-7, err_msg=str(key))
            assert {m: vars(i) for m, i in stored.modules.items()} == \
                {m: vars(i) for m, i in captured.modules.items()}, name
            print(f"{name}: the stored capture is what a fresh run gives ({len(captured.values)} values)")
            continue
        captured.save(HERE / f"{name}.npz")
        np.savez(HERE / f"{name}_feeds.npz", x=x)
        spec = (tf.TensorSpec(shape, tf.float32, name="x"),)
        proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=17)
        path = HERE / f"tf2onnx_{name}.onnx"
        onnx.save(proto, str(path))
        expected = captured.outputs("")[0]
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=1e-4, atol=1e-5)
        for fault, plant in FAULTS[name].items():
            copy = onnx.load(str(path))
            what = plant(copy)
            faulty = HERE / "faults" / f"tf2onnx_{name}_{fault}.onnx"
            onnx.save(copy, str(faulty))
            got = onnxruntime.InferenceSession(str(faulty), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
            differs = float(np.abs(got - expected).max())
            assert differs > 1e-3, (faulty.name, differs)
            print(f"{faulty.name}: {what} (output off by {differs:.3g})")
        print(f"{name}: {len(captured.values)} values of {len(captured.modules)} modules")


if __name__ == "__main__":
    main()
