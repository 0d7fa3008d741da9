"""The recipe of the models in this folder: small PyTorch models (seeded) exported by torch.onnx's two exporters
(TorchScript: `torch.onnx.export(..., dynamo=False)`, traced; dynamo: `dynamo=True`), each stored with what
PyTorch computed (`<model>.npz`, written by explorer.bridge.capture: every module's inputs and outputs per call,
each recurrent layer run alone, the module tree with source lines), its inputs (`<model>_feeds.npz`) and copies
with faults planted by editing the ONNX file (`faults/`). Run it from this folder with the PyTorch venv:

    python make_bridge_models.py            # writes everything
    python make_bridge_models.py --check    # checks the stored captures against a fresh run, writes nothing

Made with torch 2.13.0+cpu, onnx 1.23.2, onnxruntime 1.32.0, onnxscript 0.7.2."""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import torch
from onnx import helper, numpy_helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from explorer.bridge.capture import capture  # noqa: E402
from explorer.bridge.captured import load_captured  # noqa: E402


class Tagger(torch.nn.Module):
    """Embedding, a 2-layer bidirectional GRU, an LSTM, a LayerNorm and a linear head (batch first)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(20, 6)
        self.gru = torch.nn.GRU(6, 5, num_layers=2, bidirectional=True, batch_first=True)
        self.lstm = torch.nn.LSTM(10, 4, batch_first=True)
        self.norm = torch.nn.LayerNorm(4)
        self.head = torch.nn.Linear(4, 3)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        x, _ = self.gru(x)
        x, _ = self.lstm(x)
        return self.head(self.norm(x))


class Cells(torch.nn.Module):
    """A GRUCell feeding an LSTMCell, called once per step in a Python loop (the exporters unroll it)."""

    def __init__(self) -> None:
        super().__init__()
        self.gcell = torch.nn.GRUCell(3, 4)
        self.lcell = torch.nn.LSTMCell(4, 5)
        self.out = torch.nn.Linear(5, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        h, h2, c2 = x.new_zeros(b, 4), x.new_zeros(b, 5), x.new_zeros(b, 5)
        outs = []
        for t in range(x.shape[1]):
            h = self.gcell(x[:, t], h)
            h2, c2 = self.lcell(h, (h2, c2))
            outs.append(self.out(h2))
        return torch.stack(outs, 1)


class ConvGru(torch.nn.Module):
    """A Conv1d over time, then a 2-layer GRU (time first) and a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv1d(3, 6, kernel_size=3, padding=1)
        self.act = torch.nn.ReLU()
        self.gru = torch.nn.GRU(6, 4, num_layers=2)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.act(self.conv(x))            # [batch, 6, time]
        y, _ = self.gru(y.permute(2, 0, 1))   # [time, batch, 4]
        return self.head(y)


class Block(torch.nn.Module):
    """A pre-norm transformer block: LayerNorm, self-attention, residual, LayerNorm, an MLP with GELU."""

    def __init__(self) -> None:
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(8)
        self.attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(8)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        a, _ = self.attn(h, h, h, need_weights=False)
        x = x + a
        return x + self.mlp(self.norm2(x))


class Elman(torch.nn.Module):
    """An Elman RNN as a loop over time steps; scripted, the TorchScript exporter writes it as a Loop."""

    def __init__(self) -> None:
        super().__init__()
        self.ih = torch.nn.Linear(3, 4)
        self.hh = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.zeros(x.size(0), 4)
        outs = []
        for t in range(x.size(1)):
            h = torch.tanh(self.ih(x[:, t]) + self.hh(h))
            outs.append(h)
        return torch.stack(outs, 1)


class Branches(torch.nn.Module):
    """torch.cond between two linear layers; dynamo writes an If whose branches carry no module scope."""

    def __init__(self) -> None:
        super().__init__()
        self.calm = torch.nn.Linear(4, 4)
        self.loud = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.sum() > 0, lambda v: self.calm(v).relu(), lambda v: self.loud(v) * 2.0, (x,))


class GruCell(torch.nn.Module):
    """A GRU cell written out with two Linear layers (PyTorch's equations and gate order r, z, n)."""

    def __init__(self, inputs: int, hidden: int) -> None:
        super().__init__()
        self.ih = torch.nn.Linear(inputs, 3 * hidden)
        self.hh = torch.nn.Linear(hidden, 3 * hidden)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        xr, xz, xn = self.ih(x).chunk(3, 1)
        hr, hz, hn = self.hh(h).chunk(3, 1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h


class LoopGru(torch.nn.Module):
    """A Linear projecting each step, a GRU cell carried over time and a Linear head; scripted: a Loop whose body
    is the cell (nn.GRUCell itself does not export scripted in torch 2.13)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(3, 4)
        self.cell = GruCell(4, 5)
        self.head = torch.nn.Linear(5, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.zeros(x.size(0), 5)
        outs = []
        for t in range(x.size(1)):
            h = self.cell(self.proj(x[:, t]), h)
            outs.append(self.head(h))
        return torch.stack(outs, 1)


class ScanGru(torch.nn.Module):
    """torch.scan over an nn.GRUCell (time first) and a Linear head: dynamo writes the cell as a Scan's body."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = torch.nn.GRUCell(3, 4)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from torch._higher_order_ops.scan import scan

        zeros = x.new_zeros(x.shape[1], self.cell.hidden_size)

        def step(h: torch.Tensor, xt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            h = self.cell(xt, h)
            return h, h.clone()

        _, ys = scan(step, zeros, x)
        return self.head(ys)


def tagger() -> Tagger:
    """The factories `explorer compare --pytorch make_bridge_models.py:tagger` builds (seeded as stored)."""
    torch.manual_seed(0)
    return Tagger().eval()


def cells() -> Cells:
    torch.manual_seed(1)
    return Cells().eval()


def conv_gru() -> ConvGru:
    torch.manual_seed(2)
    return ConvGru().eval()


def block() -> Block:
    torch.manual_seed(3)
    return Block().eval()


def elman() -> Elman:
    torch.manual_seed(4)
    return Elman().eval()


def branches() -> Branches:
    torch.manual_seed(5)
    return Branches().eval()


def loop_gru() -> LoopGru:
    torch.manual_seed(6)
    return LoopGru().eval()


def scan_gru() -> ScanGru:
    torch.manual_seed(7)
    return ScanGru().eval()


def models() -> dict[str, tuple[torch.nn.Module, dict[str, np.ndarray]]]:
    """name -> (module, its ONNX inputs)."""
    def normal(seed: int, *shape: int) -> np.ndarray:
        return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)

    return {"tagger": (tagger(), {"tokens": np.random.default_rng(0).integers(0, 20, (2, 6)).astype(np.int64)}),
            "cells": (cells(), {"x": normal(1, 2, 4, 3)}),
            "conv_gru": (conv_gru(), {"x": normal(2, 2, 3, 7)}),
            "block": (block(), {"x": normal(3, 2, 5, 8)}),
            "elman": (elman(), {"x": normal(4, 2, 5, 3)}),
            "branches": (branches(), {"x": np.abs(normal(5, 2, 4))}),
            "loop_gru": (loop_gru(), {"x": normal(6, 2, 5, 3)}),
            "scan_gru": (scan_gru(), {"x": normal(7, 5, 2, 3)})}


EXPORTERS = {"elman": ("ts",), "branches": ("dynamo",), "loop_gru": ("ts",),  # scripted loops (Loops); torch.cond
             "scan_gru": ("dynamo",)}  # torch.scan (a Scan)
SCRIPTED = ("elman", "loop_gru")


def export(module: torch.nn.Module, feeds: dict[str, np.ndarray], path: Path, dynamo: bool,
           scripted: bool = False) -> None:
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    common = {"input_names": list(feeds), "output_names": ["y"]}
    if dynamo:
        torch.onnx.export(module, args, str(path), dynamo=True, external_data=False, verbose=False, **common)
    elif scripted:
        torch.onnx.export(torch.jit.script(module), args, str(path), dynamo=False, opset_version=17,
                          dynamic_axes={"x": {0: "batch", 1: "time"}}, **common)
    else:
        torch.onnx.export(module, args, str(path), dynamo=False, opset_version=17, **common)


# --- planted faults: each edits a copy of an export the way an exporter bug would have written it ----------

def _init(proto: onnx.ModelProto, name: str) -> onnx.TensorProto:
    return next(t for t in proto.graph.initializer if t.name == name)


def _set(proto: onnx.ModelProto, name: str, value: np.ndarray) -> None:
    _init(proto, name).CopyFrom(numpy_helper.from_array(value.astype(np.float32), name))


def _nodes(proto: onnx.ModelProto, op: str) -> list[onnx.NodeProto]:
    return [n for n in proto.graph.node if n.op_type == op]


def _blocks(value: np.ndarray, axis: int, gates: int, order: list[int]) -> np.ndarray:
    parts = np.split(value, gates, axis=axis)
    return np.concatenate([parts[k] for k in order], axis=axis)


def _permute(proto: onnx.ModelProto, node: onnx.NodeProto, gates: int, order: list[int]) -> None:
    for k in (1, 2, 3):  # W, R, B (B: both halves)
        value = numpy_helper.to_array(_init(proto, node.input[k]))
        if k == 3:
            halves = np.split(value, 2, axis=1)
            value = np.concatenate([_blocks(h, 1, gates, order) for h in halves], axis=1)
        else:
            value = _blocks(value, 1, gates, order)
        _set(proto, node.input[k], value)


def _attribute(node: onnx.NodeProto, name: str, value: object) -> None:
    for a in list(node.attribute):
        if a.name == name:
            node.attribute.remove(a)
    node.attribute.append(onnx.helper.make_attribute(name, value))


def fault_gru_gates(proto: onnx.ModelProto) -> str:
    node = _nodes(proto, "GRU")[0]
    _permute(proto, node, 3, [1, 0, 2])
    return f"GRU {node.name!r}: the z and r blocks of W, R and B swapped"


def fault_gru_lbr(proto: onnx.ModelProto) -> str:
    node = _nodes(proto, "GRU")[-1]
    _attribute(node, "linear_before_reset", 0)
    return f"GRU {node.name!r}: linear_before_reset=0"


def fault_gru_directions(proto: onnx.ModelProto) -> str:
    node = _nodes(proto, "GRU")[0]
    for k in (1, 2, 3):
        _set(proto, node.input[k], numpy_helper.to_array(_init(proto, node.input[k]))[::-1].copy())
    return f"GRU {node.name!r}: the forward and reverse directions' weights swapped"


def fault_gru_bias_halves(proto: onnx.ModelProto) -> str:
    node = _nodes(proto, "GRU")[-1]
    b = numpy_helper.to_array(_init(proto, node.input[3]))
    _set(proto, node.input[3], np.concatenate(np.split(b, 2, axis=1)[::-1], axis=1))
    return f"GRU {node.name!r}: the input and recurrent bias halves of B swapped"


def fault_lstm_if(proto: onnx.ModelProto) -> str:
    node = _nodes(proto, "LSTM")[0]
    _permute(proto, node, 4, [2, 1, 0, 3])  # ONNX order i, o, f, c: i and f swapped
    return f"LSTM {node.name!r}: the input and forget gate blocks swapped"


def fault_layernorm_eps(proto: onnx.ModelProto) -> str:
    node = _nodes(proto, "LayerNormalization")[0]
    _attribute(node, "epsilon", 0.5)
    return f"LayerNormalization {node.name!r}: epsilon 0.5"


def fault_step_bias(proto: onnx.ModelProto) -> str:
    """The GRUCell's input bias changed in the third step only (its own copy of the initializer)."""
    gemms = [n for n in _nodes(proto, "Gemm") if "gcell.bias_ih" in n.input]
    node = gemms[2]
    value = numpy_helper.to_array(_init(proto, "gcell.bias_ih")).copy()
    value += 1.0
    proto.graph.initializer.append(numpy_helper.from_array(value, "gcell.bias_ih_step2"))
    node.input[list(node.input).index("gcell.bias_ih")] = "gcell.bias_ih_step2"
    return f"Gemm {node.name!r}: the GRUCell's input bias changed (+1) at step 2 only"


def fault_cell_gates(proto: onnx.ModelProto) -> str:
    """The GRUCell's r and z blocks swapped in all four of its parameters (every step reads them)."""
    for name in ("gcell.weight_ih", "gcell.weight_hh", "gcell.bias_ih", "gcell.bias_hh"):
        _set(proto, name, _blocks(numpy_helper.to_array(_init(proto, name)), 0, 3, [1, 0, 2]))
    return "GRUCell: the r and z blocks of weight_ih, weight_hh, bias_ih and bias_hh swapped"


def fault_loop_weight(proto: onnx.ModelProto) -> str:
    """The recurrent Linear's weight, read inside the Loop's body, changed in one entry."""
    value = numpy_helper.to_array(_init(proto, "hh.weight")).copy()
    value[0, 0] += 1.0
    _set(proto, "hh.weight", value)
    return "Loop body: hh.weight[0, 0] + 1"


def fault_ih_weight(proto: onnx.ModelProto) -> str:
    """The input Linear's weight, read inside the Loop's body, changed in one entry: the state carries its error
    to every later step."""
    value = numpy_helper.to_array(_init(proto, "ih.weight")).copy()
    value[0, 0] += 1.0
    _set(proto, "ih.weight", value)
    return "Loop body: ih.weight[0, 0] + 1"


def fault_loop_cell_gates(proto: onnx.ModelProto) -> str:
    """The r and z blocks of the cell's four weights swapped, read inside the Loop's body."""
    for name in ("cell.ih.weight", "cell.ih.bias", "cell.hh.weight", "cell.hh.bias"):
        _set(proto, name, _blocks(numpy_helper.to_array(_init(proto, name)), 0, 3, [1, 0, 2]))
    return "Loop body: the r and z blocks of cell.ih and cell.hh (weights and biases) swapped"


def fault_loop_cell_biases(proto: onnx.ModelProto) -> str:
    """The cell's input and recurrent biases swapped."""
    ih, hh = (numpy_helper.to_array(_init(proto, f"cell.{n}.bias")).copy() for n in ("ih", "hh"))
    _set(proto, "cell.ih.bias", hh)
    _set(proto, "cell.hh.bias", ih)
    return "Loop body: cell.ih.bias and cell.hh.bias swapped"


def fault_proj_bias(proto: onnx.ModelProto) -> str:
    """The projection's bias changed: the cell only carries its error (through its input and its state)."""
    _set(proto, "proj.bias", numpy_helper.to_array(_init(proto, "proj.bias")) + 0.5)
    return "Loop body: proj.bias + 0.5"


def _body(proto: onnx.ModelProto) -> onnx.GraphProto:
    loop = next(n for n in proto.graph.node if n.op_type in ("Loop", "Scan"))
    return next(a.g for a in loop.attribute if a.name == "body")


def fault_reset_before(proto: onnx.ModelProto) -> str:
    """The GRU cell in the loop's body written with its reset gate applied to the state before the recurrent
    product, (W x + b) + R (r * h) + Rb, as a GRU with linear_before_reset=0 computes it, where PyTorch computes
    (W x + b) + r * (R h + Rb): the body's r * (its candidate's rows of R h + Rb) becomes a product of r * h with
    those rows, stored as initializers of their own."""
    body = _body(proto)
    producer = {o: n for n in body.node for o in n.output}
    product = next(n for n in body.node if n.op_type == "Gemm" and "hh" in n.input[1])  # the state's Linear
    gates = [n.output[0] for n in body.node if n.op_type == "Sigmoid"]
    mul = next(n for n in body.node if n.op_type == "Mul" and any(i in gates for i in n.input) and any(
        i in producer and product.output[0] in producer[i].input for i in n.input))
    r = next(i for i in mul.input if i in gates)
    weight, bias = (numpy_helper.to_array(_init(proto, name)) for name in product.input[1:3])
    rows = weight.shape[0] // 3  # PyTorch's blocks r, z, n: the candidate's are the last
    names = [f"{product.input[1]}.candidate", f"{product.input[2]}.candidate"]
    for name, value in zip(names, (weight[2 * rows:], bias[2 * rows:])):
        proto.graph.initializer.append(numpy_helper.from_array(value, name))
    nodes = [helper.make_node("Mul", [r, product.input[0]], ["reset_state"], name="reset_state"),
             helper.make_node("Gemm", ["reset_state", *names], [mul.output[0]], name="reset_product", transB=1)]
    at = list(body.node).index(mul)
    body.node.remove(mul)
    for offset, node in enumerate(nodes):
        body.node.insert(at + offset, node)
    return f"{_body_owner(proto)} body: the reset gate applied to the state before the recurrent product"


def _body_owner(proto: onnx.ModelProto) -> str:
    return next(n.op_type for n in proto.graph.node if n.op_type in ("Loop", "Scan"))


def fault_scan_cell_gates(proto: onnx.ModelProto) -> str:
    """The r and z blocks of the GRUCell's four parameters swapped, read inside the Scan's body."""
    for name in ("cell.weight_ih", "cell.weight_hh", "cell.bias_ih", "cell.bias_hh"):
        _set(proto, name, _blocks(numpy_helper.to_array(_init(proto, name)), 0, 3, [1, 0, 2]))
    return "Scan body: the r and z blocks of cell.weight_ih, weight_hh, bias_ih and bias_hh swapped"


def fault_branch_bias(proto: onnx.ModelProto) -> str:
    """The bias the If's then branch reads (calm.bias) changed."""
    value = numpy_helper.to_array(_init(proto, "calm.bias")).copy()
    value += 0.5
    _set(proto, "calm.bias", value)
    return "If then branch: calm.bias + 0.5"


FAULTS = {"tagger": {"gru_gates": fault_gru_gates, "gru_lbr": fault_gru_lbr, "gru_directions": fault_gru_directions,
                     "gru_bias_halves": fault_gru_bias_halves, "lstm_if": fault_lstm_if,
                     "layernorm_eps": fault_layernorm_eps},
          "cells": {"step_bias": fault_step_bias, "cell_gates": fault_cell_gates},
          "conv_gru": {"gru_gates": fault_gru_gates, "gru_lbr": fault_gru_lbr},
          "block": {"layernorm_eps": fault_layernorm_eps},
          "elman": {"loop_weight": fault_loop_weight, "ih_weight": fault_ih_weight},
          "loop_gru": {"cell_gates": fault_loop_cell_gates, "cell_biases": fault_loop_cell_biases,
                       "proj_bias": fault_proj_bias, "reset_before": fault_reset_before},
          "scan_gru": {"cell_gates": fault_scan_cell_gates, "reset_before": fault_reset_before},
          "branches": {"branch_bias": fault_branch_bias}}


def _ort(path: Path, feeds: dict[str, np.ndarray]) -> np.ndarray:
    return onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="check the stored captures, write nothing")
    parser.add_argument("--only", nargs="+", metavar="MODEL", help="these models alone (default: every one)")
    args = parser.parse_args()
    os.chdir(HERE)  # source lines are stored relative to the working folder: this one
    warnings.filterwarnings("ignore")
    (HERE / "faults").mkdir(exist_ok=True)
    for name, (module, feeds) in models().items():
        if args.only and name not in args.only:
            continue
        module.eval()
        captured = capture(module, list(feeds.values()))
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
        np.savez(HERE / f"{name}_feeds.npz", **feeds)
        expected = captured.outputs("")[0]
        for exporter in EXPORTERS.get(name, ("ts", "dynamo")):
            path = HERE / f"{exporter}_{name}.onnx"
            export(module, feeds, path, exporter == "dynamo", scripted=name in SCRIPTED)
            got = _ort(path, feeds)
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
            for fault, plant in FAULTS[name].items():
                proto = onnx.load(str(path))
                what = plant(proto)
                faulty = HERE / "faults" / f"{exporter}_{name}_{fault}.onnx"
                onnx.save(proto, str(faulty))
                differs = np.abs(_ort(faulty, feeds) - expected).max()
                assert differs > 1e-3, (faulty.name, differs)
                print(f"{faulty.name}: {what} (output off by {differs:.3g})")
        print(f"{name}: {len(captured.values)} values of {len(captured.modules)} modules")


if __name__ == "__main__":
    main()
