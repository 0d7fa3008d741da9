"""The recipe of the PyTorch exports in this folder, made by torch.onnx.export with both exporters (TorchScript,
dynamo=False, opset 17; dynamo, dynamo=True): a segmentation head's training losses (F.cross_entropy with class
weights and an ignore_index, F.nll_loss of log(softmax) ignoring PyTorch's default -100, reduced by mean, sum and
none), which they write as SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (dynamo: its NLL decomposed), with
PyTorch's own losses in reference/; and a sampling module (a VAE's reparameterization mu + exp(logvar / 2) *
randn_like(mu), rand_like, randn, bernoulli, multinomial with replacement, a training-mode dropout), written as
RandomNormalLike, RandomUniformLike, RandomNormal, Bernoulli, Multinomial and Dropout, whose inputs are in
reference/ (their values are draws: the tests judge their types, shapes and statistics). Produced with torch
2.13.0+cpu and onnx 1.23.2; run from this folder: python export_models.py (CI has no torch: the files are
committed)."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from recipe_files import save_reference  # noqa: E402


class SegmentationLosses(torch.nn.Module):
    """Per-pixel class scores of a 1x1 convolution and the losses a training step takes of them."""

    def __init__(self) -> None:
        super().__init__()
        self.head = torch.nn.Conv2d(3, 4, 1)
        self.register_buffer("class_weights", torch.tensor([1.0, 2.0, 0.5, 1.5]))

    def forward(self, x: torch.Tensor, labels: torch.Tensor, masked: torch.Tensor) -> tuple[torch.Tensor, ...]:
        scores = self.head(x)
        weighted = F.cross_entropy(scores, labels, weight=self.class_weights, ignore_index=2)
        per_pixel = F.cross_entropy(scores, labels, reduction="none")
        log_probs = torch.log(torch.softmax(scores, 1))
        nll_sum = F.nll_loss(log_probs, masked, reduction="sum")  # -100 (PyTorch's default) ignored
        nll_mean = F.nll_loss(log_probs, masked, weight=self.class_weights)
        return weighted, per_pixel, nll_sum, nll_mean


class Sampling(torch.nn.Module):
    """The random draws of generative and training code."""

    def forward(self, mu: torch.Tensor, logvar: torch.Tensor, p: torch.Tensor,
                probs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        u = torch.rand_like(mu) * 4 - 1
        noise = torch.randn(64, 64)
        coins = torch.bernoulli(p)
        picks = torch.multinomial(probs, 500, replacement=True)
        dropped = F.dropout(mu, 0.25, training=True)
        return z, u, noise, coins, picks, dropped


def loss_inputs() -> dict[str, torch.Tensor]:
    labels = torch.randint(0, 4, (2, 5, 6))
    masked = torch.where(torch.rand(2, 5, 6) < 0.3, torch.tensor(-100), torch.randint(0, 4, (2, 5, 6)))
    return {"x": torch.randn(2, 3, 5, 6), "labels": labels, "masked": masked}


def sampling_inputs() -> dict[str, torch.Tensor]:
    p = torch.tensor([0.0, 0.15, 0.5, 0.8, 1.0])[:, None].repeat(1, 4000)
    probs = torch.tensor([[0.2, 0.3, 0.5, 0.0], [0.25, 0.25, 0.25, 0.25], [0.05, 0.05, 0.1, 0.8]])
    return {"mu": torch.full((128, 128), 1.5), "logvar": torch.full((128, 128), float(np.log(0.25))), "p": p,
            "probs": probs}


def export(module: torch.nn.Module, inputs: dict[str, torch.Tensor], outputs: list[str], name: str,
           draws: bool = False) -> None:
    """Both exports and reference/<name>.npz: the inputs and PyTorch's outputs, or for `draws` only the outputs'
    shapes and types (kinds/<output>, zeros: their values are one sample of PyTorch's generator)."""
    args = tuple(inputs.values())
    torch.onnx.export(module, args, f"ts_{name}.onnx", input_names=list(inputs), output_names=outputs,
                      opset_version=17, dynamo=False)
    torch.onnx.export(module, args, f"dynamo_{name}.onnx", input_names=list(inputs), output_names=outputs,
                      dynamo=True, external_data=False)
    with torch.no_grad():
        values = module(*args)
    found = {k: v.numpy() for k, v in zip(outputs, values)}
    kinds = {f"kinds/{k}": np.zeros_like(v) for k, v in found.items()} if draws else {}
    save_reference(HERE, name, {k: v.numpy() for k, v in inputs.items()}, {} if draws else found, kinds)


def main() -> None:
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    export(SegmentationLosses().eval(), loss_inputs(), ["weighted", "per_pixel", "nll_sum", "nll_mean"],
           "segmentation_losses")
    export(Sampling(), sampling_inputs(), ["z", "u", "noise", "coins", "picks", "dropped"], "sampling",
           draws=True)


if __name__ == "__main__":
    main()
