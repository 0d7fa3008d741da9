"""The Keras side run live (needs keras: run with the TensorFlow venv where tests/models/bridge/make_keras_models.py
runs; CI has no TensorFlow and reads the stored captures in test_bridge.py instead): a fresh capture is the stored
one, explorer.compare with explorer.keras(model), the command line's --keras FILE.py:FACTORY, a fix proven by
Keras on random inputs of the same sizes."""
from __future__ import annotations

import numpy as np
import pytest

import explorer
from explorer.bridge import fix, load_captured
from explorer.cli import main
from tests.support.bridge_recipes import BRIDGE, load_recipe

pytest.importorskip("keras")
HERE = BRIDGE
RECIPE = HERE / "make_keras_models.py"


@pytest.fixture(scope="module")
def recipe():
    return load_recipe("make_keras_models.py")


def test_a_live_capture_is_the_stored_one(recipe, monkeypatch):
    from explorer.bridge.capture_keras import build_with_sources, capture_keras

    monkeypatch.chdir(HERE)  # source lines are relative to the working folder, as the recipe stores them
    for name, (build, _) in recipe.MODELS.items():
        stored = load_captured(HERE / f"{name}.npz")
        fresh = capture_keras(build_with_sources(build), stored.inputs)
        assert set(fresh.values) == set(stored.values) and fresh.order == stored.order
        for key, value in fresh.values.items():
            np.testing.assert_allclose(value, stored.values[key], rtol=1e-6, atol=1e-7)
        assert {m: (i.called_at, i.defined_at) for m, i in fresh.modules.items()} == \
            {m: (i.called_at, i.defined_at) for m, i in stored.modules.items()}
        assert all(i.source.startswith("make_keras_models.py:") for m, i in fresh.modules.items() if m)


def test_a_model_built_outside_keras_sources_has_no_source_lines_and_a_factory_has_them(recipe):
    from explorer.bridge.capture_keras import capture_keras

    stored = load_captured(HERE / "keras_masked.npz")
    plain = capture_keras(recipe.keras_masked(), stored.inputs)
    assert not any(i.source for i in plain.modules.values())
    side = explorer.keras(recipe.keras_masked)  # a factory: built here, each layer keeps its line
    lines = side.capture(stored.inputs).modules
    assert lines["lstm"].source.endswith(f"make_keras_models.py:{stored.modules['lstm'].source.split(':')[1]}")


def test_compare_and_fix_with_the_live_model(recipe, tmp_path):
    feeds = dict(np.load(HERE / "keras_tagger_feeds.npz"))
    clean = explorer.compare(HERE / "tf2onnx_keras_tagger.onnx", explorer.keras(recipe.keras_tagger()), feeds)
    assert clean.agree and clean.leaf_coverage() == (4, 4)
    report = fix(HERE / "faults" / "tf2onnx_keras_tagger_lstm_if.onnx", explorer.keras(recipe.keras_tagger()),
                 feeds, tmp_path / "fixed.onnx")
    assert report.complete and len(report.proofs) == 3
    masked = dict(np.load(HERE / "keras_masked_feeds.npz"))  # a Loop-form masked LSTM, fixed and proven by Keras
    report = fix(HERE / "faults" / "tf2onnx_keras_masked_lstm_if.onnx", explorer.keras(recipe.keras_masked),
                 masked, tmp_path / "masked.onnx")
    assert report.complete and len(report.proofs) == 3


def test_the_command_line_runs_the_factory():
    feeds = str(HERE / "keras_conv_feeds.npz")
    spec = f"{RECIPE}:keras_conv"
    assert main(["compare", str(HERE / "tf2onnx_keras_conv.onnx"), "--keras", spec, "--inputs", feeds]) == 0
    fault = str(HERE / "faults" / "tf2onnx_keras_conv_loop_constant.onnx")
    assert main(["compare", fault, "--keras", spec, "--inputs", feeds]) == 1


@pytest.mark.parametrize(("fault", "factory"), [("tf2onnx_keras_conv_gru_reset_after", "keras_conv"),
                                              ("tf2onnx_keras_conv_gru_reset_after_cut", "keras_conv"),
                                              ("tf2onnx_keras_tagger_gru_reset_before", "keras_tagger")])
def test_a_misplaced_reset_gate_in_a_loops_body_is_fixed_and_proven_by_keras(recipe, tmp_path, fault, factory):
    feeds = dict(np.load(HERE / f"{factory}_feeds.npz"))
    report = fix(HERE / "faults" / f"{fault}.onnx", explorer.keras(getattr(recipe, factory)), feeds,
                 tmp_path / "fixed.onnx")
    assert report.complete and report.outcomes[0].finding.fix.startswith("move the reset gate")
    assert len(report.proofs) == 3 and all("every aligned module agrees" in p for p in report.proofs)
