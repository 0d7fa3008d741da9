"""The computations behind the app's pages (explorer/views: cursor, loops, inspector, gates), checked on the
bundled samples against values worked out by hand or with plain NumPy."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import explorer
from explorer.inputs.samples import sample_path
from explorer.views import cursor, gates, inspector, loops

ADD = "enc/body/inner/body/branch/then_branch/add_x"
HALVE = "enc/body/inner/body/branch/else_branch/halve"
PARITY = "enc/body/inner/body/parity"


@pytest.fixture(scope="module")
def nested():
    model = explorer.load(sample_path("nested_loops"))
    rng = np.random.default_rng(7)
    feeds = {"s0": rng.standard_normal(3).astype(np.float32), "X": rng.standard_normal((3, 3)).astype(np.float32)}
    return model, explorer.run(model, feeds), feeds


def at(trace, node, iteration):
    return trace.event(node, iteration).index


def test_breadcrumb_names_every_enclosing_level(nested):
    model, trace, _ = nested
    event = trace.event(ADD, (1, 2))
    assert cursor.breadcrumb_text(model, event) == (
        "Scan 'enc' · iteration 1 › Loop 'inner' · iteration 2 › If 'branch' · then_branch › Add 'add_x'")
    assert cursor.breadcrumb_text(model, trace.event("enc")) == "Scan 'enc'"


def test_next_and_previous_iteration_follow_the_innermost_loop(nested):
    model, trace, _ = nested
    # same node one iteration on
    assert cursor.next_iteration(model, trace, at(trace, PARITY, (0, 0))) == at(trace, PARITY, (0, 1))
    assert cursor.previous_iteration(model, trace, at(trace, PARITY, (0, 1))) == at(trace, PARITY, (0, 0))
    # add_x runs on even j only: from j=0 the next iteration (j=1) starts with parity
    assert cursor.next_iteration(model, trace, at(trace, ADD, (0, 0))) == at(trace, PARITY, (0, 1))
    assert cursor.previous_iteration(model, trace, at(trace, ADD, (0, 2))) == at(trace, PARITY, (0, 1))
    # last inner iteration: the inner loop ends there (no jump into the next Scan step)
    assert cursor.next_iteration(model, trace, at(trace, PARITY, (0, 2))) is None
    assert cursor.previous_iteration(model, trace, at(trace, PARITY, (1, 0))) is None
    # a node of the Scan body moves along the Scan
    assert cursor.next_iteration(model, trace, at(trace, "enc/body/squash", (0,))) == at(
        trace, "enc/body/squash", (1,))
    assert cursor.next_iteration(model, trace, at(trace, "enc/body/squash", (2,))) is None
    assert cursor.next_iteration(model, trace, at(trace, "enc", ())) is None


def test_iterations_move_at_every_loop_level_of_the_breadcrumb(nested):
    model, trace, _ = nested
    assert [owner.path for owner, _ in cursor.loop_levels(model, PARITY)] == ["enc", "enc/body/inner"]
    here = at(trace, PARITY, (1, 2))
    # level 0 (the Scan): the same node at the same inner iteration of the next / previous Scan step
    assert cursor.move_iteration(model, trace, here, 0, +1) == at(trace, PARITY, (2, 2))
    assert cursor.move_iteration(model, trace, here, 0, -1) == at(trace, PARITY, (0, 2))
    # level 1 (the inner Loop) is what next_iteration does
    assert cursor.move_iteration(model, trace, here, 1, -1) == cursor.previous_iteration(model, trace, here)
    assert cursor.move_iteration(model, trace, at(trace, ADD, (1, 2)), 0, +1) == at(trace, ADD, (2, 2))
    last_step = max(e.iteration[0] for e in trace.events_of(PARITY))
    assert cursor.move_iteration(model, trace, at(trace, PARITY, (last_step, 0)), 0, +1) is None
    assert cursor.move_iteration(model, trace, at(trace, PARITY, (0, 0)), 0, -1) is None
    assert cursor.move_iteration(model, trace, here, 2, +1) is None  # no third loop around it


def test_next_execution_and_first_nonfinite(nested):
    model, trace, _ = nested
    assert cursor.next_execution(trace, at(trace, ADD, (0, 0)), ADD) == at(trace, ADD, (0, 2))
    assert cursor.next_execution(trace, at(trace, ADD, (2, 2)), ADD) is None
    assert cursor.first_nonfinite(trace) is None
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Log", ["r"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with np.errstate(divide="ignore"):
        trace = explorer.run(model, {"x": np.array([1.0, -2.0, 3.0], np.float32)})
    assert cursor.first_nonfinite(trace) == 1  # log(relu(-2)) = -inf


def test_loop_values_match_the_arithmetic(nested):
    model, trace, feeds = nested
    inner = loops.body_values(model, "enc/body/inner")
    assert inner.counters == ["j", "cond_in"] and inner.carried == [("acc_in", "acc_out")]
    assert inner.cond_out == "cond_out" and inner.scan_out == []
    s = feeds["s0"]
    for t, x in enumerate(feeds["X"]):
        event = trace.event("enc/body/inner", (t,))
        assert loops.stop_reason(event) == "trip count reached after 3 iterations"
        iterations = loops.iterations_of(trace, event)
        assert [it.index for it in iterations] == [(t, 0), (t, 1), (t, 2)]
        series = loops.carried_series(inner, iterations)["acc_in"]
        expected = [s, s + x, (s + x) * 0.5, (s + x) * 0.5 + x]
        np.testing.assert_allclose(np.stack(series), np.stack(expected), rtol=1e-6)
        s = np.tanh(expected[-1])
    np.testing.assert_allclose(trace.outputs["s_final"], s, rtol=1e-6)
    rows = loops.iteration_rows(inner, iterations)
    assert [r["iteration"] for r in rows] == [0, 1, 2]
    assert [r["→ j"] for r in rows] == ["0", "1", "2"]


def test_scan_values_and_slices(nested):
    model, trace, feeds = nested
    enc = loops.body_values(model, "enc")
    assert enc.carried == [("s_in", "s_out")] and enc.scan_in == ["x_t"] and enc.scan_out == ["y_t"]
    iterations = loops.iterations_of(trace, trace.event("enc"))
    np.testing.assert_array_equal(np.stack(loops.per_iteration(iterations, "x_t", "inputs")), feeds["X"])
    np.testing.assert_allclose(np.stack(loops.per_iteration(iterations, "y_t", "outputs")), trace.outputs["Y"])
    assert loops.stop_reason(trace.event("enc")) == ""


def test_branch_rows_alternate_with_the_parity(nested):
    _, trace, _ = nested
    rows = loops.branch_rows(trace, "enc/body/inner/body/branch")
    assert [r["branch"] for r in rows] == ["then_branch", "else_branch", "then_branch"] * 3
    assert [r["cond"] for r in rows[:3]] == ["True", "False", "True"]


def test_control_flow_nodes_cover_nested_bodies(nested):
    model, _, _ = nested
    assert list(loops.control_flow_nodes(model)) == ["enc", "enc/body/inner", "enc/body/inner/body/branch"]


def test_inspector_reads_declared_types_through_enclosing_scopes(nested):
    model, trace, _ = nested
    details = inspector.node_details(model, ADD)
    assert details.label == "Add 'add_x'"
    # acc_in is a Loop body input, x_t a Scan body input two scopes up
    assert {p.name: p.type for p in details.inputs} == {"acc_in": "tensor(float32) [3]",
                                                         "x_t": "tensor(float32) [3]"}
    loop = inspector.node_details(model, "enc/body/inner")
    assert loop.bodies == ["enc/body/inner/body"]
    assert ("body", "graph 'inner_body' (4 nodes)") in loop.attributes
    rows = inspector.executions(trace, ADD)
    assert [r["iteration"] for r in rows] == [str(i) for i in [(0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)]]


def test_attribute_texts():
    node = helper.make_node("Foo", [], [], alpha=0.5, mode=b"constant", pads=[1, 2],
                            value=onnx.numpy_helper.from_array(np.array([1, 2], np.int64)))
    texts = {a.name: inspector.format_attribute(a) for a in node.attribute}
    assert texts == {"alpha": "0.5", "mode": "constant", "pads": "[1, 2]", "value": "int64[2] = [1, 2]"}


def test_gate_bounds_and_saturation():
    graph = helper.make_graph(
        [helper.make_node("LSTM", ["x", "W", "R"], ["Y"], hidden_size=2, direction="bidirectional",
                          activations=["Sigmoid", "Tanh", "Relu", "HardSigmoid", "ScaledTanh", "Tanh"],
                          activation_alpha=[0.2, 2.0], activation_beta=[0.5, 1.0])], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
         (("x", [1, 1, 1]), ("W", [2, 8, 1]), ("R", [2, 8, 2]))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]))
    assert gates.gate_bounds(model, "LSTM_0", 0) == {"i": (0, 1), "o": (0, 1), "f": (0, 1), "c": (-1, 1)}
    assert gates.gate_bounds(model, "LSTM_0", 1) == {"i": (0, 1), "o": (0, 1), "f": (0, 1), "c": (-2, 2)}
    rnn = helper.make_graph(
        [helper.make_node("RNN", ["x", "W", "R"], ["Y"], hidden_size=2, activations=["Tanh"])], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
         (("x", [1, 1, 1]), ("W", [1, 2, 1]), ("R", [1, 2, 2]))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    rnn_model = explorer.load(helper.make_model(rnn, opset_imports=[helper.make_opsetid("", 14)]))
    assert gates.gate_bounds(rnn_model, "RNN_0", 0) == {"H": (-1, 1)}  # not the unbounded pre-activation `a`
    values = np.array([[0.01, 0.5, 0.99, 0.2], [0.5, 0.5, 0.5, 0.96], [np.nan] * 4])
    np.testing.assert_array_equal(gates.saturation(values, (0.0, 1.0)), [0.5, 0.25, np.nan])
    np.testing.assert_allclose(gates.hidden_norm(np.array([[3.0, 4.0], [np.nan, np.nan]])), [5.0, np.nan])


def scoped_model():
    """PyTorch-style scoped names: /enc/layer0/{MatMul,Add}, /enc/layer1/{MatMul,Add}, /head/Relu."""
    nodes, last = [], "x"
    for layer in ("layer0", "layer1"):
        nodes += [helper.make_node("MatMul", [last, "w"], [f"{layer}_mm"], name=f"/enc/{layer}/MatMul"),
                  helper.make_node("Add", [f"{layer}_mm", "b"], [f"{layer}_out"], name=f"/enc/{layer}/Add")]
        last = f"{layer}_out"
    nodes.append(helper.make_node("Relu", [last], ["y"], name="/head/Relu"))
    graph = helper.make_graph(nodes, "scoped", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
                              [onnx.numpy_helper.from_array(np.eye(2, dtype=np.float32), "w"),
                               onnx.numpy_helper.from_array(np.ones(2, np.float32), "b")])
    return explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_surroundings_is_the_innermost_scope_or_the_graph(nested):
    from explorer.views.dot import model_to_dot
    from explorer.views.dot_escape import svg_id

    model = scoped_model()
    focus = cursor.surroundings(model, "/enc/layer1/Add")
    dot = model_to_dot(model, focus=focus).dot
    drawn = {path for path in ("/enc/layer0/Add", "/enc/layer1/MatMul", "/enc/layer1/Add", "/head/Relu")
             if f'id="{svg_id("node", path)}"' in dot}
    assert drawn == {"/enc/layer1/MatMul", "/enc/layer1/Add"}
    nested_model = nested[0]
    assert cursor.surroundings(nested_model, ADD) == "enc/body/inner/body/branch/then_branch"
    assert cursor.surroundings(nested_model, "enc") == ""
