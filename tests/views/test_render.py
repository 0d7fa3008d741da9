"""Rendering through graphviz's dot (SVG, PNG, PDF), the signal when dot is missing, and `explorer render`."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import onnx
import pytest

import explorer
from explorer.cli import main
from explorer.views.dot import model_to_dot
from explorer.views.dot_escape import svg_id
from explorer.views.render import (
    GraphvizError,
    GraphvizMissing,
    dot_available,
    render,
    render_svg,
    write_diagram,
)
from tests.support.diagrams import failing_loop_model, nested_model

needs_dot = pytest.mark.skipif(not dot_available(), reason="graphviz's dot is not installed")
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def nested_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "nested.onnx"
    onnx.save(nested_model(), path)
    return path


@needs_dot
def test_svg_png_pdf():
    dot_text = model_to_dot(explorer.load(nested_model())).dot
    root = ET.fromstring(render_svg(dot_text))
    ids = {g.get("id") for g in root.iter(f"{SVG}g")}
    assert svg_id("node", "gate/then_branch/scan/body/loop/body/add_x") in ids
    assert svg_id("graph", "gate/then_branch/scan/body") in ids  # body clusters are clickable too
    assert render(dot_text, "png").startswith(b"\x89PNG\r\n\x1a\n")
    assert render(dot_text, "pdf").startswith(b"%PDF")
    with pytest.raises(ValueError, match="cannot render to 'gif'"):
        render(dot_text, "gif")


@needs_dot
def test_dot_failures_are_reported():
    with pytest.raises(GraphvizError, match="dot failed"):
        render("digraph { a -> }")


def test_missing_dot_is_a_clear_signal(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not dot_available()
    with pytest.raises(GraphvizMissing, match="apt-get install graphviz"):
        render("digraph { a }")
    assert write_diagram("digraph { a }", tmp_path / "x.dot") == "dot"  # DOT text needs no graphviz
    assert main(["render", str(_sample(tmp_path)), "-o", str(tmp_path / "x.svg")]) == 2


def _sample(tmp_path):
    path = tmp_path / "nested.onnx"
    onnx.save(nested_model(), path)
    return path


def test_cli_writes_dot_with_expand_and_focus(nested_path, tmp_path, capsys):
    out = tmp_path / "d.dot"
    assert main(["render", str(nested_path), "-o", str(out), "--expand", "none"]) == 0
    assert "cluster:graph:" not in out.read_text() and "▸ then_branch" in out.read_text()
    assert main(["render", str(nested_path), "-o", str(out), "--expand", "gate/else_branch"]) == 0
    assert "cluster:graph:gate/else_branch" in out.read_text()
    assert "cluster:graph:gate/then_branch" not in out.read_text()
    assert main(["render", str(nested_path), "-o", str(out), "--focus", "gate/then_branch/scan/body"]) == 0
    assert svg_id("node", "relu") not in out.read_text()
    assert main(["render", str(nested_path), "-o", str(out), "--search", "op:Tanh", "--no-edge-labels"]) == 0
    assert "1 matching 'op:Tanh'" in capsys.readouterr().out
    assert main(["render", str(nested_path), "-o", str(out), "--focus", "nowhere"]) == 2
    assert "neither a graph path nor a scope key" in capsys.readouterr().err
    assert main(["render", str(nested_path), "-o", str(tmp_path / "d.txt")]) == 2


@needs_dot
def test_cli_renders_svg_and_a_saved_trace_position(tmp_path):
    path = tmp_path / "failing.onnx"
    onnx.save(failing_loop_model(), path)
    model = explorer.load(path)
    with pytest.raises(explorer.ExecutionError) as caught:
        explorer.run(model, {"x": np.ones(3, np.float32)})
    caught.value.trace.save(tmp_path / "trace.npz")
    out = tmp_path / "d.svg"
    assert main(["render", str(path), "-o", str(out), "--trace", str(tmp_path / "trace.npz")]) == 0
    root = ET.fromstring(out.read_text())
    reshape = next(g for g in root.iter(f"{SVG}g") if g.get("id") == svg_id("node", "loop/body/reshape"))
    assert any(p.get("fill") == "#ffc9c9" for p in reshape.iter(f"{SVG}path"))  # the error fill
