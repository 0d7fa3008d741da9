"""explorer.compare: each planted divergence is reported exactly where it was planted (node path and iteration
tuple, gate and time step); agreeing pairs report none; what cannot be aligned is listed."""
from __future__ import annotations

import numpy as np
import pytest

import explorer
from explorer.compare import compare
from explorer.errors import CompareError
from tests.support.compare_models import (
    PLANTED_NODE,
    exported_rnn,
    fp_feeds,
    fp_pair,
    loop_in_scan,
    loop_in_scan_feeds,
    plant_output,
    renamed,
    rnn_feeds,
    torch_parameters,
)


@pytest.fixture(scope="module")
def pair():
    return explorer.load(loop_in_scan(False)), explorer.load(loop_in_scan(True))


def test_body_node_in_a_loop_in_a_scan_at_the_planted_iteration(pair):
    clean, planted = pair
    result = compare(clean, planted, loop_in_scan_feeds())
    first = result.first
    assert (first.node, first.iteration, first.name) == (PLANTED_NODE, (1, 2), "leak")
    assert first.max_abs == pytest.approx(0.5)
    plant = result.value(PLANTED_NODE)
    assert next(e.iteration for e in plant.errors if not e.ok) == (1, 2)
    assert all(e.ok for e in plant.errors if e.iteration < (1, 2))
    assert len(plant.errors) == 12 and plant.how == "node and name"
    assert result.differs and not result.unaligned
    assert result.value("enc", "s_final").max_abs > 0


@pytest.mark.parametrize("at", [(0, 0), (2, 1), (3, 2)])
def test_the_planted_iteration_moves_with_the_plant(at):
    result = compare(explorer.load(loop_in_scan(False, at)), explorer.load(loop_in_scan(True, at)),
                     loop_in_scan_feeds())
    assert (result.first.node, result.first.iteration) == (PLANTED_NODE, at)


def test_growth_of_the_error_over_iterations(pair):
    result = compare(*pair, loop_in_scan_feeds())
    growth = result.value(PLANTED_NODE).growth
    assert growth[:5] == [0.0] * 5 and growth[5] == pytest.approx(0.5) and growth[6:] == [0.0] * 6
    carried = result.value("enc/body/inner/body/merge").growth  # the loop-carried acc keeps the error
    assert carried[:5] == [0.0] * 5 and carried[5] == pytest.approx(0.5) and all(g > 0 for g in carried[6:])
    outer = result.value("enc/body/squash")
    assert [e.iteration for e in outer.errors] == [(0,), (1,), (2,), (3,)]
    assert outer.growth[0] == 0 and outer.growth[1] > outer.growth[2] > outer.growth[3] > 0  # it fades


def test_identical_models_agree(pair):
    result = compare(pair[0], pair[0], loop_in_scan_feeds())
    assert result.first is None and not result.differs and not result.unaligned
    trace = explorer.run(pair[0], loop_in_scan_feeds())
    assert sum(len(v.errors) for v in result.values) == sum(len(e.outputs) for e in trace.events)


def test_onnxruntime_inside_bodies_matches_every_iteration(pair):
    clean = pair[0]
    trace = explorer.run(clean, loop_in_scan_feeds())
    result = compare(clean, "onnxruntime", loop_in_scan_feeds())
    assert result.first is None and not result.unaligned
    body = [v for v in result.values if v.in_loop]
    assert sum(len(v.errors) for v in body) == sum(1 for e in trace.events if e.iteration)
    assert {v.node for v in body} >= {PLANTED_NODE, "enc/body/inner", "enc/body/squash"}


def test_onnxruntime_reports_a_body_value_that_departs_at_one_iteration(pair):
    clean = pair[0]
    trace = explorer.run(clean, loop_in_scan_feeds())
    event = trace.event(PLANTED_NODE, (2, 1))
    plant_output(event, "leak", event.outputs["leak"] + np.float32(1e-2))
    result = compare(trace, "onnxruntime", model=clean)
    assert (result.first.node, result.first.iteration) == (PLANTED_NODE, (2, 1))
    assert result.first.max_abs == pytest.approx(1e-2, rel=1e-3)


def test_bisection_keeps_every_value_with_small_chunks(pair):
    whole = compare(pair[0], "onnxruntime", loop_in_scan_feeds())
    chunked = compare(pair[0], "onnxruntime", loop_in_scan_feeds(), max_exposed=3)
    assert [(v.node, len(v.errors)) for v in chunked.values] == [(v.node, len(v.errors)) for v in whole.values]


def test_renamed_reexport_aligns_by_op_sequence_and_finds_the_plant(pair):
    clean = pair[0]
    other = explorer.load(renamed(loop_in_scan(True)))
    result = compare(clean, other, loop_in_scan_feeds())
    assert (result.first.node, result.first.iteration) == (PLANTED_NODE, (1, 2))
    assert result.first.b_node.startswith("node0_") and result.first.b_node != PLANTED_NODE
    assert {v.how for v in result.values} == {"producers"}
    assert not result.unaligned
    same = compare(clean, explorer.load(renamed(loop_in_scan(False))), loop_in_scan_feeds())
    assert same.first is None and not same.differs


def test_fp32_against_fp16_agrees_within_float16_rounding():
    """Each value at its own precision: B's float16 values differ from A's float32 ones by float16's rounding,
    which is no divergence; at float32's tolerance for every value (the user's), the first rounding node is."""
    full, half = (explorer.load(m) for m in fp_pair())
    result = compare(full, half, fp_feeds())
    assert result.first is None and not result.differs
    third = result.value("third", "t")
    assert third.tolerance.precision == "float16" and third.errors[0].within == "float16 rounding"
    assert 1e-4 < third.max_rel < 1e-3
    assert "float16 rounding" in result.within
    strict = compare(full, half, fp_feeds(), rtol=1e-4, atol=1e-5)
    assert (strict.first.node, strict.first.name, strict.first.iteration) == ("third", "t", ())
    assert strict.value("shift").ok
    assert 1e-4 < strict.first.max_rel < 1e-3  # float16's rounding, judged at float32's tolerance
    assert {(u.side, u.node) for u in result.unaligned} >= {("B", "to_half")}


def test_gru_with_linear_before_reset_flipped_departs_at_gate_h_step_0():
    params = torch_parameters("GRU")
    right = explorer.load(exported_rnn("GRU", params, linear_before_reset=1))
    wrong = explorer.load(exported_rnn("GRU", params, linear_before_reset=0))
    result = compare(right, wrong, rnn_feeds())
    (gate,) = result.gates
    assert (gate.node, gate.step, gate.gate, gate.departing) == ("rnn", 0, "h", ("h", "H"))
    assert result.first.node == "rnn"


def test_lstm_with_two_gates_swapped_departs_at_those_gates():
    params = torch_parameters("LSTM")
    right = explorer.load(exported_rnn("LSTM", params))
    wrong = explorer.load(exported_rnn("LSTM", params, swap=("i", "f")))
    (gate,) = compare(right, wrong, rnn_feeds()).gates
    assert (gate.step, gate.gate) == (0, "i")
    assert set(gate.departing) - {"C", "H"} == {"i", "f"}


def test_pytorch_equations_catch_linear_before_reset_zero():
    params = torch_parameters("GRU")
    wrong = explorer.load(exported_rnn("GRU", params, linear_before_reset=0))
    (gate,) = compare(wrong, "pytorch", rnn_feeds()).gates
    assert (gate.against, gate.step, gate.gate) == ("PyTorch", 0, "h")
    assert not compare(explorer.load(exported_rnn("GRU", params)), "pytorch", rnn_feeds()).gates


@pytest.mark.parametrize("op, swap", [("LSTM", ("f", "o")), ("GRU", ("z", "r"))])
def test_framework_parameters_catch_swapped_gates(op, swap):
    params = torch_parameters(op)
    reference = {f"rnn.{k}": v for k, v in params.items()}
    wrong = explorer.load(exported_rnn(op, params, swap=swap))
    (gate,) = compare(wrong, reference, rnn_feeds()).gates
    assert (gate.step, gate.gate) == (0, swap[0] if op == "GRU" else "f")
    # an LSTM's i and c do not read o or f; a GRU's h reads r
    assert set(gate.departing) - {"C", "H"} == (set(swap) if op == "LSTM" else {"z", "r", "h"})
    assert not compare(explorer.load(exported_rnn(op, params)), reference, rnn_feeds()).gates


def test_framework_parameters_catch_a_misplaced_bias():
    params = torch_parameters("GRU")
    model = exported_rnn("GRU", params)
    b = model.graph.initializer[2]
    values = np.frombuffer(b.raw_data, np.float32).copy().reshape(1, 6 * 4)
    values[0, 8:12] += values[0, 20:24]  # b_hn folded into Wbh: outside the reset gate
    values[0, 20:24] = 0
    b.raw_data = values.tobytes()
    (gate,) = compare(explorer.load(model), {f"rnn.{k}": v for k, v in params.items()}, rnn_feeds()).gates
    assert (gate.step, gate.gate) == (0, "h")


def test_reference_values_by_name():
    full, _ = fp_pair()
    model = explorer.load(full)
    trace = explorer.run(model, fp_feeds())
    values = {"t": trace.value("t") * np.float32(1.01), "y": trace.outputs["y"], "nowhere": np.zeros(2)}
    result = compare(model, values, fp_feeds())
    assert (result.first.node, result.first.name) == ("third", "t")
    assert [(v.node, v.name) for v in result.values] == [("third", "t"), ("relu", "y")]  # what the values name
    assert [(u.side, u.name, u.reason) for u in result.unaligned] == [
        ("B", "nowhere", "no node of the model produces a value of this name")]


def test_onnxruntime_gates_from_its_hidden_states():
    params = torch_parameters("GRU")
    model = explorer.load(exported_rnn("GRU", params, linear_before_reset=0))
    trace = explorer.run(model, rnn_feeds())
    event = trace.event("rnn")
    plant_output(event, "Y", event.outputs["Y"].copy())
    event.outputs["Y"][2] += 0.05
    result = compare(trace, "onnxruntime", model=model)
    assert (result.first.node, result.first.name) == ("rnn", "Y")
    assert result.value("rnn", "Y").steps[:2] == [pytest.approx(0, abs=1e-6)] * 2
    assert result.value("rnn", "Y").steps[2] == pytest.approx(0.05, rel=1e-3)


def test_two_judges_are_refused():
    with pytest.raises(CompareError):
        compare("onnxruntime", {"x": np.zeros(1)})


def test_top_level_api_and_a_run_stopped_by_a_limit(pair):
    result = explorer.compare(pair[0], pair[1], loop_in_scan_feeds())
    assert result.first.node == PLANTED_NODE
    limited = explorer.compare(pair[0], "onnxruntime", loop_in_scan_feeds(), limits=explorer.Limits(max_iterations=2))
    assert len(limited.errors) == 2  # explorer's partial run, and onnxruntime not asked
    assert any("not run: explorer's own run stopped at a limit" in e for e in limited.errors.values())


def test_onnxruntime_through_if_branches_in_a_loop_in_a_scan():
    """nested_loops: an If inside a Loop inside a Scan whose branches alternate; each branch's value is exposed
    with a placeholder in the other branch and compared only where that branch ran."""
    from explorer.inputs.samples import sample_inputs, sample_path

    model = explorer.load(sample_path("nested_loops"))
    trace = explorer.run(model, sample_inputs("nested_loops"))
    halve = "enc/body/inner/body/branch/else_branch/halve"
    clean = compare(trace, "onnxruntime", model=model)
    assert clean.first is None and not clean.unaligned
    assert [e.iteration for e in clean.value(halve).errors] == [e.iteration for e in trace.events_of(halve)]
    event = trace.event(halve, (2, 1))
    plant_output(event, "acc_else", event.outputs["acc_else"] * np.float32(1.5))
    found = compare(trace, "onnxruntime", model=model).first
    assert (found.node, found.iteration, found.name) == (halve, (2, 1), "acc_else")


def test_a_gate_departing_from_onnxruntime_is_named():
    """Against onnxruntime the spec's equations are started at each step from onnxruntime's H: a recorded gate
    that does not follow from them (as if a kernel computed z wrongly at step 3) is named, with its step."""
    model = explorer.load(exported_rnn("GRU", torch_parameters("GRU"), linear_before_reset=0))
    trace = explorer.run(model, rnn_feeds())
    event = trace.event("rnn")
    gates = event.info["gates"]
    gates["z"] = gates["z"].copy()
    gates["z"][3] += 0.05
    plant_output(event, "Y", event.outputs["Y"].copy())
    event.outputs["Y"][3] += 0.01
    (gate,) = compare(trace, "onnxruntime", model=model).gates
    assert (gate.against, gate.step, gate.gate) == ("onnxruntime", 3, "z")


def test_the_diagram_fills_only_nodes_beyond_tolerance(pair):
    from explorer.views.compare import divergence_index, error_values

    result = compare(*pair, loop_in_scan_feeds())
    filled = error_values(result).values
    assert PLANTED_NODE in filled and "enc/body/inner/body/extra" not in filled
    assert set(filled) == {v.node for v in result.values if not v.ok}
    assert not error_values(compare(pair[0], pair[0], loop_in_scan_feeds())).values
    assert result.a.trace.events[divergence_index(result)].node == PLANTED_NODE
