"""The recipe of the PyTorch exports in this folder: recurrent cells inside models that do other work, as
torch.onnx writes them.

- raft_convgru: the update loop of RAFT's small model (torchvision.models.optical_flow.raft's ConvGRU and its
  refinement loop, shrunk): per iteration, motion features from the current flow, a ConvGRU over them and a
  context, a flow head adding a correction. Traced (TorchScript, dynamo=False) and with dynamo: both unroll the
  iterations, the gates are convolutions.
- rnnt_predictor: torchaudio's RNN-T predictor (torchaudio.models.rnnt's _Predictor with its _CustomLSTM, layer
  norm on), shrunk: an embedding, a layer norm, two layer-normalized LSTM layers written out per time step, a linear
  head and a layer norm. Both exporters unroll the time steps.
- greedy_gru_decoder: a greedy decoder whose GRU cell is written out (nn.GRUCell's parameters, PyTorch's
  equations) inside the decoding loop: embed the last token, update the state, take the argmax, stop when every
  sequence made the end token. Scripted (TorchScript, dynamo=False): a Loop whose body also does the argmax, the
  token feedback and the end test; the cell's input is the embedding of the fed-back token.

For each model it writes the .onnx file, its entry in feeds.json and reference/<model>.npz: inputs/<name>,
outputs/<name> (PyTorch's outputs), and gates/<cell>/<letter>: every gate of every cell at every step from the
module's own equations in float64, [steps, 1, batch, ...] (GRU z r h H: z as the module computes it, which in
RAFT's spelling weighs the candidate; LSTM i o f c C H). The recomputed outputs must equal PyTorch's, and
onnxruntime's run of each export PyTorch's, to 1e-5, or the recipe stops. Run from this folder with the PyTorch
venv (torch 2.13.0+cpu, onnxscript): python export_models.py (CI has no torch)."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from recipe_files import check_close, describe, save_reference, update_feeds  # noqa: E402
from torch_cells.export_models import WrittenGRUCell  # noqa: E402  (nn.GRUCell written out, as TorchScript needs)

EOS = 3


class ConvGRU(torch.nn.Module):
    """RAFT's ConvGRU: h' = (1 - z) h + z q, q = tanh(conv_q([r h, x]))."""

    def __init__(self, hidden: int, inputs: int) -> None:
        super().__init__()
        self.convz = torch.nn.Conv2d(hidden + inputs, hidden, 3, padding=1)
        self.convr = torch.nn.Conv2d(hidden + inputs, hidden, 3, padding=1)
        self.convq = torch.nn.Conv2d(hidden + inputs, hidden, 3, padding=1)

    def forward(self, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        hx = torch.cat([h, x], dim=1)
        z = torch.sigmoid(self.convz(hx))
        r = torch.sigmoid(self.convr(hx))
        q = torch.tanh(self.convq(torch.cat([r * h, x], dim=1)))
        return (1 - z) * h + z * q


class RaftUpdateLoop(torch.nn.Module):
    """RAFT's refinement: motion features from the flow, the ConvGRU, a flow head; `ITERS` iterations."""

    ITERS = 3

    def __init__(self) -> None:
        super().__init__()
        self.motion = torch.nn.Conv2d(2, 4, 3, padding=1)
        self.gru = ConvGRU(6, 8)
        self.head1, self.head2 = torch.nn.Conv2d(6, 8, 3, padding=1), torch.nn.Conv2d(8, 2, 3, padding=1)

    def forward(self, net: torch.Tensor, context: torch.Tensor, flow: torch.Tensor) -> tuple[torch.Tensor, ...]:
        for _ in range(self.ITERS):
            x = torch.cat([F.relu(self.motion(flow)), context], dim=1)
            net = self.gru(net, x)
            flow = flow + self.head2(F.relu(self.head1(net)))
        return flow, net


class CustomLSTM(torch.nn.Module):
    """torchaudio's _CustomLSTM with layer_norm=True: the gates' pre-activations and the cell state normalized."""

    def __init__(self, inputs: int, hidden: int) -> None:
        super().__init__()
        self.x2g = torch.nn.Linear(inputs, 4 * hidden, bias=True)
        self.p2g = torch.nn.Linear(hidden, 4 * hidden, bias=False)
        self.c_norm, self.g_norm = torch.nn.LayerNorm(hidden), torch.nn.LayerNorm(4 * hidden)
        self.hidden = hidden

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: [time, batch, inputs]
        h = torch.zeros(x.size(1), self.hidden)
        c = torch.zeros(x.size(1), self.hidden)
        outs = []
        for gates in self.x2g(x).unbind(0):
            gates = self.g_norm(gates + self.p2g(h))
            i, f, g, o = gates.chunk(4, 1)
            c = self.c_norm(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g))
            h = torch.sigmoid(o) * torch.tanh(c)
            outs.append(h)
        return torch.stack(outs, 0)


class RnntPredictor(torch.nn.Module):
    """torchaudio's RNN-T predictor: embedding, layer norm, stacked layer-normalized LSTMs, linear, layer norm."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(12, 6)
        self.input_norm = torch.nn.LayerNorm(6)
        self.lstm_layers = torch.nn.ModuleList([CustomLSTM(6, 5), CustomLSTM(5, 5)])
        self.linear = torch.nn.Linear(5, 7)
        self.output_norm = torch.nn.LayerNorm(7)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:  # tokens: [batch, time]
        x = self.input_norm(self.embedding(tokens.transpose(0, 1)))
        for layer in self.lstm_layers:
            x = layer(x)
        return self.output_norm(self.linear(x)).transpose(0, 1)


class GreedyGruDecoder(torch.nn.Module):
    """Embeds the last token, updates a GRU state, appends the argmax; until every sequence made EOS or
    `max_len` tokens were made."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = torch.nn.Embedding(10, 4)
        self.cell = WrittenGRUCell(4, 6)
        self.out = torch.nn.Linear(6, 10)
        self.eos = EOS

    def forward(self, h: torch.Tensor, max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
        b = h.size(0)
        token = torch.zeros(b, dtype=torch.long)
        tokens = torch.zeros(b, 0, dtype=torch.long)
        done = torch.zeros(b, dtype=torch.bool)
        i = 0
        while i < max_len and not bool(done.all()):
            h = self.cell(self.embedding(token), h)
            token = self.out(h).argmax(-1)
            tokens = torch.cat([tokens, token.view(b, 1)], 1)
            done = done | (token == self.eos)
            i += 1
        return tokens, h


# ---- the gates, from each module's equations in float64 ----------------------------------------------------------
def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().double().numpy()


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _conv(x: np.ndarray, conv: torch.nn.Conv2d) -> np.ndarray:
    with torch.no_grad():
        return F.conv2d(torch.from_numpy(x), conv.weight.double(), conv.bias.double(), padding=1).numpy()


def _layer_norm(x: np.ndarray, norm: torch.nn.LayerNorm) -> np.ndarray:
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + norm.eps) * _np(norm.weight) + _np(norm.bias)


def raft_gates(m: RaftUpdateLoop, net: np.ndarray, context: np.ndarray, flow: np.ndarray) -> dict[str, np.ndarray]:
    series: dict[str, list[np.ndarray]] = {k: [] for k in "zrhH"}
    for _ in range(m.ITERS):
        x = np.concatenate([np.maximum(_conv(flow, m.motion), 0), context], 1)
        hx = np.concatenate([net, x], 1)
        z, r = _sigmoid(_conv(hx, m.gru.convz)), _sigmoid(_conv(hx, m.gru.convr))
        q = np.tanh(_conv(np.concatenate([r * net, x], 1), m.gru.convq))
        net = (1 - z) * net + z * q
        flow = flow + _conv(np.maximum(_conv(net, m.head1), 0), m.head2)
        for k, v in zip("zrhH", (z, r, q, net)):
            series[k].append(v)
    return {f"gates/gru/{k}": np.stack(v)[:, None] for k, v in series.items()}


def lstm_gates(layer: CustomLSTM, x: np.ndarray, name: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    hidden = layer.hidden
    h, c = np.zeros((x.shape[1], hidden)), np.zeros((x.shape[1], hidden))
    series: dict[str, list[np.ndarray]] = {k: [] for k in "iofcCH"}
    projected = x @ _np(layer.x2g.weight).T + _np(layer.x2g.bias)
    for step in projected:
        gates = _layer_norm(step + h @ _np(layer.p2g.weight).T, layer.g_norm)
        i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden] for k in range(4))
        i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
        c = _layer_norm(f * c + i * g, layer.c_norm)
        h = o * np.tanh(c)
        for k, v in zip("iofcCH", (i, o, f, g, c, h)):
            series[k].append(v)
    return {f"gates/{name}/{k}": np.stack(v)[:, None] for k, v in series.items()}, np.stack(series["H"])


def rnnt_gates(m: RnntPredictor, tokens: np.ndarray) -> dict[str, np.ndarray]:
    x = _layer_norm(_np(m.embedding.weight)[tokens.T], m.input_norm)
    found: dict[str, np.ndarray] = {}
    for k, layer in enumerate(m.lstm_layers):
        gates, x = lstm_gates(layer, x, f"lstm_layers.{k}")
        found |= gates
    return found


def decoder_gates(m: GreedyGruDecoder, h: np.ndarray, steps: int) -> dict[str, np.ndarray]:
    cell, token = m.cell, np.zeros(h.shape[0], np.int64)
    series: dict[str, list[np.ndarray]] = {k: [] for k in "zrhH"}
    w_ih, w_hh, b_ih, b_hh = (_np(t) for t in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh))
    for _ in range(steps):
        xi = _np(m.embedding.weight)[token] @ w_ih.T + b_ih
        hi = h @ w_hh.T + b_hh
        size = h.shape[1]
        r = _sigmoid(xi[:, :size] + hi[:, :size])
        z = _sigmoid(xi[:, size:2 * size] + hi[:, size:2 * size])
        n = np.tanh(xi[:, 2 * size:] + r * hi[:, 2 * size:])
        h = (1 - z) * n + z * h
        token = (h @ _np(m.out.weight).T + _np(m.out.bias)).argmax(-1)
        for k, v in zip("zrhH", (z, r, n, h)):
            series[k].append(v)
    return {f"gates/cell/{k}": np.stack(v)[:, None] for k, v in series.items()}


# ---- export -----------------------------------------------------------------------------------------------------
def export(module: torch.nn.Module, args: tuple, file: str, names: list[str], outputs: list[str], how: str,
           **options: object) -> onnx.ModelProto:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if how == "dynamo":
            torch.onnx.export(module, args, file, dynamo=True, input_names=names, output_names=outputs,
                              external_data=False, **options)
        else:
            exported = torch.jit.script(module) if how == "script" else module
            torch.onnx.export(exported, args, file, dynamo=False, input_names=names, output_names=outputs,
                              opset_version=17, **options)
    return onnx.load(HERE / file)


def judge(file: str, feeds: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    session = ort.InferenceSession(str(HERE / file), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    got = session.run(None, {k: v for k, v in feeds.items() if k in names})
    for (name, want), value in zip(expected.items(), got):
        check_close(f"{file}: onnxruntime's {name}", value, want)


def main() -> None:
    torch.manual_seed(0)
    r = np.random.default_rng(0)
    entries: dict[str, dict[str, np.ndarray]] = {}

    raft = RaftUpdateLoop().eval()
    feeds = {"net": r.normal(0, 1, (2, 6, 5, 5)).astype(np.float32),
             "context": r.normal(0, 1, (2, 4, 5, 5)).astype(np.float32),
             "flow": r.normal(0, 1, (2, 2, 5, 5)).astype(np.float32)}
    with torch.no_grad():
        flow, net = raft(*(torch.from_numpy(v) for v in feeds.values()))
    gates = raft_gates(raft, *(v.astype(np.float64) for v in feeds.values()))
    check_close("raft: the equations' H", gates["gates/gru/H"][-1, 0], _np(net))
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    for how, file in (("trace", "ts_raft_convgru.onnx"), ("dynamo", "dynamo_raft_convgru.onnx")):
        proto = export(raft, args, file, list(feeds), ["flow_out", "net_out"], how)
        judge(file, feeds, {"flow_out": _np(flow), "net_out": _np(net)})
        save_reference(HERE, file[:-5], feeds, {"flow_out": _np(flow), "net_out": _np(net)}, gates)
        entries[file] = feeds
        print(file, describe(proto))

    predictor = RnntPredictor().eval()
    tokens = r.integers(0, 12, (2, 4)).astype(np.int64)
    with torch.no_grad():
        out = predictor(torch.from_numpy(tokens))
    gates = rnnt_gates(predictor, tokens)
    last = gates["gates/lstm_layers.1/H"][:, 0]  # [time, batch, hidden]
    recomputed = _layer_norm(last @ _np(predictor.linear.weight).T + _np(predictor.linear.bias), predictor.output_norm)
    check_close("rnnt: the equations' output", recomputed.transpose(1, 0, 2), _np(out))
    for how, file in (("trace", "ts_rnnt_predictor.onnx"), ("dynamo", "dynamo_rnnt_predictor.onnx")):
        proto = export(predictor, (torch.from_numpy(tokens),), file, ["tokens"], ["out"], how)
        judge(file, {"tokens": tokens}, {"out": _np(out)})
        save_reference(HERE, file[:-5], {"tokens": tokens}, {"out": _np(out)}, gates)
        entries[file] = {"tokens": tokens}
        print(file, describe(proto))

    decoder = GreedyGruDecoder().eval()
    h0, max_len = r.normal(0, 1, (3, 6)).astype(np.float32), np.array(6, np.int64)
    with torch.no_grad():
        made, h = decoder(torch.from_numpy(h0), 6)
    gates = decoder_gates(decoder, h0.astype(np.float64), made.shape[1])
    check_close("decoder: the equations' H", gates["gates/cell/H"][-1, 0], _np(h))
    file = "ts_greedy_gru_decoder.onnx"
    proto = export(decoder, (torch.from_numpy(h0), 6), file, ["h", "max_len"], ["tokens", "h_out"], "script",
                   dynamic_axes={"h": {0: "batch"}})
    feeds = {"h": h0, "max_len": max_len}
    judge(file, feeds, {"tokens": made.numpy(), "h_out": _np(h)})
    save_reference(HERE, file[:-5], feeds, {"tokens": made.numpy(), "h_out": _np(h)}, gates)
    entries[file] = feeds
    print(file, describe(proto), "tokens", made.numpy().tolist())
    update_feeds(HERE, entries)


if __name__ == "__main__":
    main()
