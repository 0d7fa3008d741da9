"""Arbitrary nesting of Loop, Scan and If, checked per iteration against onnxruntime: the body is rewritten so
an intermediate becomes an extra scan output at every level (control_flow_models.probe); onnxruntime returns it stacked
per iteration tuple, which must equal what explorer recorded for that node at that iteration."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import explorer
from tests.support import control_flow_models as cf
from tests.support.control_flow_models import F, graph, node, seq_vi, vi


def _feeds(kinds: list[str], lengths: list[int], seed: int) -> dict:
    rng = np.random.default_rng(seed)
    feeds = {"v0": rng.standard_normal(3).astype(np.float32), "bias": rng.standard_normal(3).astype(np.float32)}
    for d, kind in enumerate(kinds):
        if kind == "Scan":
            feeds[f"X{d}"] = rng.standard_normal((lengths[d], 3)).astype(np.float32)
    return feeds


def _loop_paths(kinds: list[str], leaf_graph: str) -> list[str]:
    """Node paths of the Loop/Scan levels of a `cf.nested` chain, outermost first."""
    parts = leaf_graph.split("/")
    paths = ["/".join(parts[:i + 1]) for i, part in enumerate(parts) if part[:1] in "LSI" and part[1:].isdigit()]
    return [p for p, kind in zip(paths, kinds) if kind != "If"]


def _check_records(trace: explorer.Trace, loop_paths: list[str]) -> None:
    """Each iteration record sits inside a recorded execution of its node (index = that execution's iteration
    plus its own counter, 0, 1, ...), and the body's events carry the same tuples."""
    for depth, path in enumerate(loop_paths):
        runs = {e.iteration: e.info["iterations"] for e in trace.events_of(path)}
        counted: dict[tuple, list[int]] = {}
        for record in trace.iterations(path):
            assert len(record.index) == depth + 1
            counted.setdefault(record.index[:-1], []).append(record.index[-1])
        assert set(counted) <= set(runs)
        for outer, own in counted.items():
            assert own == list(range(runs[outer]))
        body_iterations = {e.iteration for e in trace.events if e.node.startswith(path + "/")
                           and len(e.iteration) == depth + 1}
        assert body_iterations == {r.index for r in trace.iterations(path)}


kind = st.sampled_from(["Loop", "Scan", "If"])


@settings(max_examples=30, deadline=None)
@given(kinds=st.lists(kind, min_size=1, max_size=4), data=st.data(), seed=st.integers(0, 2**16))
def test_random_nesting_matches_onnxruntime_per_iteration(kinds, data, seed):
    lengths = [data.draw(st.integers(0 if k == "Loop" else 1, 3)) for k in kinds]
    proto, leaf_graph = cf.nested(kinds, lengths)
    feeds = _feeds(kinds, lengths, seed)
    # onnxruntime's Tanh is an approximation off by up to 2 ulp (explorer's is NumPy's, within 1 ulp); chained
    # through up to 81 nested iterations the outputs may drift apart by a few 1e-6.
    trace = cf.run_both(proto, feeds, atol=5e-6)
    stacked = cf.ort_run(cf.probe(proto, leaf_graph, "leaf"), feeds)["probe"]
    loops = _loop_paths(kinds, leaf_graph)
    cf.probed_values(trace, f"{leaf_graph}/leaf", "leaf", stacked, len(loops))
    _check_records(trace, loops)


def test_loop_in_scan_in_if_in_loop_every_level():
    """The outer Loop takes both If branches; every level's own intermediate is probed too."""
    kinds, lengths = ["Loop", "If", "Scan", "Loop"], [4, 0, 3, 2]
    proto, leaf_graph = cf.nested(kinds, lengths)
    assert leaf_graph == "L0/body/I1/then_branch/S2/body/L3/body"
    for seed in range(4):
        feeds = _feeds(kinds, lengths, seed)
        trace = cf.run_both(proto, feeds)
        branches = [trace.branch("L0/body/I1", (i,)) for i in range(4)]
        stacked = cf.ort_run(cf.probe(proto, leaf_graph, "leaf"), feeds)["probe"]
        assert stacked.shape == (4, 3, 2, 3)
        compared = cf.probed_values(trace, f"{leaf_graph}/leaf", "leaf", stacked, 3)
        assert compared == 3 * 2 * branches.count("then_branch")
        for graph_path, name, depth in [("L0/body", "w0", 1), ("L0/body/I1/then_branch/S2/body", "w2", 2),
                                        (leaf_graph, "w3", 3)]:
            stacked = cf.ort_run(cf.probe(proto, graph_path, name), feeds)["probe"]
            cf.probed_values(trace, f"{graph_path}/{name}", name, stacked, depth)
        _check_records(trace, ["L0", "L0/body/I1/then_branch/S2", "L0/body/I1/then_branch/S2/body/L3"])
        if "else_branch" in branches:
            i = branches.index("else_branch")
            assert not [e for e in trace.events if e.iteration[:1] == (i,) and "/then_branch/" in e.node]


def test_sequence_map_inside_a_loop():
    """Each Loop iteration maps a captured sequence with the loop's carried tensor as the extra input."""
    map_body = graph([node("Add", ["elem", "carry"], ["mapped"])], "map_body", [vi("elem", F, None),
                     vi("carry", F, None)], [vi("mapped", F, None)])
    loop_body = graph([
        node("SequenceMap", ["seq", "c_in"], ["mapped_seq"], name="map", body=map_body),
        node("ConcatFromSequence", ["mapped_seq"], ["joined"], axis=0),
        node("ReduceMax", ["joined"], ["c_out"], keepdims=1),
        node("Identity", ["cond"], ["cond_out"]),
    ], "loop_body", [vi("i", cf.I64, []), vi("cond", cf.B, []), vi("c_in", F, [1])],
        [vi("cond_out", cf.B, []), vi("c_out", F, [1]), vi("joined", F, None)])
    main = graph([node("Loop", ["M", "", "c0"], ["c_final", "joins"], name="loop", body=loop_body)], "seqmap_loop",
                 [vi("M", cf.I64, []), vi("c0", F, [1]), seq_vi("seq", F, None)],
                 [vi("c_final", F, [1]), vi("joins", F, None)])
    rng = np.random.default_rng(4)
    seq = [rng.standard_normal(n).astype(np.float32) for n in (2, 1, 3)]
    trace = cf.run_both(cf.model(main, 17), {"M": np.array(3, np.int64), "c0": np.zeros(1, np.float32), "seq": seq})
    assert [r.index for r in trace.iterations("loop/body/map")] == [(i, j) for i in range(3) for j in range(3)]
    carry = np.zeros(1, np.float32)
    for i in range(3):
        for j in range(3):
            np.testing.assert_array_equal(trace.event("loop/body/map/body/mapped", (i, j)).outputs["mapped"],
                                          seq[j] + carry)
        carry = trace.event("loop/body/c_out", (i,)).outputs["c_out"]


@pytest.mark.parametrize("opset", [11, 13, 16, 21])
def test_nesting_across_opsets(opset):
    kinds, lengths = ["Scan", "Loop", "If"], [2, 3, 0]
    proto, leaf_graph = cf.nested(kinds, lengths, opset=opset)
    feeds = _feeds(kinds, lengths, opset)
    trace = cf.run_both(proto, feeds)
    stacked = cf.ort_run(cf.probe(proto, leaf_graph, "leaf"), feeds)["probe"]
    cf.probed_values(trace, f"{leaf_graph}/leaf", "leaf", stacked, 2)
