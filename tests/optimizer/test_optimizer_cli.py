"""`python -m explorer optimize`: the optimized model, the statistics table, the proof and the JSON report."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import helper as h

from explorer.cli import main
from explorer.optimizer import pattern_names
from explorer.optimizer.verify import compare_models
from tests.support.optimizer_models import info, make, tensor

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def test_optimize_writes_the_model_and_the_report(tmp_path, capsys):
    out, report = tmp_path / "out.onnx", tmp_path / "report.json"
    code = main(["optimize", str(SAMPLES / "opt_linear_cleanup.onnx"), "-o", str(out), "--report", str(report)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "MatMulAdd" in printed and "nodes 19 -> 4" in printed and "equivalence: equivalent" in printed
    optimized = onnx.load(out)
    assert [n.op_type for n in optimized.graph.node].count("Gemm") == 1
    assert compare_models(str(SAMPLES / "opt_linear_cleanup.onnx"), optimized).status == "equivalent"
    data = json.loads(report.read_text())
    assert data["equivalence"]["status"] == "equivalent" and data["nodes_after"] == 4
    assert [s["pattern"] for s in data["steps"]] and {s["pattern"] for s in data["stats"]} == set(pattern_names())


def test_pattern_selection_stop_after_and_feeds(tmp_path, capsys):
    feeds = tmp_path / "feeds.npz"
    np.savez(feeds, x=np.ones((2, 4), np.float32))
    code = main(["optimize", str(SAMPLES / "opt_linear_cleanup.onnx"), "--patterns", "IdentityRemoval,MulOne",
                 "--stop-after", "2", "--inputs", str(feeds), "--report", str(tmp_path / "r.json")])
    printed = capsys.readouterr().out
    assert code == 0 and "(stopped early)" in printed and "2 rewrites" in printed
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["patterns"] == ["IdentityRemoval", "MulOne"] and len(data["steps"]) == 2
    main(["optimize", str(SAMPLES / "opt_linear_cleanup.onnx"), "--exclude", "MatMulAdd", "--no-verify"])
    printed = capsys.readouterr().out
    assert "MatMulAdd" not in printed and "equivalence" not in printed


def test_list_and_bad_arguments(capsys):
    assert main(["optimize", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "GatherConcat" in listed and "Gather(Concat(" in listed and len(listed.splitlines()) == len(pattern_names())
    assert main(["optimize", str(SAMPLES / "opt_loop_body.onnx"), "--patterns", "Nope"]) == 2
    assert "unknown pattern" in capsys.readouterr().err
    assert main(["optimize"]) == 2


def test_exit_code_is_one_and_the_culprit_named_when_the_models_differ(tmp_path, capsys, monkeypatch):
    from explorer.optimizer import patterns
    from explorer.optimizer.patterns.identity import IdentityRemovalPattern
    from tests.support.optimizer_models import WrongBiasPattern, chain_model

    monkeypatch.setattr(patterns, "default_patterns", lambda: [IdentityRemovalPattern(), WrongBiasPattern()])
    path = tmp_path / "chain.onnx"
    onnx.save(chain_model(), path)
    assert main(["optimize", str(path)]) == 1
    printed = capsys.readouterr().out
    assert "equivalence: different" in printed and "first failing rewrite: #1 WrongBias" in printed


def test_module_entry_point(tmp_path):
    model = make([h.make_node("Identity", ["x"], ["a"]), h.make_node("Relu", ["a"], ["y"])],
                 [info("x", shape=[2])], [info("y", shape=[2])])
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    done = subprocess.run([sys.executable, "-m", "explorer", "optimize", str(path), "-o", str(tmp_path / "o.onnx")],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "IdentityRemoval" in done.stdout and "equivalence: equivalent" in done.stdout
    assert [n.op_type for n in onnx.load(tmp_path / "o.onnx").graph.node] == ["Relu"]


def test_initializer_values_survive_the_round_trip(tmp_path):
    model = make([h.make_node("Mul", ["x", "w"], ["y"])], [info("x", shape=[3])], [info("y", shape=[3])],
                 [tensor("w", [1.0, 2.0, 3.0])])
    path, out = tmp_path / "m.onnx", tmp_path / "o.onnx"
    onnx.save(model, path)
    assert main(["optimize", str(path), "-o", str(out)]) == 0
    assert onnx.numpy_helper.to_array(onnx.load(out).graph.initializer[0]).tolist() == [1.0, 2.0, 3.0]
