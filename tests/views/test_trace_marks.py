"""Trace positions as marks on one layout (views/trace_marks.py): the states are those node_states writes into
DOT for the same position, the layout does not depend on the position, and each state has a CSS look made of
the colours in views/styles.py."""
from __future__ import annotations

import re

import pytest

import explorer
from explorer.inputs.samples import sample_inputs, sample_path
from explorer.views import styles
from explorer.views.dot import model_to_dot
from explorer.views.dot_escape import svg_id
from explorer.views.overlays import TraceOverlay
from explorer.views.trace_marks import state_css, trace_marks

PARITY = "enc/body/inner/body/parity"


@pytest.fixture(scope="module")
def nested():
    model = explorer.load(sample_path("nested_loops"))
    return model, explorer.run(model, sample_inputs("nested_loops"))


def baked_colour(dot: str, box: str) -> str | None:
    """The outline colour DOT gives a box (the state node_states wrote into it)."""
    found = re.search(rf'^\s*"{re.escape(box)}" \[(.*)\];$', dot, re.M)
    assert found is not None, box
    colour = re.search(r'(?:^|, )color="([^"]*)"', found.group(1))
    return colour.group(1) if colour else None


@pytest.mark.parametrize("index", [0, 1, 7, 20, -1])
def test_marks_give_every_box_the_state_baked_into_dot(nested, index):
    model, trace = nested
    cursor = TraceOverlay.from_trace(trace, index)
    current = trace.events[index].node
    plain = model_to_dot(model, reveal=[current])
    baked = model_to_dot(model, reveal=[current], cursor=cursor)
    marks = trace_marks(model, plain, cursor)
    for box in plain.boxes:
        state = marks.state_of(box)
        assert baked_colour(baked.dot, box) == (styles.NODE_STATES[state].get("color") if state else
                                                baked_colour(plain.dot, box)), box
    assert marks.state_of(svg_id("node", current)) == "current"


def test_the_layout_does_not_move_with_the_cursor(nested):
    model, trace = nested
    drawings = [model_to_dot(model, reveal=[trace.events[i].node]) for i in (0, 1, 2)]
    assert drawings[0].dot == drawings[1].dot == drawings[2].dot  # all in the same (expanded) bodies


def test_the_current_nodes_edges_and_iterations_are_marked(nested):
    model, trace = nested
    index = next(e.index for e in trace.events_of(PARITY) if e.iteration == (1, 2))
    drawing = model_to_dot(model, reveal=[PARITY])
    marks = trace_marks(model, drawing, TraceOverlay.from_trace(trace, index))
    box = svg_id("node", PARITY)
    assert marks.badge == (box, "▶ iteration 1, 2")
    edges = {e.id: e for e in drawing.edges}
    inputs = [edges[i] for i in marks.states["input"]]
    outputs = [edges[i] for i in marks.states["output"]]
    # parity = Mod(j, two): `two` is an initializer folded into the label, so only j arrives by an edge
    assert {e.head for e in inputs} == {box} and {n for e in inputs for n in e.names} == {"j"}
    assert {e.tail for e in outputs} == {box} and {n for e in outputs for n in e.names} == {"parity"}


def test_every_state_has_a_look_in_the_colours_of_styles():
    css = state_css()
    for state, look in styles.NODE_STATES.items():
        rule = next(line for line in css.splitlines() if line.startswith(f"g.node.st-{state} > path"))
        if "color" in look:
            assert f"stroke: {look['color']} !important" in rule
        if "fillcolor" in look:
            assert f"fill: {look['fillcolor']} !important" in rule
    for state, look in styles.EDGE_STATES.items():
        assert f"g.edge.st-{state} path {{ stroke: {look['color']} !important;" in css
