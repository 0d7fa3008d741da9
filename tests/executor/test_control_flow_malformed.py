"""Malformed control-flow nodes stop with an ExecutionError naming the node and the problem, before any body
runs; onnxruntime refuses the same models."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import explorer
from tests.support import control_flow_models as cf
from tests.support.control_flow_models import I64, B, F, graph, node, seq_vi, vi


def _loop(body_inputs: int, body_outputs: int) -> object:
    names_in = ["i", "cond_in", "x_in", "extra_in"][:body_inputs]
    types_in = [vi("i", I64, []), vi("cond_in", B, []), vi("x_in", F, [2]), vi("extra_in", F, [2])][:body_inputs]
    body = graph([node("Identity", ["cond_in"], ["cond_out"]), node("Neg", [names_in[-1]], ["x_out"]),
                  node("Abs", [names_in[-1]], ["y"])], "body", types_in,
                 [vi("cond_out", B, []), vi("x_out", F, [2]), vi("y", F, [2])][:body_outputs])
    main = graph([node("Loop", ["M", "", "x"], ["x_final"], name="loop", body=body)], "malformed_loop",
                 [vi("M", I64, []), vi("x", F, [2])], [vi("x_final", F, [2])])
    return cf.model(main)


def _assert_refused(proto, feeds: dict, node_path: str, message: str) -> None:
    with pytest.raises(explorer.ExecutionError) as info:
        explorer.run(explorer.load(proto), feeds)
    assert info.value.node == node_path and f"node {node_path!r}" in str(info.value)
    assert message in str(info.value), str(info.value)
    assert not info.value.trace.events  # refused before anything ran
    with pytest.raises(Exception):  # noqa: B017 - onnxruntime refuses it in its own words
        cf.ort_run(proto, feeds)


LOOP_FEEDS = {"M": np.array(2, np.int64), "x": np.ones(2, np.float32)}


def test_loop_body_with_an_extra_input():
    _assert_refused(_loop(4, 2), LOOP_FEEDS, "loop", "its body has 4 inputs, the node passes it 3")


def test_loop_body_without_its_carried_output():
    _assert_refused(_loop(3, 1), LOOP_FEEDS, "loop", "its body has 1 outputs, the node needs 2")


def test_loop_body_output_the_node_does_not_declare():
    _assert_refused(_loop(3, 3), LOOP_FEEDS, "loop", "its body has 3 outputs, the node needs 2")


def test_loop_node_declaring_fewer_outputs_than_carried_values():
    proto = _loop(4, 2)
    loop = proto.graph.node[0]
    loop.input.append("x")  # two carried values, one declared output
    _assert_refused(proto, LOOP_FEEDS, "loop", "it declares 1 outputs for 2 carried values")


def test_sequence_map_body_output_count():
    body = graph([node("Neg", ["e"], ["n"]), node("Abs", ["e"], ["a"])], "body", [vi("e", F, None)],
                 [vi("n", F, None), vi("a", F, None)])
    main = graph([node("SequenceMap", ["s"], ["ns"], name="map", body=body)], "malformed_map",
                 [seq_vi("s", F, None)], [seq_vi("ns", F, None)])
    _assert_refused(cf.model(main, 17), {"s": [np.ones(2, np.float32)]}, "map",
                    "its body has 2 outputs, the node needs 1")


def test_scan8_direction_values():
    proto = cf.scan8(1, 1, 1)
    next(n for n in proto.graph.node if n.op_type == "Scan").attribute.extend(
        [helper.make_attribute("directions", [2])])
    feeds = {"S0": np.zeros((1, 3), np.float32), "X0": np.ones((1, 2, 3), np.float32)}
    _assert_refused(proto, feeds, "scan", "directions [2] may only hold 0 or 1")


@pytest.mark.parametrize("count", [0, 3])
def test_scan_num_scan_inputs_out_of_range(count):
    proto = cf.scan9(1, 1, 1)
    scan = next(n for n in proto.graph.node if n.op_type == "Scan")
    next(a for a in scan.attribute if a.name == "num_scan_inputs").i = count
    feeds = {"S0": np.zeros((2, 3), np.float32), "X0": np.ones((4, 2, 3), np.float32)}
    _assert_refused(proto, feeds, "scan", f"num_scan_inputs={count} for 2 inputs")
