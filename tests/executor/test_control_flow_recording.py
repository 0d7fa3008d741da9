"""What a control-flow run records: one event per body node execution with its static path and iteration tuple,
child ranges, iteration records, If branches, Loop stop reasons, the iteration limit with its partial trace,
errors inside bodies naming node and iteration, and all of it surviving save/load."""
from __future__ import annotations

import numpy as np
import pytest

import explorer
from tests.support import control_flow_models as cf
from tests.support.control_flow_models import I64, B, F, const, graph, node, vi


def _nested_run(lengths=(3, 0, 2, 2), seed: int = 7):
    """Loop in Scan in If in Loop; with this seed the If takes its then branch at iterations 0 and 2 only."""
    kinds = ["Loop", "If", "Scan", "Loop"]
    proto, _ = cf.nested(kinds, list(lengths))
    rng = np.random.default_rng(seed)
    feeds = {"v0": np.abs(rng.standard_normal(3)).astype(np.float32),
             "bias": rng.standard_normal(3).astype(np.float32),
             "X2": rng.standard_normal((lengths[2], 3)).astype(np.float32)}
    return explorer.load(proto), explorer.run(explorer.load(proto), feeds)


def test_every_body_node_execution_is_an_event_with_its_path_and_iteration():
    model, trace = _nested_run()
    then_runs = [i for i in range(3) if trace.branch("L0/body/I1", (i,)) == "then_branch"]
    assert then_runs == [0, 2]
    expected: dict[str, set] = {}
    for ref in model.nodes():
        path = ref.path
        if path.startswith("L0/body/I1/then_branch/S2/body/L3/body/"):
            expected[path] = {(i, t, k) for i in then_runs for t in range(2) for k in range(2)}
        elif path.startswith("L0/body/I1/then_branch/S2/body/"):
            expected[path] = {(i, t) for i in then_runs for t in range(2)}
        elif path.startswith("L0/body/I1/then_branch/"):
            expected[path] = {(i,) for i in then_runs}
        elif path.startswith("L0/body/I1/else_branch/"):
            expected[path] = {(i,) for i in range(3) if i not in then_runs}
        elif path.startswith("L0/body/"):
            expected[path] = {(i,) for i in range(3)}
        else:
            expected[path] = {()}
    for path, iterations in expected.items():
        seen = [e.iteration for e in trace.events_of(path)]
        assert sorted(seen) == sorted(iterations), path  # once per iteration tuple, never twice
        assert all(e.op_type == model.node(path).op_type for e in trace.events_of(path))
    assert len(trace.events) == sum(len(v) for v in expected.values())
    assert [e.index for e in trace.events] == list(range(len(trace.events)))


def test_children_are_the_body_events_of_that_execution():
    _, trace = _nested_run()
    loop = trace.event("L0")
    children = trace.children(loop)
    assert children and all(e.node.startswith("L0/body/") for e in children)
    assert len(children) == len(trace.events) - 2  # everything but the Loop itself and `result`
    for i in range(3):
        execution = trace.event("L0/body/I1", (i,))
        branch = trace.branch("L0/body/I1", (i,))
        assert all(e.node.startswith(f"L0/body/I1/{branch}/") and e.iteration[:1] == (i,)
                   for e in trace.children(execution))
    scan = next(e for e in trace.events_of("L0/body/I1/then_branch/S2"))
    inner = trace.children(scan)
    assert {e.iteration[:2] for e in inner} == {scan.iteration + (t,) for t in range(2)}


def test_iteration_records_hold_body_inputs_and_outputs():
    _, trace = _nested_run()
    for record in trace.iterations("L0/body/I1/then_branch/S2/body/L3"):
        assert len(record.index) == 3
        assert set(record.inputs) == {"i3", "cond3", "c_in3"}
        assert set(record.outputs) == {"cond3", "leaf"}
        assert record.inputs["i3"] == record.index[-1]
        event = trace.event("L0/body/I1/then_branch/S2/body/L3/body/leaf", record.index)
        assert record.outputs["leaf"] is event.outputs["leaf"]  # shared with the event, not copied
    for record in trace.iterations("L0/body/I1/then_branch/S2"):
        assert set(record.inputs) == {"c_in2", "x2"} and set(record.outputs) == {"L3_out"}


def test_branch_is_only_for_if():
    _, trace = _nested_run()
    with pytest.raises(KeyError, match="not an If"):
        trace.branch("L0")
    with pytest.raises(KeyError, match="did not run at iteration"):
        trace.branch("L0/body/I1", (7,))


def test_save_and_load_keep_iterations_branches_and_stop_reasons(tmp_path):
    _, trace = _nested_run()
    trace.save(tmp_path / "trace.npz")
    loaded = explorer.Trace.load(tmp_path / "trace.npz")
    assert [(r.node, r.index) for r in loaded.iteration_records] == [(r.node, r.index)
                                                                       for r in trace.iteration_records]
    for i in range(3):
        assert loaded.branch("L0/body/I1", (i,)) == trace.branch("L0/body/I1", (i,))
    assert loaded.event("L0").info["stop_reason"] == "trip count reached"
    for a, b in zip(loaded.iterations("L0/body/I1/then_branch/S2/body/L3"),
                    trace.iterations("L0/body/I1/then_branch/S2/body/L3")):
        np.testing.assert_array_equal(a.outputs["leaf"], b.outputs["leaf"])


@pytest.mark.parametrize("limit", [1, 7, 50])
def test_endless_loop_stops_at_the_iteration_limit_with_a_partial_trace(limit):
    model = explorer.load(cf.endless_loop())
    feeds = {"go": np.array(True), "x": np.array(0.0, np.float32)}
    with pytest.raises(explorer.LimitExceeded) as info:
        explorer.run(model, feeds, limits=explorer.Limits(max_iterations=limit))
    err = info.value
    assert err.node == "forever" and err.op_type == "Loop" and err.limit == "max_iterations"
    assert "node 'forever' (Loop)" in str(err) and f"max_iterations={limit}" in str(err)
    trace = err.trace
    assert trace.error.node == "forever" and trace.error.kind == "LimitExceeded"
    loop = trace.event("forever")
    assert loop.info["stop_reason"] == "limit" and loop.info["iterations"] == limit
    assert len(trace.iterations("forever")) == limit
    assert [e.iteration for e in trace.children(loop)] == [(k,) for k in range(limit)]
    assert float(trace.iterations("forever")[-1].outputs["x_out"]) == limit  # x counts up by one per iteration


def test_limit_inside_a_nested_body_names_the_inner_loop_and_its_iteration():
    """An endless Loop inside a Scan: the error names the inner Loop at the Scan's iteration 0."""
    inner = graph([node("Add", ["x_in", "one"], ["x_out"]), node("Identity", ["cond_in"], ["cond_out"])], "forever",
                  [vi("i", I64, []), vi("cond_in", B, []), vi("x_in", F, [])],
                  [vi("cond_out", B, []), vi("x_out", F, [])], [const("one", 1.0)])
    body = graph([node("Loop", ["", "go", "s"], ["s_out"], name="inner", body=inner),
                  node("Identity", ["s_out"], ["y"])], "scan_body", [vi("s", F, []), vi("x", F, [])],
                 [vi("s_out", F, []), vi("y", F, [])])
    main = graph([node("Scan", ["s0", "xs"], ["s_final", "ys"], name="outer", body=body, num_scan_inputs=1)],
                 "nested_endless", [vi("go", B, []), vi("s0", F, []), vi("xs", F, [2])],
                 [vi("s_final", F, []), vi("ys", F, [2])])
    feeds = {"go": np.array(True), "s0": np.array(0.0, np.float32), "xs": np.zeros(2, np.float32)}
    with pytest.raises(explorer.LimitExceeded) as info:
        explorer.run(explorer.load(cf.model(main)), feeds, limits=explorer.Limits(max_iterations=5))
    err = info.value
    assert (err.node, err.iteration) == ("outer/body/inner", (0,))
    assert "node 'outer/body/inner' (Loop) at iteration (0,)" in str(err)
    stopped = err.trace.event("outer/body/inner", (0,))
    assert stopped.info["stop_reason"] == "limit" and stopped.info["iterations"] == 5


def test_scan_longer_than_the_limit_stops_there():
    proto = cf.scan9(1, 1, 1)
    feeds = {"S0": np.zeros((2, 3), np.float32), "X0": np.ones((10, 2, 3), np.float32)}
    with pytest.raises(explorer.LimitExceeded) as info:
        explorer.run(explorer.load(proto), feeds, limits=explorer.Limits(max_iterations=4))
    assert info.value.node == "scan"
    assert info.value.trace.event("scan").info == {"stop_reason": "limit", "iterations": 4, "error": str(info.value),
                                                   "children": info.value.trace.event("scan").info["children"]}
    assert len(info.value.trace.iterations("scan")) == 4


def test_error_inside_a_body_names_node_path_and_iteration():
    """Gather with an index that goes out of range at iteration 3 of a Loop nested in a Scan."""
    inner = graph([node("Gather", ["table", "i"], ["picked"]), node("Identity", ["cond_in"], ["cond_out"])],
                  "picker", [vi("i", I64, []), vi("cond_in", B, [])], [vi("cond_out", B, []), vi("picked", F, [])])
    body = graph([node("Loop", ["M", ""], ["picks"], name="inner", body=inner),
                  node("ReduceSum", ["picks"], ["total"], keepdims=0), node("Add", ["s", "total"], ["s_out"])],
                 "scan_body", [vi("s", F, []), vi("x", F, [])], [vi("s_out", F, [])])
    main = graph([node("Scan", ["s0", "xs"], ["s_final"], name="outer", body=body, num_scan_inputs=1)],
                 "failing", [vi("M", I64, []), vi("s0", F, []), vi("xs", F, [2]), vi("table", F, [3])],
                 [vi("s_final", F, [])])
    feeds = {"M": np.array(5, np.int64), "s0": np.array(0.0, np.float32), "xs": np.zeros(2, np.float32),
             "table": np.array([1.0, 2.0, 3.0], np.float32)}
    proto = cf.model(main)
    with pytest.raises(explorer.ExecutionError) as info:
        explorer.run(explorer.load(proto), feeds)
    err = info.value
    assert (err.node, err.op_type, err.iteration) == ("outer/body/inner/body/picked", "Gather", (0, 3))
    assert "node 'outer/body/inner/body/picked' (Gather) at iteration (0, 3)" in str(err)
    picked = err.trace.events_of("outer/body/inner/body/picked")
    assert [e.iteration for e in picked] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert picked[-1].outputs == {} and picked[-1].info["error"] == str(err)  # the failing execution closes it
    with pytest.raises(Exception, match="(?i)out of bounds|indices"):  # onnxruntime fails on it as well
        cf.ort_run(proto, feeds)
    feeds["M"] = np.array(3, np.int64)  # in range: explorer and onnxruntime agree
    trace = cf.run_both(proto, feeds)
    assert float(trace.outputs["s_final"]) == 12.0
