"""python -m explorer compare A B: first divergence, table of the worst values, exit code 1 when they differ,
0 when equal, 2 with one line on errors."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx

import explorer
from explorer.cli import main
from tests.support.compare_models import loop_in_scan, loop_in_scan_feeds

ROOT = Path(__file__).resolve().parents[2]


def _files(tmp_path):
    onnx.save(loop_in_scan(False), tmp_path / "a.onnx")
    onnx.save(loop_in_scan(True), tmp_path / "b.onnx")
    np.savez(tmp_path / "feeds.npz", **loop_in_scan_feeds())
    return str(tmp_path / "a.onnx"), str(tmp_path / "b.onnx"), str(tmp_path / "feeds.npz")


def test_two_models_that_differ_exit_1_with_the_planted_location(tmp_path):
    a, b, feeds = _files(tmp_path)
    result = subprocess.run([sys.executable, "-m", "explorer", "compare", a, b, "--inputs", feeds],
                            check=False, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "first divergence: node 'enc/body/inner/body/plant' (LeakyRelu) at iteration (1, 2), value 'leak'" in out
    table = out.split("worst values:")[1].splitlines()
    assert "max abs" in table[1] and any("enc/body/inner/body/plant" in row and "(1, 2)" in row for row in table)


def test_equal_models_exit_0(tmp_path, capsys):
    a, _, feeds = _files(tmp_path)
    assert main(["compare", a, a, "--inputs", feeds]) == 0
    assert "first divergence: none" in capsys.readouterr().out


def test_onnxruntime_inside_bodies(capsys):
    assert main(["compare", "nested_loops", "--ort"]) == 0
    out = capsys.readouterr().out
    assert "B: onnxruntime" in out and "aligned values: 11 (74 executions), not aligned: 0" in out


def test_reference_values_that_differ(tmp_path, capsys):
    a, _, feeds = _files(tmp_path)
    trace = explorer.run(explorer.load(a), loop_in_scan_feeds())
    np.savez(tmp_path / "ref.npz", Y=trace.outputs["Y"] + np.float32(0.5), s_final=trace.outputs["s_final"])
    assert main(["compare", a, "--reference", str(tmp_path / "ref.npz"), "--inputs", feeds]) == 1
    out = capsys.readouterr().out
    assert "first divergence: node 'enc' (Scan), value 'Y'" in out and "output Y: max abs diff 0.5" in out


def test_errors_are_one_line_and_exit_2(tmp_path, capsys):
    a, b, _ = _files(tmp_path)
    assert main(["compare", a, b, "--ort"]) == 2
    assert main(["compare", a, str(tmp_path / "missing.onnx")]) == 2
    assert main(["compare", a]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("error: ") for line in err)


def test_a_side_stopped_by_a_limit_is_no_verdict_and_exit_2(capsys):
    assert main(["compare", "nested_loops", "--ort", "--max-iterations", "1"]) == 2
    out = capsys.readouterr().out
    assert "Limits.max_iterations=1" in out and "onnxruntime: not run" in out
    assert "first divergence: none among the values both sides reached (no verdict: a side did not finish)" in out
