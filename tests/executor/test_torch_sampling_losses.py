"""Real PyTorch exports of training losses and random draws (tests/models/torch_sampling_losses, recipe in
export_models.py there), by both exporters: the losses are PyTorch's own values and onnxruntime's; the draws have
PyTorch's shapes and types (and onnxruntime's), and statistics of PyTorch's distributions: torch.bernoulli gives 1
with probability p (as the ONNX spec says; onnxruntime's Bernoulli gives 1 - p), torch.multinomial draws each class
with its probability, a training dropout zeroes a share p of its input and scales the rest by 1 / (1 - p)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import explorer
from tests.differential.cases_draws import (
    bernoulli_statistics,
    multinomial_statistics,
    normal_statistics,
    uniform_statistics,
)
from tests.differential.sampled import Statistic
from tests.support import control_flow_models as cf

MODELS = Path(__file__).parents[1] / "models" / "torch_sampling_losses"
EXPORTERS = ("ts", "dynamo")


def _reference(name: str) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(the inputs, the other arrays by their names) of reference/<name>.npz."""
    with np.load(MODELS / "reference" / f"{name}.npz") as data:
        inputs = {k.split("/", 1)[1]: data[k] for k in data.files if k.startswith("inputs/")}
        return inputs, {k: data[k] for k in data.files if not k.startswith("inputs/")}


def _both(exporter: str, name: str, feeds: dict[str, np.ndarray]) -> tuple[dict, dict, onnx.ModelProto]:
    proto = onnx.load(MODELS / f"{exporter}_{name}.onnx")
    return explorer.run(proto, feeds).outputs, cf.ort_run(proto, feeds), proto


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_training_losses_are_pytorchs_and_onnxruntimes(exporter):
    feeds, arrays = _reference("segmentation_losses")
    mine, theirs, proto = _both(exporter, "segmentation_losses", feeds)
    assert {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"} & {n.op_type for n in proto.graph.node}
    for name in ("weighted", "per_pixel", "nll_sum", "nll_mean"):
        want = arrays[f"outputs/{name}"]
        assert mine[name].dtype == want.dtype and mine[name].shape == want.shape, name
        np.testing.assert_allclose(mine[name], want, rtol=1e-5, atol=1e-6, err_msg=f"{name} against PyTorch")
        np.testing.assert_allclose(mine[name], theirs[name], rtol=1e-5, atol=1e-6, err_msg=f"{name} against ort")


def _dropout_statistics(kept: float, ratio: float, count: int) -> tuple[Statistic, ...]:
    """A training dropout of a constant input `kept`: zeros or kept / (1 - ratio), zeros a share `ratio`."""
    scaled = kept / (1 - ratio)
    error = np.sqrt(ratio * (1 - ratio) / count)
    return (Statistic("values other than 0 and the scaled input",
                      lambda y: float(np.sum(~np.isclose(y, 0) & ~np.isclose(y, scaled))), 0, 0),
            Statistic("share of zeros", lambda y: float(np.mean(y == 0)), ratio - 6 * error, ratio + 6 * error))


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_draws_have_pytorchs_types_shapes_and_distributions(exporter):
    feeds, arrays = _reference("sampling")
    mine, theirs, proto = _both(exporter, "sampling", feeds)
    count = feeds["mu"].size
    with np.errstate(divide="ignore"):
        log_probs = np.log(feeds["probs"])  # a class of probability 0: log-probability -inf
    mean, std = float(feeds["mu"].flat[0]), float(np.exp(0.5 * feeds["logvar"].flat[0]))
    judged = {
        "z": normal_statistics(mean, std, np.float32, count),
        "u": uniform_statistics(-1.0, 3.0, np.float32, count),
        "noise": normal_statistics(0.0, 1.0, np.float32, 64 * 64),
        "coins": bernoulli_statistics(feeds["p"]),
        "picks": multinomial_statistics(log_probs, arrays["kinds/picks"].shape[1]),
        "dropped": _dropout_statistics(mean, 0.25, count),
    }
    for name, statistics in judged.items():
        kind = arrays[f"kinds/{name}"]
        assert (mine[name].dtype, mine[name].shape) == (kind.dtype, kind.shape) == (theirs[name].dtype,
                                                                                     theirs[name].shape), name
        values = mine[name].astype(np.float64)
        for statistic in statistics:
            found = statistic.of(values)
            assert statistic.low <= found <= statistic.high, f"{name}: {statistic.name} {found}"
