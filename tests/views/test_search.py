"""Search over names, op types, values and shapes (declared and recorded), and across a run: NaN/Inf writers and
nodes slower than a threshold; results reach into nested bodies and come with their paths."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer.views.search import parse_query, search, search_nodes, shape_pattern
from tests.support.diagrams import nested_feeds, nested_model

LOOP_BODY = "gate/then_branch/scan/body/loop/body"


@pytest.fixture(scope="module")
def nested():
    model = explorer.load(nested_model())
    return model, explorer.run(model, nested_feeds())


def test_queries_parse_into_fields():
    assert parse_query("op:Conv") == (("op",), "Conv")
    assert parse_query("shape:[1, 3]") == (("shape",), "[1, 3]")
    assert parse_query("NaN") == (("is",), "nan") and parse_query("is:inf") == (("is",), "inf")
    assert parse_query("slower:2ms") == (("slower",), "2.0") and parse_query("time > 0.5 s") == (("slower",), "500.0")
    assert parse_query("add") == (("name", "op", "value", "module"), "add")
    assert shape_pattern("1x3×224") == ("1", "3", "224") and shape_pattern("[?, 4]") == ("?", "4")
    assert shape_pattern("scalar") == () and shape_pattern("3 by 4") is None


def test_names_ops_and_values_reach_into_bodies(nested):
    model, _ = nested
    assert search_nodes(model, "op:Add") == [f"{LOOP_BODY}/add_x"]
    hits = search(model, "value:acc_sum")  # written by add_x, read by scale_it
    assert [(hit.path, hit.field) for hit in hits] == [(f"{LOOP_BODY}/add_x", "value"), (f"{LOOP_BODY}/scale_it", "value")]
    assert search_nodes(model, "scale_it") == [f"{LOOP_BODY}/scale_it"]


def test_shapes_declared_and_recorded(nested):
    model, trace = nested
    declared = search(model, "shape:3")
    assert declared and all(hit.text.startswith("declared [3]") for hit in declared)
    recorded = search(model, "shape:[3]", trace=trace)
    expected = {e.node for e in trace.events if any(getattr(v, "shape", None) == (3,) for v in e.outputs.values())}
    assert {hit.path for hit in recorded} == expected and f"{LOOP_BODY}/add_x" in expected
    assert search(model, "shape:3 by 4") == []


def test_nan_writers_and_slow_nodes_come_from_the_trace():
    graph = h.make_graph([h.make_node("Sqrt", ["x"], ["r"], name="root"), h.make_node("Relu", ["r"], ["y"], name="relu"),
                          h.make_node("Neg", ["x"], ["z"], name="neg")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [3]), h.make_tensor_value_info("z", T.FLOAT, [3])])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]))
    trace = explorer.run(model, {"x": np.array([-1.0, 4.0, 9.0], np.float32)})
    nan = search(model, "nan", trace=trace)
    # Relu(NaN) is NaN too (IEEE max propagates it): both wrote NaN; Neg did not
    assert [hit.path for hit in nan] == ["root", "relu"] and "NaN 1" in nan[0].text
    assert search(model, "nan") == []  # no run, no answer
    assert search_nodes(model, "is:inf", trace=trace) == []
    slowest = max(trace.events, key=lambda e: e.seconds)
    threshold = min(e.seconds for e in trace.events) * 1e3
    slow = search(model, f"slower:{threshold}ms", trace=trace)
    assert slowest.node in [hit.path for hit in slow] and all(hit.field == "time" for hit in slow)
    assert search(model, "slower:100s", trace=trace) == []
