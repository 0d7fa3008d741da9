"""Recurrent cells written as loops the way exporters write them (tf2onnx's Keras loops: a Loop over a
time-major copy of the input, the step read with Gather at a carried counter, the fused projection split into
gates; a Scan over the sequence), with the Keras equations in float64 NumPy as their judge. Options plant what
goes wrong in real exports: a wrong gate order or bias split."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class Builder:
    """Nodes and initializers of one graph, with generated value names."""

    def __init__(self, prefix: str) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.prefix, self.count = prefix, 0

    def op(self, op_type: str, *inputs: str, outputs: int = 1, **attrs) -> list[str] | str:
        self.count += 1
        names = [f"{self.prefix}{op_type.lower()}_{self.count}_{k}" for k in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=f"{self.prefix}{op_type}_{self.count}",
                                           **attrs))
        return names if outputs > 1 else names[0]

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name


def keras_weights(kind: str, inp: int, units: int, seed: int, reset_after: bool = True) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    gates = {"GRU": 3, "LSTM": 4, "RNN": 1}[kind]
    bias_shape = (2, gates * units) if kind == "GRU" and reset_after else (gates * units,)
    return {"kernel": rng.standard_normal((inp, gates * units)).astype(np.float32) * 0.5,
            "recurrent_kernel": rng.standard_normal((units, gates * units)).astype(np.float32) * 0.5,
            "bias": rng.standard_normal(bias_shape).astype(np.float32) * 0.3}


def keras_loop(kind: str, inp: int = 3, units: int = 4, *, reset_after: bool = True, masked: bool = False,
               go_backwards: bool = False, scan: bool = False, order: str = "", seed: int = 0,
               hard_sigmoid: bool = False, wrong_bias: bool = False) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A Keras GRU/LSTM/SimpleRNN layer (return_sequences=True) as tf2onnx writes it: X [batch, time, inp]
    (and a bool mask [batch, time] when `masked`) -> Y [batch, time, units]. `order`: the gate order the graph
    cuts the fused projection in (Keras's own when empty: zrh, ifco). `wrong_bias`: a GRU with reset_after takes Keras's
    input bias for its recurrent one and the other way round (an exporter's wrong bias split)."""
    w = keras_weights(kind, inp, units, seed, reset_after)
    g = Builder("")
    k, r, b = g.const("kernel", w["kernel"]), g.const("recurrent_kernel", w["recurrent_kernel"]), w["bias"]
    xt = g.op("Transpose", "X", perm=[1, 0, 2])
    if go_backwards:
        xt = g.op("Slice", xt, g.const("rs", np.array([-1])), g.const("re", np.array([-(2**62)])),
                  g.const("ra", np.array([0])), g.const("rst", np.array([-1])))
    mt = g.op("Transpose", "M", perm=[1, 0]) if masked else None
    if masked and go_backwards:
        mt = g.op("Slice", mt, "rs", "re", "ra", "rst")
    body = Builder("body/")
    states = ["h"] + (["c"] if kind == "LSTM" else [])
    x_t = body.op("Gather", xt, "t" if not scan else "", axis=0) if not scan else "x_t"
    gate_act = "HardSigmoid" if hard_sigmoid else "Sigmoid"
    sig = (lambda v: body.op(gate_act, v, alpha=1 / 6, beta=0.5)) if hard_sigmoid else \
        (lambda v: body.op("Sigmoid", v))
    if kind == "GRU":
        names = list(order or "zrh")
        if reset_after:
            halves = (b[1], b[0]) if wrong_bias else (b[0], b[1])
            bx, bh = g.const("input_bias", halves[0]), g.const("recurrent_bias", halves[1])
            mx = body.op("Add", body.op("MatMul", x_t, k), bx)
            mh = body.op("Add", body.op("MatMul", "h", r), bh)
            xs = dict(zip(names, body.op("Split", mx, axis=-1, outputs=3, num_outputs=3)))
            hs = dict(zip(names, body.op("Split", mh, axis=-1, outputs=3, num_outputs=3)))
            z = sig(body.op("Add", xs["z"], hs["z"]))
            rr = sig(body.op("Add", xs["r"], hs["r"]))
            hh = body.op("Tanh", body.op("Add", xs["h"], body.op("Mul", rr, hs["h"])))
        else:
            bias = g.const("bias", b)
            mx = body.op("Add", body.op("MatMul", x_t, k), bias)
            xs = dict(zip(names, body.op("Split", mx, axis=-1, outputs=3, num_outputs=3)))
            r_zr = g.const("rk_zr", w["recurrent_kernel"][:, :2 * units])
            r_h = g.const("rk_h", w["recurrent_kernel"][:, 2 * units:])
            hs = dict(zip([n for n in names if n != "h"],
                          body.op("Split", body.op("MatMul", "h", r_zr), axis=-1, outputs=2, num_outputs=2)))
            z = sig(body.op("Add", xs["z"], hs["z"]))
            rr = sig(body.op("Add", xs["r"], hs["r"]))
            hh = body.op("Tanh", body.op("Add", xs["h"], body.op("MatMul", body.op("Mul", rr, "h"), r_h)))
        one = g.const("one", np.array(1.0, np.float32))
        new_h = body.op("Add", body.op("Mul", z, "h"), body.op("Mul", body.op("Sub", one, z), hh))
        new = {"h": new_h}
    elif kind == "LSTM":
        bias = g.const("bias", b)
        zz = body.op("Add", body.op("Add", body.op("MatMul", x_t, k), body.op("MatMul", "h", r)), bias)
        parts = dict(zip(order or "ifco", body.op("Split", zz, axis=-1, outputs=4, num_outputs=4)))
        i, f, o = sig(parts["i"]), sig(parts["f"]), sig(parts["o"])
        cc = body.op("Tanh", parts["c"])
        new_c = body.op("Add", body.op("Mul", f, "c"), body.op("Mul", i, cc))
        new = {"c": new_c, "h": body.op("Mul", o, body.op("Tanh", new_c))}
    else:
        bias = g.const("bias", b)
        pre = body.op("Add", body.op("Add", body.op("MatMul", x_t, k), bias), body.op("MatMul", "h", r))
        new = {"h": body.op("Tanh", pre)}
    if masked:
        m_t = body.op("Unsqueeze", body.op("Gather", mt, "t", axis=0) if not scan else "m_t",
                      g.const("last", np.array([-1])))
        new = {s: body.op("Where", m_t, new[s], s) for s in states}
    outs = {s: body.op("Identity", new[s]) for s in states}
    y = body.op("Identity", outs["h"])
    state_info = [helper.make_tensor_value_info(s, F, ["batch", units]) for s in states]
    batch = helper.make_node("Gather", [g.op("Shape", "X"), g.const("zero", np.array(0))], ["batch"])
    g.nodes.append(batch)
    zeros_shape = g.op("Concat", g.op("Unsqueeze", "batch", g.const("axis0", np.array([0]))),
                       g.const("units", np.array([units])), axis=0)
    init = {s: g.op("ConstantOfShape", zeros_shape,
                    value=numpy_helper.from_array(np.zeros(1, np.float32))) for s in states}
    extra_out = [helper.make_tensor_value_info(y, F, ["batch", units])]
    if scan:
        scan_inputs = [xt] + ([mt] if masked else [])
        ins = state_info + [helper.make_tensor_value_info("x_t", F, ["batch", inp])]
        if masked:
            ins.append(helper.make_tensor_value_info("m_t", TensorProto.BOOL, ["batch"]))
        graph = helper.make_graph(body.nodes, "body", ins,
                                  [helper.make_tensor_value_info(outs[s], F, ["batch", units]) for s in states]
                                  + extra_out)
        results = [f"final_{s}" for s in states] + ["ys"]
        g.nodes.append(helper.make_node("Scan", [init[s] for s in states] + scan_inputs, results, name="rnn_scan",
                                        body=graph, num_scan_inputs=len(scan_inputs)))
    else:
        ins = [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
               helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
               helper.make_tensor_value_info("t", TensorProto.INT64, [])] + state_info
        t_next = body.op("Add", "t", g.const("step", np.array(1)))
        cond_out = body.op("Identity", "cond")
        graph = helper.make_graph(
            body.nodes, "body", ins,
            [helper.make_tensor_value_info(cond_out, TensorProto.BOOL, []),
             helper.make_tensor_value_info(t_next, TensorProto.INT64, [])]
            + [helper.make_tensor_value_info(outs[s], F, ["batch", units]) for s in states] + extra_out)
        trip = g.op("Gather", g.op("Shape", "X"), g.const("one_i", np.array(1)))
        results = ["final_t"] + [f"final_{s}" for s in states] + ["ys"]
        g.nodes.append(helper.make_node("Loop", [trip, g.const("true", np.array(True)), g.const("t0", np.array(0))]
                                        + [init[s] for s in states], results, name="while_loop", body=graph))
    ys = g.op("Transpose", "ys", perm=[1, 0, 2])
    if go_backwards:
        ys = g.op("Identity", ys)
    g.nodes.append(helper.make_node("Identity", [ys], ["Y"]))
    inputs = [helper.make_tensor_value_info("X", F, ["batch", "time", inp])]
    if masked:
        inputs.append(helper.make_tensor_value_info("M", TensorProto.BOOL, ["batch", "time"]))
    model = helper.make_model(helper.make_graph(g.nodes, "keras", inputs,
                                                [helper.make_tensor_value_info("Y", F, ["batch", "time", units])],
                                                g.inits),
                              opset_imports=[helper.make_opsetid("", 18)], producer_name="tf2onnx")
    model.ir_version = 8
    return model, w


def keras_reference(kind: str, w: dict[str, np.ndarray], x: np.ndarray, mask: np.ndarray | None = None, *,
                    reset_after: bool = True, go_backwards: bool = False,
                    hard_sigmoid: bool = False) -> dict[str, np.ndarray]:
    """Keras's equations in float64: every gate at every step, named by the ONNX letters, [time, batch, units] in
    input order (steps the mask skips keep the state and are NaN)."""
    k, rk, b = (w[n].astype(np.float64) for n in ("kernel", "recurrent_kernel", "bias"))
    act = (lambda v: np.clip(v / 6 + 0.5, 0, 1)) if hard_sigmoid else _sigmoid
    batch, time, _ = x.shape
    units = rk.shape[0]
    h = np.zeros((batch, units))
    c = np.zeros((batch, units))
    out: dict[str, np.ndarray] = {}
    steps = range(time - 1, -1, -1) if go_backwards else range(time)
    for t in steps:
        xt = x[:, t].astype(np.float64)
        valid = np.ones(batch, bool) if mask is None else mask[:, t]
        if kind == "GRU":
            bx, bh = (b[0], b[1]) if reset_after else (b, np.zeros_like(b))
            mx, mh = xt @ k + bx, h @ rk + bh
            u = units
            z = act(mx[:, :u] + mh[:, :u])
            r = act(mx[:, u:2 * u] + mh[:, u:2 * u])
            hh = np.tanh(mx[:, 2 * u:] + r * mh[:, 2 * u:]) if reset_after else \
                np.tanh(mx[:, 2 * u:] + (r * h) @ rk[:, 2 * u:])
            new = {"z": z, "r": r, "h": hh, "H": z * h + (1 - z) * hh}
        elif kind == "LSTM":
            zz = xt @ k + h @ rk + b
            u = units
            i, f, g, o = act(zz[:, :u]), act(zz[:, u:2 * u]), np.tanh(zz[:, 2 * u:3 * u]), act(zz[:, 3 * u:])
            cn = f * c + i * g
            new = {"i": i, "o": o, "f": f, "c": g, "C": cn, "H": o * np.tanh(cn)}
        else:
            a = xt @ k + b + h @ rk
            new = {"a": a, "H": np.tanh(a)}
        for name, value in new.items():
            out.setdefault(name, np.full((time, batch, units), np.nan))[t] = np.where(valid[:, None], value, np.nan)
        h = np.where(valid[:, None], new["H"], h)
        if "C" in new:
            c = np.where(valid[:, None], new["C"], c)
    return out


def unrolled_rnn(steps: int = 4, inp: int = 3, units: int = 4, seed: int = 0) -> tuple[onnx.ModelProto, dict]:
    """An RNN unrolled as dynamo writes nn.RNN: X [time, batch, inp] projected once (X.W + b), each step's slice
    of the projection added to H_prev.R + b_hh, the first step's zero state folded into the constant b_hh;
    a second chain runs over the projection reversed (a Slice with negative steps): the reverse direction."""
    rng = np.random.default_rng(seed)
    w = {name: rng.standard_normal(shape).astype(np.float32) * 0.5 for name, shape in (
        ("W", (inp, units)), ("R", (units, units)), ("b", (units,)), ("b_hh", (units,)),
        ("W_rev", (inp, units)), ("R_rev", (units, units)), ("b_rev", (units,)), ("b_hh_rev", (units,)))}
    g = Builder("")
    for name, value in w.items():
        g.const(name, value)
    g.const("zero_axis", np.array([0]))
    outputs = []
    for suffix in ("", "_rev"):
        projected = g.op("Add", g.op("MatMul", "X", f"W{suffix}"), f"b{suffix}")
        if suffix:
            projected = g.op("Slice", projected, g.const("flip_start", np.array([-1])),
                             g.const("flip_end", np.array([-(2 ** 62)])), "zero_axis", g.const("flip_step", np.array([-1])))
        h = None
        for t in range(steps):
            x_t = g.op("Squeeze", g.op("Slice", projected, g.const(f"s{t}", np.array([t])),
                                       g.const(f"e{t}", np.array([t + 1])), "zero_axis"), "zero_axis")
            recurrent = f"b_hh{suffix}" if h is None else g.op("Add", g.op("MatMul", h, f"R{suffix}"), f"b_hh{suffix}")
            h = g.op("Tanh", g.op("Add", recurrent, x_t))
            outputs.append(h)
    g.nodes.append(helper.make_node("Concat", outputs, ["Y"], axis=0))
    model = helper.make_model(helper.make_graph(
        g.nodes, "unrolled", [helper.make_tensor_value_info("X", F, [steps, 2, inp])],
        [helper.make_tensor_value_info("Y", F, None)], g.inits),
        opset_imports=[helper.make_opsetid("", 18)], producer_name="pytorch")
    return model, w
