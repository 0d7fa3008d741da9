"""Value overlays: per-node scalars from a run (time, max |value|, NaN/Inf), binned onto styles.HEAT_SCALE with a
legend, and drawn as the fill of the box standing for each node (a collapsed box aggregates its nodes)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer.views import heat, styles
from explorer.views.dot import model_to_dot
from explorer.views.render import dot_available
from tests.support.diagrams import box, nested_feeds, nested_model, parse_dot


@pytest.fixture(scope="module")
def nested():
    model = explorer.load(nested_model())
    return model, explorer.run(model, nested_feeds())


def test_values_come_from_the_run(nested):
    _, trace = nested
    spent = heat.time_spent(trace)
    for path in {e.node for e in trace.events}:
        assert math.isclose(spent.values[path], sum(e.seconds for e in trace.events_of(path)) * 1e3)
    biggest = heat.max_abs(trace)
    add = "gate/then_branch/scan/body/loop/body/add_x"
    assert biggest.values[add] == max(float(np.abs(e.outputs["acc_sum"]).max()) for e in trace.events_of(add))
    assert heat.nonfinite(trace).values == {}


def test_nan_counts_and_the_legend():
    graph = h.make_graph([h.make_node("Log", ["x"], ["y"], name="log")], "g", [h.make_tensor_value_info("x", T.FLOAT, [4])],
                         [h.make_tensor_value_info("y", T.FLOAT, [4])])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]))
    trace = explorer.run(model, {"x": np.array([-1, 0, 1, 2], np.float32)})
    assert heat.nonfinite(trace).values == {"log": 2}  # log(-1) = NaN, log(0) = -Inf
    linear = heat.NodeValues("v", {"a": 0.0, "b": 5.0, "c": 10.0})
    assert [linear.level(v) for v in (0.0, 5.0, 10.0)] == [0, 2, len(styles.HEAT_SCALE) - 1]
    assert linear.legend()[0] == (styles.HEAT_SCALE[0], "0 – 2") and linear.legend()[-1][1] == "8 – 10"
    spread = heat.NodeValues("t", {"a": 0.001, "b": 1.0, "c": 10.0}, "ms")  # four decades: log-spaced bins
    assert [spread.level(v) for v in (0.001, 0.005, 0.1, 1.0, 10.0)] == [0, 0, 2, 3, 4]
    assert spread.legend()[0][1] == "0.001 – 0.00631 ms"
    assert heat.NodeValues("none").legend() == []


@pytest.mark.skipif(not dot_available(), reason="graphviz's dot is not installed")
def test_boxes_are_filled_by_their_level(nested):
    model, trace = nested
    values = heat.time_spent(trace)
    drawn = parse_dot(model_to_dot(model, values=values).dot)
    for path, ms in values.values.items():
        assert drawn.nodes[box(path)]["fillcolor"] == values.colour(ms), path
    collapsed = parse_dot(model_to_dot(model, values=values, expand="none").dot)
    inside = [p for p in values.values if p.startswith("gate")]
    assert collapsed.nodes[box("gate")]["fillcolor"] == values.colour(sum(values.values[p] for p in inside))
