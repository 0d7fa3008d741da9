"""Recipe of the dynamo exports in this folder: Python loops over nn.LSTMCell, nn.RNNCell (relu) and nn.GRUCell
starting from a given state h0, which dynamo unrolls into one group of nodes per step. Run from this folder with
a Python that has torch (2.13.0+cpu made these files): writes the .onnx files, reference/<model>.npz (x, h0
and PyTorch's own output y) and feeds.json."""
from __future__ import annotations

import json
import warnings

import numpy as np
import torch


class CellLoop(torch.nn.Module):
    """y[:, t] = H after step t of `cell` over x [batch, time, in], from h0 (and C = 0 for an LSTM)."""

    def __init__(self, cell: torch.nn.Module, lstm: bool = False) -> None:
        super().__init__()
        self.cell, self.lstm = cell, lstm

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        h, c = h0, torch.zeros_like(h0)
        outs = []
        for t in range(x.shape[1]):
            if self.lstm:
                h, c = self.cell(x[:, t], (h, c))
            else:
                h = self.cell(x[:, t], h)
            outs.append(h)
        return torch.stack(outs, 1)


def main() -> None:
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    x, h0 = torch.randn(2, 5, 3), torch.randn(2, 4)
    feeds = {}
    for name, module in (("dynamo_lstmcell_h0", CellLoop(torch.nn.LSTMCell(3, 4), lstm=True)),
                         ("dynamo_rnncell_relu_h0", CellLoop(torch.nn.RNNCell(3, 4, nonlinearity="relu"))),
                         ("dynamo_grucell_h0", CellLoop(torch.nn.GRUCell(3, 4)))):
        torch.onnx.export(module, (x, h0), f"{name}.onnx", dynamo=True, input_names=["x", "h0"])
        np.savez(f"reference/{name}.npz", x=x.numpy(), h0=h0.numpy(), y=module(x, h0).detach().numpy())
        feeds[f"{name}.onnx"] = {"x": {"value": x.tolist(), "dtype": "float32"},
                                 "h0": {"value": h0.tolist(), "dtype": "float32"}}
    with open("feeds.json", "w") as f:
        json.dump(feeds, f, indent=1)


if __name__ == "__main__":
    main()
