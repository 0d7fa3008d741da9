"""python -m explorer run|samples, through a real subprocess."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

import explorer
from explorer.inputs.samples import list_samples

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=ROOT)


def test_run_prints_a_summary_and_checks_against_onnxruntime(tmp_path):
    result = cli("run", "sample_models/nested_loops.onnx", "--dim", "T=4", "--check", "--save",
                 str(tmp_path / "t.npz"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # per time step: the inner Loop's 3 iterations of 4 nodes + 1 branch node, then Loop, Tanh, Identity; + Scan
    assert f"events: {4 * (3 * (4 + 1) + 3) + 1}" in out and "output Y: float32[4, 3]" in out
    assert "s_final: max abs diff" in out and "ok" in out
    trace = explorer.Trace.load(tmp_path / "t.npz")
    assert len(trace.events) == 73


def test_run_with_inputs_file(tmp_path):
    np.savez(tmp_path / "feeds.npz", x=np.array([[1, -1, 2, 0.5]], np.float32))
    result = cli("run", "sample_models/tiny_mlp.onnx", "--inputs", str(tmp_path / "feeds.npz"))
    assert result.returncode == 0, result.stderr
    assert "output probs: float32[1, 3]" in result.stdout


def test_bad_model_gives_a_clear_error_and_exit_code(tmp_path):
    (tmp_path / "bad.onnx").write_bytes(b"garbage")
    result = cli("run", str(tmp_path / "bad.onnx"))
    assert result.returncode == 2
    assert "error:" in result.stderr and "not an ONNX model" in result.stderr
    assert "Traceback" not in result.stderr


def test_samples_lists_every_sample():
    result = cli("samples")
    assert result.returncode == 0
    for name in list_samples():
        assert name in result.stdout
