"""The Drawing model_to_dot returns: what it says it shows (boxes, nodes, bodies, scopes) matches the DOT text as
graphviz reads it, `reveal` opens what hides a node without marking it, and options are checked by name."""
from __future__ import annotations

from pathlib import Path

import pytest

import explorer
from explorer.views.dot import model_to_dot
from explorer.views.dot_escape import svg_id
from explorer.views.draw_plan import Options
from explorer.views.render import dot_available
from explorer.views.styles import NODE_STATES
from tests.support.diagrams import box, nested_model, parse_dot, scoped_model

pytestmark = pytest.mark.skipif(not dot_available(), reason="graphviz's dot is not installed")

LOOP_BODY = "gate/then_branch/scan/body/loop/body"


@pytest.fixture(scope="module")
def nested():
    return explorer.load(nested_model())


def test_drawing_lists_exactly_what_the_dot_text_draws(nested):
    drawing = model_to_dot(nested)
    parsed = parse_dot(drawing.dot)
    assert drawing.boxes == set(parsed.nodes)
    assert drawing.bodies == {p for p in nested.index.graphs if p and "cluster:" + svg_id("graph", p) in parsed.clusters}
    for ref in nested.nodes():
        assert drawing.shows(ref.path) and drawing.box_for(ref.path) == box(ref.path)


def test_collapsed_bodies_stand_for_their_nodes(nested):
    drawing = model_to_dot(nested, expand="none")
    assert drawing.bodies == set()
    assert not drawing.shows(f"{LOOP_BODY}/add_x")
    assert drawing.box_for(f"{LOOP_BODY}/add_x") == box("gate")  # its outermost collapsed owner
    inside = model_to_dot(nested, focus=LOOP_BODY)
    assert inside.root == LOOP_BODY and inside.box_for("relu") is None  # outside the focus


def test_shown_lists_the_nodes_with_a_box_of_their_own(nested):
    expanded = model_to_dot(nested)
    assert set(expanded.shown) == {ref.path for ref in nested.nodes()}
    collapsed = model_to_dot(nested, expand="none")
    main = [ref.path for ref in nested.nodes() if ref.graph.path == ""]
    assert list(collapsed.shown) == main  # the bodies' nodes hide in their owner's box
    assert {box(path) for path in collapsed.shown} <= set(parse_dot(collapsed.dot).nodes)


def test_scopes_hiding_a_node_are_named_by_their_box():
    model = explorer.load(scoped_model())
    collapsed = model_to_dot(model, scopes="none")
    hidden = "/encoder/layer.1/attn/Softmax"
    assert collapsed.box_for(hidden).startswith("scope:") and not collapsed.shows(hidden)
    assert collapsed.scopes == set()
    opened = model_to_dot(model, scopes="all")
    assert opened.shows(hidden)
    assert {"/encoder", "/encoder/layer.1", "/encoder/layer.1/attn"} <= opened.scopes


def test_reveal_opens_what_hides_a_node_without_marking_it():
    model = explorer.load(scoped_model())
    hidden = "/encoder/layer.1/attn/Softmax"
    assert not model_to_dot(model, max_boxes=3).shows(hidden)
    revealed = model_to_dot(model, max_boxes=3, reveal=[hidden])
    assert revealed.shows(hidden)
    attrs = parse_dot(revealed.dot).nodes[box(hidden)]
    assert attrs.get("color") != NODE_STATES["match"]["color"]
    marked = parse_dot(model_to_dot(model, max_boxes=3, highlight=[hidden]).dot).nodes[box(hidden)]
    assert marked["color"] == NODE_STATES["match"]["color"]


def test_options_object_and_keywords_agree(nested):
    assert model_to_dot(nested, Options(expand="none")).dot == model_to_dot(nested, expand="none").dot
    assert model_to_dot(nested, Options(expand="none"), expand="all").dot == model_to_dot(nested, expand="all").dot
    with pytest.raises(TypeError, match="unknown option 'expnad'"):
        model_to_dot(nested, expnad="all")


GTCRN = Path(__file__).resolve().parents[3] / "shared/models/Xiaobin-Rong__gtcrn/stream/onnx_models/gtcrn.onnx"


@pytest.mark.skipif(not GTCRN.is_file(), reason="../shared/models (gtcrn) is absent")
def test_a_big_rewrite_overlay_keeps_the_whole_model_drawing_small():
    """Marking the hundreds of nodes an optimization removed from gtcrn once opened every scope (1,604 boxes, a
    three-minute layout): marks past a few land on the collapsed boxes, and big drawings drop edge labels."""
    from explorer.optimizer import optimize
    from explorer.views.draw_plan import AUTO_EDGE_LABELS
    from explorer.views.rewrites import result_overlays

    result = optimize(explorer.load(GTCRN))
    removed, _ = result_overlays(result)
    assert len(removed.removed) > 100
    drawing = model_to_dot(explorer.load(result.original), overlay=removed, edge_labels=None)
    assert AUTO_EDGE_LABELS < len(drawing.boxes) <= 300
    parsed = parse_dot(drawing.dot)
    assert not any("label" in attrs for _, _, attrs in parsed.visible_edges())
    states = {parsed.nodes[b].get("color") for b in set(drawing.nodes.values())}
    assert NODE_STATES["removed"]["color"] in states  # collapsed boxes holding removed nodes are marked
