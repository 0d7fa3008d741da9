"""The framework recipe end to end with real PyTorch modules (skipped without torch): values and parameters
dumped by tools/dump_pytorch_values.py from nn.GRU / nn.LSTM, against ONNX nodes built from the same
parameters the way an exporter writes them, right and wrong. torch is imported by the test itself, not at
collection (it takes seconds)."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import explorer
from tests.support.compare_models import exported_rnn, rnn_feeds

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="the framework recipe needs torch (pip install torch)")


def _run_module(op: str, feeds: dict[str, np.ndarray]):
    """nn.GRU/nn.LSTM(3, 4) called as the ONNX node is (X [seq, batch, input], an initial H; C zero), its values
    and parameters dumped by the recipe's script, and its final H."""
    import torch
    from dump_pytorch_values import dump_values

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.rnn = {"GRU": torch.nn.GRU, "LSTM": torch.nn.LSTM}[op](3, 4)

        def forward(self, x, h0):
            if op == "LSTM":
                return self.rnn(x, (h0, torch.zeros_like(h0)))
            return self.rnn(x, h0)

    module = Wrapped().eval()
    values = dump_values(module, [feeds["X"], feeds["h0"]], {"rnn[0]": "Y_seq"}, {"rnn": "rnn"})
    with torch.no_grad():
        out = module(torch.from_numpy(feeds["X"]), torch.from_numpy(feeds["h0"]))
    h_n = (out[1][0] if op == "LSTM" else out[1]).numpy()
    return values, h_n


@pytest.mark.parametrize("op", ["GRU", "LSTM"])
def test_pytorch_values_and_parameters_against_a_faithful_and_a_broken_export(op):
    feeds = rnn_feeds()
    values, h_n = _run_module(op, feeds)
    y_seq = values.pop("Y_seq")
    params = {k.removeprefix("rnn."): v for k, v in values.items()}
    reference = {**values, "Y_h": h_n}
    faithful = explorer.load(exported_rnn(op, params))
    result = explorer.compare(faithful, reference, feeds)
    assert result.first is None and not result.gates and result.gates_checked
    assert result.value("rnn", "Y_h").ok
    np.testing.assert_allclose(explorer.run(faithful, feeds).outputs["Y"][:, 0], y_seq, rtol=1e-5, atol=1e-6)
    broken = exported_rnn(op, params, linear_before_reset=0) if op == "GRU" else \
        exported_rnn(op, params, swap=("i", "f"))
    wrong = explorer.compare(explorer.load(broken), reference, feeds)
    (gate,) = wrong.gates
    assert gate.step == 0 and gate.gate == ("h" if op == "GRU" else "i")
    assert not wrong.value("rnn", "Y_h").ok
