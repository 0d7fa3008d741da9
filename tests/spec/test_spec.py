"""explorer.spec against its judge, the ONNX spec text of every version (onnx.defs), and hand-written nodes."""
from __future__ import annotations

import re

import onnx
import pytest
from onnx import TensorProto, helper

from explorer.proto.body_signatures import body_signature
from explorer.spec.rnn import ACTIVATION_DEFAULTS, BIAS_HALVES, CELLS, INPUTS, PEEPHOLES


def _versions(op: str) -> list[int]:
    return sorted({s.since_version for s in onnx.defs.get_all_schemas_with_history() if s.name == op and not s.domain})


@pytest.mark.parametrize(("op", "version"), [(op, v) for op in CELLS for v in _versions(op)])
def test_rnn_cells_follow_every_version_of_the_spec(op, version):
    schema = onnx.defs.get_schema(op, version)
    cell = CELLS[op]
    weights = schema.inputs[1].description
    gates = re.search(r"`W\[([a-z]+)\]`", weights) or re.search(r"`W([a-z])`", weights)
    assert tuple(gates.group(1)) == cell.gates
    bias = schema.inputs[3].description.replace(" ", "")
    assert f"[{BIAS_HALVES[0]}[{''.join(cell.gates)}],{BIAS_HALVES[1]}[{''.join(cell.gates)}]]" in bias or \
        f"[{BIAS_HALVES[0]}{cell.gates[0]},{BIAS_HALVES[1]}{cell.gates[0]}]" in bias
    defaults = re.search(r"Equations \(Default: ([^)]*)\)", schema.doc).group(1)
    assert tuple(part.split("=")[1] for part in defaults.split(", ")) == cell.activations
    assert [i.name for i in schema.inputs] == list(INPUTS[:len(schema.inputs)])
    assert len(cell.gate_activation) == len(cell.gates) == len(cell.recorded)
    if op == "LSTM":
        assert f"P[{''.join(PEEPHOLES)}]" in schema.doc


def test_activations_without_an_operator_default_to_identity_scaling():
    assert ACTIVATION_DEFAULTS["Affine"] == (1.0, 0.0) and ACTIVATION_DEFAULTS["ScaledTanh"] == (1.0, 1.0)


def test_cell_blocks_follow_the_stacking():
    gru = CELLS["GRU"]
    assert gru.block(0, 4) == (0, 4) and gru.block(2, 4) == (8, 12)
    assert gru.block(2, 4, half=1) == (20, 24)  # Rbh: after the three Wb blocks


@pytest.mark.parametrize("name", [n for n, (a, b) in ACTIVATION_DEFAULTS.items()
                                  if (a is not None or b is not None) and onnx.defs.has(n)])
def test_activation_defaults_are_those_of_the_operator_of_the_same_name(name):
    schema = onnx.defs.get_schema(name)
    alpha, beta = ACTIVATION_DEFAULTS[name]
    for key, value in (("alpha", alpha), ("beta", beta)):
        if value is not None:
            assert schema.attributes[key].default_value.f == pytest.approx(value)


def _body(n_in: int, n_out: int) -> onnx.GraphProto:
    return helper.make_graph([], "b", [helper.make_tensor_value_info(f"i{k}", TensorProto.FLOAT, None)
                                       for k in range(n_in)],
                             [helper.make_tensor_value_info(f"o{k}", TensorProto.FLOAT, None) for k in range(n_out)])


def test_loop_signature():
    loop = helper.make_node("Loop", ["M", "", "a", "b"], ["a_f", "b_f", "stack"], body=_body(4, 4))
    s = body_signature(loop, 21)
    assert (s.counter.name, s.cond_in.name, s.cond_in.outer, s.cond_out.name, s.max_trip_count) == \
        ("i0", "i1", "", "o0", "M")
    assert [(c.input.name, c.input.outer, c.output.name, c.output.outer) for c in s.carried] == \
        [("i2", "a", "o1", "a_f"), ("i3", "b", "o2", "b_f")]
    assert [(o.name, o.outer) for o in s.scan_outputs] == [("o3", "stack")]
    assert s.carried_pairs == ((0, 1), (1, 2), (2, 3)) and s.problems == ()
    short = helper.make_node("Loop", ["M", "", "a"], ["a_f"], body=_body(2, 2))
    assert body_signature(short, 21).problems[0] == "its body has 2 inputs, the node passes it 3"


def test_scan_signatures_at_opset_8_and_9():
    scan9 = helper.make_node("Scan", ["h", "x", "y"], ["h_f", "ys"], body=_body(3, 2), num_scan_inputs=2,
                             scan_input_axes=[1, -1], scan_input_directions=[0, 1], scan_output_directions=[1])
    s = body_signature(scan9, 9)
    assert [(c.input.outer, c.output.outer) for c in s.carried] == [("h", "h_f")]
    assert [(x.name, x.outer, x.axis, x.reverse) for x in s.scan_inputs] == [("i1", "x", 1, False),
                                                                               ("i2", "y", -1, True)]
    assert [(x.name, x.outer, x.axis, x.reverse) for x in s.scan_outputs] == [("o1", "ys", 0, True)]
    assert s.batch_axis is None and s.sequence_lens is None and s.problems == ()
    # Scan-8: sequence_lens first, inputs [batch, sequence, ...], `directions` per scan input
    scan8 = helper.make_node("Scan", ["", "h", "x"], ["h_f", "ys"], body=_body(2, 2), num_scan_inputs=1,
                             directions=[1])
    s = body_signature(scan8, 8)
    assert s.sequence_lens == "" and s.batch_axis == 0
    assert [(c.input.outer, c.output.outer) for c in s.carried] == [("h", "h_f")]
    assert [(x.outer, x.axis, x.reverse) for x in s.scan_inputs] == [("x", 1, True)]
    bad = helper.make_node("Scan", ["h", "x"], ["h_f", "ys"], body=_body(2, 2), num_scan_inputs=1,
                           scan_input_directions=[2])
    assert body_signature(bad, 11).problems == ("scan_input_directions [2] may only hold 0 or 1",)
    assert body_signature(helper.make_node("Scan", ["h"], ["h_f"], body=_body(1, 1)), 11).problems == \
        ("the required attribute num_scan_inputs is missing",)


def test_if_and_sequence_map_signatures():
    node = helper.make_node("If", ["c"], ["y"], then_branch=_body(0, 1), else_branch=_body(0, 2))
    assert [(r.name, r.outer) for r in body_signature(node, 21, "then_branch").results] == [("o0", "y")]
    assert body_signature(node, 21, "else_branch").problems == ("its else_branch has 2 outputs, the node needs 1",)
    no_cond = helper.make_node("If", [""], ["y"], then_branch=_body(0, 1), else_branch=_body(0, 1))
    assert body_signature(no_cond, 21, "then_branch").problems == ("the cond input is missing",)
    seqmap = helper.make_node("SequenceMap", ["s", "t"], ["out"], body=_body(2, 1))
    s = body_signature(seqmap, 21)
    assert [x.outer for x in s.scan_inputs] == ["s", "t"] and [x.outer for x in s.scan_outputs] == ["out"]
