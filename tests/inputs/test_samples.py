"""Every bundled sample: rebuilt deterministically, runs, matches onnxruntime, has a line in docs/samples.md."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.compare.outputs import compare_with_onnxruntime
from explorer.inputs.samples import list_samples, sample_path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = list_samples()


def test_samples_index_matches_the_files():
    on_disk = {p.stem for p in (ROOT / "sample_models").glob("*.onnx")}
    assert set(SAMPLES) == on_disk
    assert json.loads((ROOT / "sample_models" / "samples.json").read_text()) == SAMPLES


def test_build_script_rebuilds_the_committed_files_exactly(tmp_path):
    script = ROOT / "sample_models" / "build.py"
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, capture_output=True)
    committed = {p.name: p.read_bytes() for p in (ROOT / "sample_models").glob("*.onnx")}
    rebuilt = {p.name: p.read_bytes() for p in tmp_path.glob("*.onnx")}
    assert rebuilt == committed
    assert json.loads((tmp_path / "samples.json").read_text()) == SAMPLES


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_has_a_line_in_the_guide(name):
    listed = (ROOT / "docs" / "samples.md").read_text()
    assert f"- `{name}`: " in listed, f"docs/samples.md has no line for sample {name}"


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("seed", [0, 1])
def test_sample_matches_onnxruntime(name, seed):
    model = explorer.load(sample_path(name))
    feeds = model.example_inputs(seed=seed, dims={"T": 5, "N": 3, "batch": 2})
    with np.errstate(all="ignore"):
        trace = explorer.run(model, feeds)
    report = compare_with_onnxruntime(model, feeds, trace.outputs)
    assert report.ok, report.lines()
    assert trace.events
