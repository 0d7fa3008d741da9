"""The recipe of the PyTorch exports in this folder, made by torch.onnx.export: loops as users write them
(TorchScript exporter, dynamo=False, of torch.jit.script'ed modules; and the dynamo exporter, dynamo=True, of
torch._higher_order_ops.while_loop and torch.cond), whose bodies reshape with the inputs' own sizes (x.size(0),
view(b, -1), new_zeros(b, h)); and a GPT-2 attention block with past keys and values (both exporters), whose
position ids are arange(past, past + seq); and an attention block computing in bfloat16, which onnxruntime refuses
(it has no bfloat16 MatMul on the CPU), with PyTorch's own outputs in reference/. Produced with torch 2.13.0+cpu and
onnx 1.23.2; run from this folder: python export_models.py (CI has no torch: the .onnx files are committed)."""
from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import torch
from torch._higher_order_ops.while_loop import while_loop

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from recipe_files import save_reference  # noqa: E402


class GreedyRnnDecoder(torch.nn.Module):
    """Feeds its own output back for `steps` steps: y.view(x.size(0), -1) in, h = tanh(W y + U h)."""

    def __init__(self) -> None:
        super().__init__()
        self.ih, self.hh, self.out = torch.nn.Linear(8, 16), torch.nn.Linear(16, 16), torch.nn.Linear(16, 8)

    def forward(self, x: torch.Tensor, steps: int) -> torch.Tensor:
        h = x.new_zeros(x.size(0), 16)
        outs = []
        y = x
        for _ in range(steps):
            h = torch.tanh(self.ih(y.view(x.size(0), -1)) + self.hh(h))
            y = self.out(h).view(-1, 8)
            outs.append(y.unsqueeze(1))
        return torch.cat(outs, 1)


class TimeStepRnn(torch.nn.Module):
    """An Elman RNN as a loop over the time steps of x [batch, time, 3, 4], each step flattened to [batch, 12]."""

    def __init__(self) -> None:
        super().__init__()
        self.ih, self.hh = torch.nn.Linear(12, 16), torch.nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t = x.size(0), x.size(1)
        h = x.new_zeros(b, 16)
        outs = []
        for i in range(t):
            xt = x[:, i].reshape(b, -1)
            h = torch.tanh(self.ih(xt) + self.hh(h.view(b, 16)))
            outs.append(h.view(b, 1, -1))
        return torch.cat(outs, 1).flatten(1)


class GreedyTokenDecoder(torch.nn.Module):
    """Embeds the last token, runs a cell, appends the argmax, until every sequence emitted token 9 or
    `max_len` tokens were made."""

    def __init__(self) -> None:
        super().__init__()
        self.emb, self.cell = torch.nn.Embedding(10, 8), torch.nn.Linear(24, 16)
        self.out = torch.nn.Linear(16, 10)

    def forward(self, h: torch.Tensor, max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
        b = h.size(0)
        tok = torch.zeros(b, dtype=torch.long)
        toks = torch.zeros(b, 0, dtype=torch.long)
        done = torch.zeros(b, dtype=torch.bool)
        i = 0
        while i < max_len and not bool(done.all()):
            e = self.emb(tok.view(-1, 1)).view(b, -1)
            h = torch.tanh(self.cell(torch.cat([e, h.view(h.size(0), -1)], 1)))
            tok = self.out(h).argmax(-1)
            toks = torch.cat([toks, tok.view(b, 1)], 1)
            done = done | (tok == 9)
            i += 1
        return toks, h


class WhileLoopCell(torch.nn.Module):
    """torch._higher_order_ops.while_loop: n steps of h = tanh(W h.reshape(h.shape[0], -1) + c)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        def cond(i: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
            return i < n

        def body(i: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            b = h.shape[0]
            return i + 1, torch.tanh(self.lin(h.reshape(b, -1)).view(b, 8))

        return while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))[1]


class CondReshape(torch.nn.Module):
    """torch.cond on the data: one branch a Linear on x.reshape(x.shape[0], -1) viewed to [b, 2, 4], the other
    x.reshape(x.size(0), 2, 4) * 2."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        def positive(x: torch.Tensor) -> torch.Tensor:
            return self.lin(x.reshape(x.shape[0], -1)).view(x.shape[0], 2, 4)

        def other(x: torch.Tensor) -> torch.Tensor:
            return x.reshape(x.size(0), 2, 4) * 2

        return torch.cond(x.sum() > 0, positive, other, (x,))


class Conv1D(torch.nn.Module):
    """GPT-2's linear layer (transformers' Conv1D): addmm on the input viewed as rows, viewed back."""

    def __init__(self, nf: int, nx: int) -> None:
        super().__init__()
        self.nf = nf
        self.weight = torch.nn.Parameter(torch.randn(nx, nf) * 0.1)
        self.bias = torch.nn.Parameter(torch.randn(nf) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GptAttentionWithPast(torch.nn.Module):
    """Embeddings and one GPT-2 attention layer with past keys and values, written as transformers' GPT-2 is:
    position ids arange(past_length, seq + past_length), split_heads by view(x.size()[:-1] + (heads, -)),
    the causal mask sliced at [ns - nd:ns, :ns], merge_heads by view(a.size()[:-2] + (a.size(-2) * a.size(-1),))."""

    def __init__(self, d: int = 16, heads: int = 2, context: int = 64, vocab: int = 20) -> None:
        super().__init__()
        self.heads, self.d = heads, d
        self.wte, self.wpe = torch.nn.Embedding(vocab, d), torch.nn.Embedding(context, d)
        self.ln = torch.nn.LayerNorm(d)
        self.c_attn, self.c_proj = Conv1D(3 * d, d), Conv1D(d, d)
        mask = torch.tril(torch.ones(context, context, dtype=torch.bool)).view(1, 1, context, context)
        self.register_buffer("bias", mask)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.size()[:-1] + (self.heads, x.size(-1) // self.heads)).permute(0, 2, 1, 3)

    def forward(self, input_ids: torch.Tensor, past_key: torch.Tensor,
                past_value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        past_length = past_key.size(-2)
        position_ids = torch.arange(past_length, input_shape[-1] + past_length, dtype=torch.long)
        position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        h = self.wte(input_ids) + self.wpe(position_ids)
        q, k, v = self.c_attn(self.ln(h)).split(self.d, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        k = torch.cat((past_key, k), dim=-2)
        v = torch.cat((past_value, v), dim=-2)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(v.size(-1))
        nd, ns = w.size(-2), w.size(-1)
        w = torch.where(self.bias[:, :, ns - nd:ns, :ns], w, torch.tensor(-1e4))
        a = torch.matmul(torch.softmax(w, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size()[:-2] + (a.size(-2) * a.size(-1),))
        return h + self.c_proj(a), k, v


class Lstm(torch.nn.Module):
    """nn.LSTM(features, hidden, num_layers=2, batch_first=True), its output sequence."""

    def __init__(self, bidirectional: bool = False, features: int = 3, hidden: int = 4) -> None:
        super().__init__()
        self.lstm = torch.nn.LSTM(features, hidden, num_layers=2, batch_first=True, bidirectional=bidirectional)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lstm(x)[0]


def lstm_exports() -> None:
    """Multi-layer LSTMs as torch.onnx.export writes them (TorchScript exporter, traced): with its constant
    folding (the default), each layer's W, R and B are initializers already in ONNX's gate order; without it
    (do_constant_folding=False) each is computed from PyTorch's parameters by a weight-preparation chain (Slice
    per gate, Concat in ONNX's order, Unsqueeze), and the zero initial states are Slices of a ConstantOfShape."""
    torch.manual_seed(1)
    x = torch.randn(2, 5, 3)
    axes = {"x": {0: "batch", 1: "time"}}
    for name, module, fold in (("ts_lstm_2layer", Lstm(), True), ("ts_lstm_2layer_unfolded", Lstm(), False),
                               ("ts_bilstm_2layer_unfolded", Lstm(bidirectional=True), False)):
        torch.onnx.export(module.eval(), (x,), f"{name}.onnx", input_names=["x"], dynamic_axes=axes,
                          opset_version=17, dynamo=False, do_constant_folding=fold)
    # an input small beside the hidden state: the first layer's steps are one product each in explorer
    # (explorer/executor/rnn/step_rows.py) once the batch is 4 or more
    wide = torch.randn(2, 5, 4)
    torch.onnx.export(Lstm(bidirectional=True, features=4, hidden=16).eval(), (wide,), "ts_bilstm_wide.onnx",
                      input_names=["x"], dynamic_axes=axes, opset_version=17, dynamo=False)
    torch.onnx.export(Lstm(features=4, hidden=16).eval(), (wide,), "dynamo_lstm_wide.onnx", dynamo=True,
                      external_data=False,
                      dynamic_shapes={"x": {0: torch.export.Dim("batch"), 1: torch.export.Dim("time")}})


class BfloatAttention(torch.nn.Module):
    """A pre-norm self-attention block with a residual and GELU, its parameters in bfloat16 (module.to(bfloat16),
    as a model trained in bfloat16 is exported): the float32 input cast to bfloat16 first, the output cast back to
    float32; heads split and merged by reshapes on x.shape."""

    def __init__(self, d: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.d, self.heads = d, heads
        self.norm, self.qkv, self.out = torch.nn.LayerNorm(d), torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.to(torch.bfloat16)
        b, t, d = h.shape
        q, k, v = (part.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for part in self.qkv(self.norm(h)).split(d, dim=-1))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // self.heads), -1) @ v
        y = h + self.out(a.transpose(1, 2).reshape(b, t, d))
        return torch.nn.functional.gelu(y).to(torch.float32)


def bfloat16_export() -> None:
    """ts_attention_bfloat16.onnx (TorchScript exporter, traced) and PyTorch's outputs on a seeded input, kept in
    reference/ (onnxruntime cannot judge the export: it has no bfloat16 MatMul kernel on the CPU)."""
    torch.manual_seed(0)
    module = BfloatAttention().eval().to(torch.bfloat16)
    x = torch.randn(2, 5, 16)
    torch.onnx.export(module, (x,), "ts_attention_bfloat16.onnx", input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}}, opset_version=17, dynamo=False)
    with torch.no_grad():
        y = module(x)
    save_reference(HERE, "ts_attention_bfloat16", {"x": x.numpy()}, {"y": y.numpy().astype(np.float32)}, {})


def main() -> None:
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    script = {"opset_version": 17, "dynamo": False}
    torch.onnx.export(torch.jit.script(GreedyRnnDecoder()), (torch.randn(2, 8), 4), "ts_rnn_decoder.onnx",
                      input_names=["x", "steps"], dynamic_axes={"x": {0: "batch"}}, **script)
    torch.onnx.export(torch.jit.script(TimeStepRnn()), (torch.randn(2, 5, 3, 4),), "ts_time_loop.onnx",
                      input_names=["x"], dynamic_axes={"x": {0: "batch", 1: "time"}}, **script)
    torch.onnx.export(torch.jit.script(GreedyTokenDecoder()), (torch.randn(2, 16), 6), "ts_greedy_tokens.onnx",
                      input_names=["h", "max_len"], dynamic_axes={"h": {0: "batch"}}, **script)
    torch.onnx.export(WhileLoopCell().eval(), (torch.randn(2, 8), torch.tensor(3)), "dynamo_while_loop.onnx",
                      dynamo=True, dynamic_shapes={"x": {0: torch.export.Dim("batch")}, "n": None},
                      external_data=False)
    gpt = GptAttentionWithPast().eval()
    args = (torch.randint(0, 20, (2, 3)), torch.randn(2, 2, 4, 8), torch.randn(2, 2, 4, 8))
    axes = {"input_ids": {0: "batch", 1: "seq"}, "past_key": {0: "batch", 2: "past"},
            "past_value": {0: "batch", 2: "past"}}
    torch.onnx.export(gpt, args, "ts_gpt_attention_past.onnx", input_names=list(axes),
                      output_names=["out", "present_key", "present_value"], dynamic_axes=axes, **script)
    batch, seq, past = torch.export.Dim("batch"), torch.export.Dim("seq", max=32), torch.export.Dim("past", max=32)
    torch.onnx.export(gpt, args, "dynamo_gpt_attention_past.onnx", dynamo=True, external_data=False,
                      dynamic_shapes={"input_ids": {0: batch, 1: seq}, "past_key": {0: batch, 2: past},
                                      "past_value": {0: batch, 2: past}})
    torch.onnx.export(CondReshape().eval(), (torch.randn(3, 8),), "dynamo_cond.onnx", dynamo=True,
                      dynamic_shapes={"x": {0: torch.export.Dim("batch")}}, external_data=False)
    lstm_exports()
    bfloat16_export()


if __name__ == "__main__":
    main()
