"""The recipe of the PyTorch exports in this folder: recurrent cells as torch.onnx writes them. The TorchScript
exporter (torch.onnx.export(torch.jit.script(m), ..., dynamo=False)) on Python loops over a cell; the dynamo
exporter (dynamo=True) on torch.scan (torch._higher_order_ops.scan) over a cell, on a Python loop over
nn.GRUCell, and on nn.RNN, nn.GRU and nn.LSTM. Parameters are seeded (torch.manual_seed), inputs too; every
initial state is zero.

For each model it writes the .onnx file, its entry in feeds.json and reference/<model>.npz:
  inputs/<name>, outputs/<name>   the inputs and PyTorch's own outputs on them (ONNX input and output names)
  <parameter>                     every parameter under its state_dict name (cell.weight_ih, gru.bias_hh_l0,
                                  lstm.weight_hh_l1_reverse)
  gates/<layer>/<letter>          every gate of every recurrent layer at every step, float64, from PyTorch's
                                  documented equations and those parameters: [seq, num_directions, batch, hidden],
                                  time first in input-position order, forward first, named by the ONNX letters
                                  (GRU z r h H, LSTM i o f c C H, RNN a H); <layer> is the cell module's name, or
                                  <module>_l<k> for layer k of nn.RNN/GRU/LSTM
  gates/<layer>/mask              [seq, num_directions, batch], all True (no masking here)
The recomputed outputs must equal PyTorch's to 1e-5 and onnxruntime's run of the export PyTorch's to 1e-5, or the
recipe stops. Run from this folder with the PyTorch venv: python export_models.py (CI has no torch)."""
from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from torch._higher_order_ops.scan import scan

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from cell_steps import Step, layer_gates, run_direction, sigmoid  # noqa: E402
from recipe_files import check_close, describe, save_reference, update_feeds  # noqa: E402

HIDDEN = 4


# ---- the modules ----------------------------------------------------------------------------------------------
class WrittenGRUCell(torch.nn.GRUCell):
    """nn.GRUCell with its parameters, its forward written out with PyTorch's documented equations: the TorchScript
    exporter cannot export nn.GRUCell itself (aten::gru_cell has no ONNX symbolic, and the scripted forward's
    `hx.dim() not in (1, 2)` check already fails the export)."""

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        i_r, i_z, i_n = F.linear(x, self.weight_ih, self.bias_ih).chunk(3, 1)
        h_r, h_z, h_n = F.linear(h, self.weight_hh, self.bias_hh).chunk(3, 1)
        r = torch.sigmoid(i_r + h_r)
        z = torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        return (1 - z) * n + z * h


class WrittenRNNCell(torch.nn.RNNCell):
    """nn.RNNCell (tanh) with its parameters, its forward written out (aten::rnn_tanh_cell has no ONNX symbolic in
    the TorchScript exporter)."""

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return torch.tanh(F.linear(x, self.weight_ih, self.bias_ih) + F.linear(h, self.weight_hh, self.bias_hh))


class CellLoop(torch.nn.Module):
    """A Python loop over the time steps of x [batch, time, features] with a GRU or RNN cell."""

    def __init__(self, cell: torch.nn.Module) -> None:
        super().__init__()
        self.cell = cell

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.new_zeros(x.size(0), self.cell.hidden_size)
        outs = []
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
            outs.append(h)
        return torch.stack(outs, 1)


class LSTMCellLoop(torch.nn.Module):
    """A Python loop over the time steps of x [batch, time, features] with nn.LSTMCell; returns H over time and the
    last C."""

    def __init__(self, features: int, hidden: int) -> None:
        super().__init__()
        self.cell = torch.nn.LSTMCell(features, hidden)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = x.new_zeros(x.size(0), self.cell.hidden_size)
        c = x.new_zeros(x.size(0), self.cell.hidden_size)
        hs = []
        for t in range(x.size(1)):
            h, c = self.cell(x[:, t], (h, c))
            hs.append(h)
        return torch.stack(hs, 1), c


class ScanCell(torch.nn.Module):
    """torch.scan over x [time, batch, features] with nn.GRUCell, nn.LSTMCell or nn.RNNCell; returns the hidden
    state over time and the last one."""

    def __init__(self, cell: torch.nn.Module) -> None:
        super().__init__()
        self.cell = cell

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        zeros = x.new_zeros(x.shape[1], self.cell.hidden_size)
        if isinstance(self.cell, torch.nn.LSTMCell):
            def lstm_step(carry: list[torch.Tensor], xt: torch.Tensor) -> tuple:
                h, c = self.cell(xt, (carry[0], carry[1]))
                return [h, c], h.clone()
            (last, _), ys = scan(lstm_step, [zeros, zeros.clone()], x)
            return ys, last

        def step(h: torch.Tensor, xt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            h = self.cell(xt, h)
            return h, h.clone()
        last, ys = scan(step, zeros, x)
        return ys, last


class Recurrent(torch.nn.Module):
    """nn.RNN, nn.GRU or nn.LSTM under the attribute name `name`, returning its output sequence only."""

    def __init__(self, name: str, layer: torch.nn.RNNBase) -> None:
        super().__init__()
        self.name = name
        self.add_module(name, layer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(self, self.name)(x)[0]


# ---- PyTorch's equations in float64 ----------------------------------------------------------------------------
def gru_step(w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray) -> Step:
    """PyTorch GRU, rows [r, z, n]: n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h' = (1 - z) n + z h."""
    def step(x: np.ndarray, state: tuple[np.ndarray, ...]) -> tuple[dict, tuple]:
        (h,) = state
        gi, gh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        i_r, i_z, i_n = np.split(gi, 3, axis=1)
        h_r, h_z, h_n = np.split(gh, 3, axis=1)
        r, z = sigmoid(i_r + h_r), sigmoid(i_z + h_z)
        n = np.tanh(i_n + r * h_n)
        new = (1 - z) * n + z * h
        return {"z": z, "r": r, "h": n, "H": new}, (new,)
    return step


def lstm_step(w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray) -> Step:
    """PyTorch LSTM, rows [i, f, g, o]: c' = f c + i g, h' = o tanh(c')."""
    def step(x: np.ndarray, state: tuple[np.ndarray, ...]) -> tuple[dict, tuple]:
        h, c = state
        a = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, g, o = np.split(a, 4, axis=1)
        i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
        c_new = f * c + i * g
        h_new = o * np.tanh(c_new)
        return {"i": i, "o": o, "f": f, "c": g, "C": c_new, "H": h_new}, (h_new, c_new)
    return step


def rnn_step(w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray) -> Step:
    """PyTorch RNN (tanh): a = W_ih x + b_ih + W_hh h + b_hh, h' = tanh(a)."""
    def step(x: np.ndarray, state: tuple[np.ndarray, ...]) -> tuple[dict, tuple]:
        a = x @ w_ih.T + b_ih + state[0] @ w_hh.T + b_hh
        return {"a": a, "H": np.tanh(a)}, (np.tanh(a),)
    return step


STEPS = {"GRU": (gru_step, 1), "LSTM": (lstm_step, 2), "RNN": (rnn_step, 1)}


def direction(kind: str, params: dict[str, np.ndarray], stem: str, suffix: str, x: np.ndarray,
              reverse: bool) -> tuple[tuple[dict, np.ndarray], np.ndarray]:
    """One direction over batch-first x with the parameters <stem>.weight_ih<suffix> and so on: its (gates,
    mask) and its output sequence [batch, seq, hidden]."""
    make, states = STEPS[kind]
    w_ih, w_hh, b_ih, b_hh = (params[f"{stem}.{n}{suffix}"] for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    step = make(w_ih, w_hh, b_ih, b_hh)
    mask = np.ones(x.shape[:2], bool)
    gates, out = run_direction(step, x, mask, (np.zeros((x.shape[0], w_hh.shape[1])),) * states, reverse)
    return (gates, mask), out


def cell_reference(kind: str, stem: str) -> Callable:
    """A loop or scan over one cell module `stem`: {stem: gates} and the series the module may return: y (the
    hidden state over time, batch-first), h_last, c_last."""
    def recompute(params: dict[str, np.ndarray], x: np.ndarray) -> tuple[dict, dict[str, np.ndarray]]:
        (gates, mask), out = direction(kind, params, stem, "", x, False)
        series = {"y": out, "h_last": gates["H"][-1]} | ({"c_last": gates["C"][-1]} if kind == "LSTM" else {})
        return {stem: layer_gates([(gates, mask)])}, series
    return recompute


def layers_reference(kind: str, stem: str, layers: int, bidirectional: bool) -> Callable:
    """nn.RNN/GRU/LSTM `stem`: {<stem>_l<k>: gates} and the last layer's output sequence (batch-first x)."""
    def recompute(params: dict[str, np.ndarray], x: np.ndarray) -> tuple[dict, dict[str, np.ndarray]]:
        found = {}
        for k in range(layers):
            runs = [direction(kind, params, stem, f"_l{k}" + ("_reverse" if d else ""), x, bool(d))
                    for d in range(2 if bidirectional else 1)]
            found[f"{stem}_l{k}"] = layer_gates([gates for gates, _ in runs])
            x = np.concatenate([out for _, out in runs], axis=-1)
        return found, {"y": x}
    return recompute


# ---- the exports ----------------------------------------------------------------------------------------------
class Export:
    """One model: its module, exporter, input (batch-first, or time-first with `time_first`), what the reference
    recomputes, its outputs (named as the recomputed series they are), and whether the time axis stays dynamic
    (dynamo unrolls Python loops and nn.RNN over a static one)."""

    def __init__(self, name: str, module: torch.nn.Module, x: np.ndarray, exporter: str, opset: int,
                 recompute: Callable, outputs: list[str], time_first: bool = False, dynamic_time: bool = True,
                 note: str = "") -> None:
        self.name, self.module, self.x, self.exporter, self.opset = name, module.eval(), x, exporter, opset
        self.recompute, self.outputs, self.time_first, self.note = recompute, outputs, time_first, note
        self.dynamic_time = dynamic_time


def exports() -> list[Export]:
    rng = np.random.default_rng(0)

    def normal(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    made = []
    torch.manual_seed(1)
    made.append(Export("ts_grucell_loop", CellLoop(WrittenGRUCell(3, HIDDEN)), normal(2, 5, 3), "torchscript", 13,
                       cell_reference("GRU", "cell"), ["y"],
                       note="Python loop over a GRUCell (nn.GRUCell's parameters, forward written out)"))
    torch.manual_seed(2)
    made.append(Export("ts_lstmcell_loop", LSTMCellLoop(2, 5), normal(3, 6, 2), "torchscript", 13,
                       cell_reference("LSTM", "cell"), ["y", "c_last"], note="Python loop over nn.LSTMCell"))
    torch.manual_seed(3)
    made.append(Export("ts_rnncell_loop", CellLoop(WrittenRNNCell(5, 3)), normal(2, 4, 5), "torchscript", 17,
                       cell_reference("RNN", "cell"), ["y"],
                       note="Python loop over an RNNCell (nn.RNNCell's parameters, forward written out)"))
    for seed, kind, cls, features in ((4, "GRU", torch.nn.GRUCell, 3), (5, "LSTM", torch.nn.LSTMCell, 2),
                                      (6, "RNN", torch.nn.RNNCell, 4)):
        torch.manual_seed(seed)
        made.append(Export(f"dynamo_scan_{kind.lower()}", ScanCell(cls(features, HIDDEN)), normal(5, 2, features),
                           "dynamo", 18, cell_reference(kind, "cell"), ["y", "h_last"], time_first=True,
                           note=f"torch.scan over nn.{cls.__name__}"))
    torch.manual_seed(7)
    made.append(Export("dynamo_grucell_loop", CellLoop(torch.nn.GRUCell(3, HIDDEN)), normal(2, 5, 3), "dynamo", 18,
                       cell_reference("GRU", "cell"), ["y"], dynamic_time=False, note="Python loop over nn.GRUCell"))
    torch.manual_seed(8)
    made.append(Export("dynamo_rnn", Recurrent("rnn", torch.nn.RNN(3, HIDDEN, batch_first=True)), normal(2, 5, 3),
                       "dynamo", 18, layers_reference("RNN", "rnn", 1, False), ["y"], dynamic_time=False,
                       note="nn.RNN, batch_first"))
    torch.manual_seed(9)
    made.append(Export("dynamo_rnn_2layer_bidirectional",
                       Recurrent("rnn", torch.nn.RNN(2, 3, num_layers=2, bidirectional=True)), normal(4, 3, 2),
                       "dynamo", 18, layers_reference("RNN", "rnn", 2, True), ["y"], time_first=True,
                       dynamic_time=False, note="nn.RNN, 2 layers, bidirectional, time first"))
    torch.manual_seed(10)
    made.append(Export("dynamo_gru", Recurrent("gru", torch.nn.GRU(3, HIDDEN)), normal(5, 2, 3), "dynamo", 18,
                       layers_reference("GRU", "gru", 1, False), ["y"], time_first=True, note="nn.GRU, time first"))
    torch.manual_seed(11)
    made.append(Export("dynamo_lstm", Recurrent("lstm", torch.nn.LSTM(3, HIDDEN, batch_first=True)),
                       normal(2, 5, 3), "dynamo", 18, layers_reference("LSTM", "lstm", 1, False), ["y"],
                       note="nn.LSTM, batch_first"))
    torch.manual_seed(12)
    made.append(Export("dynamo_lstm_2layer_bidirectional",
                       Recurrent("lstm", torch.nn.LSTM(3, HIDDEN, num_layers=2, bidirectional=True, batch_first=True)),
                       normal(2, 6, 3), "dynamo", 18, layers_reference("LSTM", "lstm", 2, True), ["y"],
                       note="nn.LSTM, 2 layers, bidirectional, batch_first"))
    return made


def export(item: Export, path: Path) -> None:
    x = torch.from_numpy(item.x)
    common = {"input_names": ["x"], "output_names": item.outputs, "opset_version": item.opset}
    if item.exporter == "torchscript":
        torch.onnx.export(torch.jit.script(item.module), (x,), str(path), dynamo=False,
                          dynamic_axes={"x": {0: "batch", 1: "time"}}, **common)
    else:
        batch_axis, time_axis = (1, 0) if item.time_first else (0, 1)
        dims = {batch_axis: torch.export.Dim("batch")}
        if item.dynamic_time:
            dims[time_axis] = torch.export.Dim("time")
        torch.onnx.export(item.module, (x,), str(path), dynamo=True, external_data=False, verbose=False,
                          dynamic_shapes=(dims,), **common)


def main() -> None:
    warnings.filterwarnings("ignore")
    feeds: dict = {}
    table = []
    for item in exports():
        path = HERE / f"{item.name}.onnx"
        export(item, path)
        proto = onnx.load(str(path))
        onnx.checker.check_model(proto)
        with torch.no_grad():
            result = item.module(torch.from_numpy(item.x))
        framework = [t.numpy() for t in (result if isinstance(result, tuple) else (result,))]
        params = {k: v.detach().numpy().astype(np.float64) for k, v in item.module.state_dict().items()}
        batch_first = np.swapaxes(item.x, 0, 1) if item.time_first else item.x
        gates, recomputed = item.recompute(params, batch_first.astype(np.float64))
        if item.time_first:
            recomputed["y"] = np.swapaxes(recomputed["y"], 0, 1)
        assert len(framework) == len(item.outputs)
        for name, theirs in zip(item.outputs, framework):
            ours = recomputed[name]
            check_close(f"{item.name}: PyTorch's equations against PyTorch ({name})", ours, theirs)
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        names = [o.name for o in proto.graph.output]
        assert names == item.outputs, names
        for name, got, theirs in zip(names, session.run(None, {"x": item.x}), framework):
            check_close(f"{item.name}: onnxruntime against PyTorch ({name})", got, theirs)
        arrays = {k: v.astype(np.float32) for k, v in params.items()}
        arrays |= {f"gates/{layer}/{letter}": v for layer, g in gates.items() for letter, v in g.items()}
        save_reference(HERE, item.name, {"x": item.x}, dict(zip(names, framework)), arrays)
        feeds[f"{item.name}.onnx"] = {"x": item.x}
        exporter = "TorchScript" if item.exporter == "torchscript" else "dynamo"
        table.append(f"| {item.name}.onnx | {exporter} | {item.note} | {describe(proto)} | {item.opset} |")
    update_feeds(HERE, feeds)
    print(f"torch {torch.__version__}, onnx {onnx.__version__}, onnxruntime {ort.__version__}, numpy {np.__version__}")
    print("\n".join(table))


if __name__ == "__main__":
    main()
