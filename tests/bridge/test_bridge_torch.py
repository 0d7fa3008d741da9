"""The framework side run live (needs torch: run with the PyTorch venv, e.g. /work/venvs/torch, where the recipe
of tests/models/bridge runs; CI has no torch and reads the stored captures in test_bridge.py instead): a capture
of the recipe's own modules, the same as the stored one; explorer.compare with explorer.pytorch(module); the
command line's --pytorch FILE.py:FACTORY; fix proven on other random inputs by the framework itself."""
from __future__ import annotations

import numpy as np
import pytest

import explorer
from explorer.bridge import fix, load_captured
from explorer.cli import main
from tests.support.bridge_recipes import BRIDGE, load_recipe

pytest.importorskip("torch")
HERE = BRIDGE
RECIPE = HERE / "make_bridge_models.py"


@pytest.fixture(scope="module")
def recipe():
    return load_recipe("make_bridge_models.py")


def test_a_live_capture_is_the_stored_one(recipe, monkeypatch):
    from explorer.bridge.capture import capture

    monkeypatch.chdir(HERE)
    for name, (module, feeds) in recipe.models().items():
        fresh, stored = capture(module, list(feeds.values())), load_captured(HERE / f"{name}.npz")
        assert set(fresh.values) == set(stored.values) and fresh.order == stored.order
        for key, value in fresh.values.items():
            np.testing.assert_allclose(value, stored.values[key], rtol=1e-6, atol=1e-7)
        assert {m: i.called_at for m, i in fresh.modules.items()} == {m: i.called_at for m, i in stored.modules.items()}


def test_compare_with_the_live_module(recipe):
    feeds = dict(np.load(HERE / "tagger_feeds.npz"))
    clean = explorer.compare(explorer.load(HERE / "dynamo_tagger.onnx"), explorer.pytorch(recipe.tagger()), feeds)
    assert clean.agree and clean.leaf_coverage() == (5, 5)
    broken = explorer.compare(explorer.load(HERE / "faults" / "ts_tagger_lstm_if.onnx"),
                              explorer.pytorch(recipe.tagger()), feeds)
    assert broken.first.point.module == "lstm" and broken.first.status == "own error"
    assert broken.diagnosis[0].fix.startswith("reorder the gate blocks")


def test_the_command_line_runs_the_factory(tmp_path):
    feeds = str(HERE / "cells_feeds.npz")
    spec = f"{RECIPE}:cells"
    assert main(["compare", str(HERE / "ts_cells.onnx"), "--pytorch", spec, "--inputs", feeds]) == 0
    fault = str(HERE / "faults" / "dynamo_cells_step_bias.onnx")
    assert main(["compare", fault, "--pytorch", spec, "--inputs", feeds]) == 1
    assert main(["fix", fault, "--pytorch", spec, "--inputs", feeds, "-o", str(tmp_path / "f.onnx")]) == 0


def test_a_fix_is_proven_on_other_random_inputs(recipe, tmp_path):
    feeds = dict(np.load(HERE / "conv_gru_feeds.npz"))
    report = fix(HERE / "faults" / "ts_conv_gru_gru_gates.onnx", explorer.pytorch(recipe.conv_gru()), feeds,
                 tmp_path / "fixed.onnx")
    assert report.complete
    assert len(report.proofs) == 3 and all("every aligned module agrees" in p for p in report.proofs)
    assert any("seed" in p for p in report.proofs)


@pytest.mark.parametrize(("fault", "factory"), [("ts_loop_gru_reset_before", "loop_gru"),
                                              ("dynamo_scan_gru_reset_before", "scan_gru")])
def test_a_misplaced_reset_gate_in_a_loops_body_is_fixed_and_proven_by_pytorch_on_random_inputs(recipe, tmp_path,
                                                                                              fault, factory):
    feeds = dict(np.load(HERE / f"{factory}_feeds.npz"))
    module = getattr(recipe, factory)()
    report = fix(HERE / "faults" / f"{fault}.onnx", explorer.pytorch(module), feeds, tmp_path / "fixed.onnx")
    assert report.complete and report.outcomes[0].finding.fix.startswith("move the reset gate after")
    assert len(report.proofs) == 3 and all("every aligned module agrees" in p for p in report.proofs)
    import onnxruntime
    import torch

    x = np.random.default_rng(3).standard_normal(feeds["x"].shape).astype(np.float32)
    session = onnxruntime.InferenceSession(str(tmp_path / "fixed.onnx"), providers=["CPUExecutionProvider"])
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=1e-5, atol=1e-6)


def test_a_projected_lstm_is_captured_whole():
    import torch

    from explorer.bridge.capture import capture

    torch.manual_seed(0)
    module = torch.nn.LSTM(3, 4, proj_size=2, batch_first=True)
    captured = capture(module, [np.zeros((1, 5, 3), np.float32)])
    assert captured.modules[""].recurrent["proj_size"] == 2
    assert captured.outputs("")[0].shape == (1, 5, 2) and not captured.layers("")
