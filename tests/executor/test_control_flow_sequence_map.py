"""SequenceMap against onnxruntime (which runs it through its function expansion, a Loop): several sequences,
extra tensor inputs broadcast to every iteration, outer-scope captures, ragged elements, empty sequences."""
from __future__ import annotations

import numpy as np
import pytest

import explorer
from tests.support import control_flow_models as cf
from tests.support.control_flow_models import I64, F, graph, node, seq_vi, vi


def map_model(n_sequences: int, n_tensors: int) -> object:
    """out = s0 + s1 * 2 + ... + t0 * t1 ... + cap (cap read from the outer scope); shape = Shape(s0)."""
    seqs, tensors = [f"s{j}" for j in range(n_sequences)], [f"t{j}" for j in range(n_tensors)]
    nodes, acc = [], "s0"
    for j, name in enumerate(seqs[1:] + tensors, 1):
        nodes.append(node("Mul", [name, "k"], [f"scaled{j}"]))
        nodes.append(node("Add", [acc, f"scaled{j}"], [f"acc{j}"]))
        acc = f"acc{j}"
    nodes += [node("Add", [acc, "cap"], ["out"]), node("Shape", ["s0"], ["shape"])]
    body = graph(nodes, "map_body", [vi(n, F, None) for n in seqs + tensors],
                 [vi("out", F, None), vi("shape", I64, None)], [cf.const("k", 2.0)])
    main = graph([node("SequenceMap", seqs + tensors, ["outs", "shapes"], name="map", body=body)], "map",
                 [seq_vi(s, F, None) for s in seqs] + [vi(t, F, None) for t in tensors] + [vi("cap", F, None)],
                 [seq_vi("outs", F, None), seq_vi("shapes", I64, None)])
    return cf.model(main, 17)


@pytest.mark.parametrize(("n_sequences", "n_tensors"), [(1, 0), (1, 1), (2, 0), (2, 1), (3, 2)])
@pytest.mark.parametrize("lengths", [(2, 3, 1), (4,), ()])
def test_sequence_map_matches_onnxruntime(n_sequences, n_tensors, lengths):
    rng = np.random.default_rng(len(lengths) * 10 + n_sequences)
    feeds = {f"s{j}": [rng.standard_normal(n).astype(np.float32) for n in lengths] for j in range(n_sequences)}
    feeds.update({f"t{j}": rng.standard_normal(1).astype(np.float32) for j in range(n_tensors)})
    feeds["cap"] = np.array(0.5, np.float32)
    trace = cf.run_both(map_model(n_sequences, n_tensors), feeds)
    records = trace.iterations("map")
    assert [r.index for r in records] == [(i,) for i in range(len(lengths))]
    for i, record in enumerate(records):
        np.testing.assert_array_equal(record.inputs["s0"], feeds["s0"][i])
        for j in range(n_tensors):  # tensor inputs reach every iteration whole
            np.testing.assert_array_equal(record.inputs[f"t{j}"], feeds[f"t{j}"])
        np.testing.assert_array_equal(record.outputs["out"], trace.outputs["outs"][i])
        assert trace.event("map/body/out", (i,)).outputs["out"] is record.outputs["out"]


def test_sequence_map_of_unequal_sequences_is_a_clear_error():
    feeds = {"s0": [np.ones(2, np.float32)] * 3, "s1": [np.ones(2, np.float32)] * 2, "cap": np.array(0, np.float32)}
    with pytest.raises(explorer.ExecutionError, match=r"node 'map' \(SequenceMap\).*sequence input 1 has 2 "
                                                      r"elements, input_sequence has 3"):
        explorer.run(explorer.load(map_model(2, 0)), feeds)
