"""Diagrams of the real models in ../shared/models: every one renders to valid SVG with every node accounted for
(drawn, or inside a drawn collapsed scope, block or body); the big ones (gtcrn, silero_vad) stay small by
default and open up by drill-in."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import explorer
from explorer.errors import ModelError
from explorer.views.dot import model_to_dot
from explorer.views.dot_escape import parse_svg_id
from explorer.views.grouping import BLOCK_FANOUT, Scope, ScopeTree
from explorer.views.navigation import breadcrumb
from explorer.views.render import dot_available, render_svg

MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"
SVG = "{http://www.w3.org/2000/svg}"
pytestmark = [
    pytest.mark.skipif(not dot_available(), reason="graphviz's dot is not installed"),
    pytest.mark.skipif(not (MODELS / "manifest.json").exists(), reason="no ../shared/models"),
]
GTCRN = "Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx"
SILERO = "snakers4__silero-vad/src/silero_vad/data/silero_vad.onnx"
SILERO_SCOPED = "snakers4__silero-vad/src/silero_vad/data/silero_vad_16k_op15.onnx"


def manifest_files() -> list[str]:
    if not (MODELS / "manifest.json").exists():
        return []
    return [m["file"] for m in json.loads((MODELS / "manifest.json").read_text())["models"]]


def drawn_ids(svg: str) -> dict[str, set[str]]:
    """kind -> first keys of every node and cluster group in the SVG (which parses as XML)."""
    found: dict[str, set[str]] = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if g.get("class") in ("node", "cluster"):
            kind, keys = parse_svg_id(g.get("id"))
            found.setdefault(kind, set()).add(keys[0])
    return found


def assert_accounted_for(model: explorer.Model, ids: dict[str, set[str]], top: str = "") -> None:
    """Each node below `top` is drawn, or sits in a drawn collapsed scope/block or in a collapsed body."""
    nodes, scopes = ids.get("node", set()), ids.get("scope", set())
    trees: dict[str, ScopeTree] = {}
    for ref in model.nodes():
        if top and not ref.path.startswith(top + "/"):
            continue
        path = ref.path
        while path not in nodes:
            owner = model.node(path)
            graph = owner.graph
            tree = trees.setdefault(graph.path, ScopeTree(graph))
            if any(s.key in scopes for s in tree.chain(path)):
                break
            assert graph.path not in (top, ""), f"{ref.path} is not drawn"
            path = graph.owner


# Shared models made to be refused (tests of other tools): the part of explorer's refusal that says why. They are
# drawn as loaded in lenient mode, as the app and the CLI (--lenient) offer.
REFUSED = {
    "ROCm__AMDMIGraphX/test/onnx/scan_invalid_input_axes_vals_test.onnx":
        "scan_input_axes[0]=3 lies outside the 3 axes of 'scan_in'",
    "ROCm__AMDMIGraphX/test/onnx/scan_invalid_output_axes_vals_test.onnx":
        "scan_output_axes[0]=-4 lies outside the 3 axes of 'scan_out'",
    "onnxruntime__onnxruntime-qnn/onnxruntime/test/testdata/ort_github_issue_11536.onnx":
        "'tmp_5' is tensor(float) but 'dim1' is tensor(int64); Concat-13 wants one type for both",
}


def test_the_refused_models_are_shared_models():
    assert set(REFUSED) <= set(manifest_files())


@pytest.mark.parametrize("relative", manifest_files())
def test_every_shared_model_renders(relative):
    if relative in REFUSED:
        with pytest.raises(ModelError, match="breaks the spec's typing rules") as refusal:
            explorer.load(MODELS / relative)
        assert REFUSED[relative] in str(refusal.value)
    model = explorer.load(MODELS / relative, lenient=relative in REFUSED)
    svg = render_svg(model_to_dot(model).dot, timeout=120)
    assert_accounted_for(model, drawn_ids(svg))


def test_gtcrn_without_scope_names_draws_blocks():
    model = explorer.load(MODELS / GTCRN)
    assert len(model.index.nodes) > 1500
    ids = drawn_ids(render_svg(model_to_dot(model).dot, timeout=120))
    top = ScopeTree(model.index.graphs[""]).members  # about a dozen blocks, each of about a dozen blocks
    assert len(top) <= BLOCK_FANOUT and all(isinstance(block, Scope) and len(block.members) <= BLOCK_FANOUT
                                            for block in top)
    second = {member.key for block in top for member in block.members if isinstance(member, Scope)}
    assert set(ids["scope"]) == {block.key for block in top} | second and len(ids.get("node", ())) < 20
    overview = drawn_ids(render_svg(model_to_dot(model, max_boxes=60).dot, timeout=120))
    assert set(overview["scope"]) == {block.key for block in top}  # the top level alone
    assert_accounted_for(model, ids)
    block = min(ids["scope"], key=len)
    inside = drawn_ids(render_svg(model_to_dot(model, focus=block).dot, timeout=120))
    assert inside["node"] and "scope" not in inside


def test_silero_nested_ifs_collapse_and_drill_in():
    model = explorer.load(MODELS / SILERO)
    top = model_to_dot(model).dot
    ids = drawn_ids(render_svg(top))
    assert "If_0" in ids["node"] and "graph" not in ids  # the 342-node branches stay collapsed
    assert "▸ else_branch · 342 nodes · depth 4" in top  # 113 nodes, and its nested Ifs
    body = "If_0/else_branch"
    text = model_to_dot(model, focus=body).dot
    inner = drawn_ids(render_svg(text, timeout=120))
    assert_accounted_for(model, inner, top=body)
    assert all(p.startswith(body + "/") for p in inner["node"])
    assert "outer" in inner  # the branch reads main-graph inputs: stubs with dashed edges
    assert [t for t, _ in breadcrumb(model, body)] == ["", body]


def test_silero_scopes_group_an_export():
    model = explorer.load(MODELS / SILERO_SCOPED)
    ids = drawn_ids(render_svg(model_to_dot(model, scopes="all").dot))
    assert {"/model/stft", "/model/encoder", "/model/decoder"} <= ids["scope"]
    collapsed = drawn_ids(render_svg(model_to_dot(model, scopes="none").dot))
    assert "/model" in collapsed["scope"]
    assert_accounted_for(model, collapsed)
