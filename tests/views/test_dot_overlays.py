"""Overlays: a trace position (executed, current, running, error nodes; the current node's input and output
edges) from real runs of the executor, and an optimizer rewrite (removed and added nodes)."""
from __future__ import annotations

import numpy as np
import pytest

import explorer
from explorer.views.dot import model_to_dot
from explorer.views.dot_escape import svg_id
from explorer.views.overlays import RewriteOverlay, TraceOverlay
from explorer.views.render import dot_available
from explorer.views.styles import EDGE_STATES, NODE_STATES
from tests.support.diagrams import (
    box,
    failing_loop_model,
    nested_feeds,
    nested_model,
    parse_dot,
    scoped_model,
    state_of,
)

pytestmark = pytest.mark.skipif(not dot_available(), reason="graphviz's dot is not installed")

LOOP_BODY = "gate/then_branch/scan/body/loop/body"


@pytest.fixture(scope="module")
def nested():
    model = explorer.load(nested_model())
    return model, explorer.run(model, nested_feeds())


def test_from_trace_reads_the_events(nested):
    model, trace = nested
    first = TraceOverlay.from_trace(trace, 0)
    assert first.current == f"{LOOP_BODY}/add_x" and first.iteration == (0, 0)
    assert first.executed == {f"{LOOP_BODY}/add_x"}
    assert first.inputs == {"acc_in", "x_t"} and first.outputs == {"acc_sum"}
    last = TraceOverlay.from_trace(trace)
    assert last.current == "relu" and last.executed == {r.path for r in model.nodes() if "else_branch" not in r.path}
    assert TraceOverlay.from_trace(trace, -1) == last
    assert last.error is None
    with pytest.raises(IndexError):
        TraceOverlay.from_trace(trace, len(trace.events))


def test_cursor_inside_nested_loops(nested):
    model, trace = nested
    index = next(e.index for e in trace.events if e.node == f"{LOOP_BODY}/scale_it" and e.iteration == (1, 0))
    drawn = parse_dot(model_to_dot(model, cursor=TraceOverlay.from_trace(trace, index)).dot)
    executed = {e.node for e in trace.events[: index + 1]}
    states = {}
    for ref in model.nodes():
        states[ref.path] = state_of(drawn.nodes[box(ref.path)])
    assert states[f"{LOOP_BODY}/scale_it"] == "current"
    assert drawn.nodes[box(f"{LOOP_BODY}/scale_it")]["style"] == "rounded,filled,bold"  # still a filled box
    assert "▶ iteration 1, 0" in drawn.nodes[box(f"{LOOP_BODY}/scale_it")]["label"]
    for owner in ("gate", "gate/then_branch/scan", "gate/then_branch/scan/body/loop"):
        assert states[owner] == "running"  # still running: their own events come after their bodies'
        assert "dashed" in drawn.nodes[box(owner)]["style"]
    for path, state in states.items():
        if state in ("current", "running"):
            continue
        if path.startswith("gate/else_branch/"):  # the If runs its then branch: the other one is not taken
            assert state == "skipped", path
            continue
        assert state == ("executed" if path in executed else "pending"), path
    assert states["relu"] == "pending" and states[f"{LOOP_BODY}/add_x"] == "executed"
    # its inputs arrive on highlighted edges, its output leaves on one
    (edge,) = drawn.edges_between(box(f"{LOOP_BODY}/add_x"), box(f"{LOOP_BODY}/scale_it"))
    assert edge["color"] == EDGE_STATES["input"]["color"]
    (edge,) = drawn.edges_between(svg_id("input", "", "3"), box(f"{LOOP_BODY}/scale_it"))  # captured scale
    assert edge["color"] == EDGE_STATES["input"]["color"]
    (edge,) = drawn.edges_between(box(f"{LOOP_BODY}/scale_it"), svg_id("output", LOOP_BODY, "1"))
    assert edge["color"] == EDGE_STATES["output"]["color"]
    plain = [a for t, h, a in drawn.visible_edges() if a.get("color") in (EDGE_STATES["input"]["color"],
                                                                          EDGE_STATES["output"]["color"])]
    assert len(plain) == 3


def test_cursor_inside_a_collapsed_body_marks_its_owner(nested):
    model, trace = nested
    cursor = TraceOverlay.from_trace(trace, 0)
    drawn = parse_dot(model_to_dot(model, cursor=cursor, expand="none").dot)
    assert state_of(drawn.nodes[box("gate")]) == "current"
    assert state_of(drawn.nodes[box("relu")]) == "pending"
    # under the default rule a cursor reveals its node even in bodies too big to expand
    revealed = parse_dot(model_to_dot(model, cursor=cursor, max_expanded_nodes=0).dot)
    assert state_of(revealed.nodes[box(f"{LOOP_BODY}/add_x")]) == "current"
    assert "cluster:" + svg_id("graph", "gate/else_branch") not in revealed.clusters


def test_error_overlay_from_a_failed_run():
    model = explorer.load(failing_loop_model())
    with pytest.raises(explorer.ExecutionError) as caught:
        explorer.run(model, {"x": np.ones(3, np.float32)})
    trace = caught.value.trace
    at_error = TraceOverlay.from_trace(trace)
    assert at_error.error == at_error.current == "loop/body/reshape" and at_error.iteration == (1,)
    drawn = parse_dot(model_to_dot(model, cursor=at_error).dot)
    assert state_of(drawn.nodes[box("loop/body/reshape")]) == "error"
    assert drawn.nodes[box("loop/body/reshape")]["fillcolor"] == NODE_STATES["error"]["fillcolor"]
    assert state_of(drawn.nodes[box("loop")]) == "running"
    assert state_of(drawn.nodes[box("first")]) == "executed"
    # earlier positions still show where the run will fail
    early = TraceOverlay.from_trace(trace, 0)
    assert early.current == "first" and early.error == "loop/body/reshape"
    collapsed = parse_dot(model_to_dot(model, cursor=early, expand="none").dot)
    assert state_of(collapsed.nodes[box("loop")]) == "error"


def test_rewrite_overlay_marks_removed_and_added_nodes():
    model = explorer.load(scoped_model())
    removed = "/encoder/layer.1/attn/Softmax"
    overlay = RewriteOverlay(removed={removed, "not/in/this/model"}, added={"/head/Softmax"})
    assert isinstance(overlay.removed, frozenset)
    drawn = parse_dot(model_to_dot(model, overlay=overlay, max_boxes=3).dot)
    assert state_of(drawn.nodes[box(removed)]) == "removed"
    assert "dashed" in drawn.nodes[box(removed)]["style"]
    assert state_of(drawn.nodes[box("/head/Softmax")]) == "added"
    # scopes holding them open; the others stay collapsed under the small budget
    assert svg_id("scope", "/encoder/layer.0") in drawn.nodes
    assert "cluster:" + svg_id("scope", "/encoder/layer.1/attn") in drawn.clusters
    others = [n for n, box in drawn.nodes.items() if state_of(box) in ("removed", "added")]
    assert sorted(others) == sorted([box(removed), box("/head/Softmax")])
