"""The framework comparison as the app shows it (views/framework.py, views/framework_fix.py), on real exports with
planted faults and their stored captures: the module rows coloured own error apart from carried, the departing
nodes' fills, a clicked node back to its module, a module's ONNX node, iteration and source line; what a fix
changed, judged against the clean export the fault was planted in, and its before/after drawing."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import explorer
from explorer.bridge import captured_side, compare_framework
from explorer.bridge.fix import fixed_model
from explorer.views import framework, styles
from explorer.views.framework_fix import change_rows, fix_changes, fix_drawings

BRIDGE = Path(__file__).resolve().parents[1] / "models" / "bridge"


def compared(fault: str, capture: str):
    return compare_framework(explorer.load(BRIDGE / "faults" / f"{fault}.onnx"), captured_side(BRIDGE / f"{capture}.npz"))


def fixed(fault: str, capture: str):
    model = explorer.load(BRIDGE / "faults" / f"{fault}.onnx")
    report, data = fixed_model(model, captured_side(BRIDGE / f"{capture}.npz"), None)
    assert data is not None
    return model, explorer.load(data), report


def test_rows_colour_the_cause_apart_from_the_modules_that_carry_its_error():
    result = compared("ts_tagger_gru_lbr", "tagger")
    rows, fills = framework.module_rows(result), framework.row_fills(result)
    by_label = {row["module"].strip(): (row, fill) for row, fill in zip(rows, fills)}
    assert by_label["gru layer 1"][0]["status"] == "own error"
    assert by_label["gru layer 1"][1] == styles.MODULE_STATUS["own error"][0]
    assert by_label["lstm"][1] == by_label["norm"][1] == styles.MODULE_STATUS["carried"][0]
    assert by_label["embed"][1] == styles.MODULE_STATUS["agrees"][0]
    assert by_label["gru output 1"][1] == styles.MODULE_STATUS["unaligned"][0]
    assert len(set(fills)) == 4  # own error, carried, agrees, unaligned
    assert [status for status, _, _ in framework.status_legend(result)] == ["own error", "carried", "agrees",
                                                                             "unaligned"]


def test_the_cause_is_picked_first_and_a_clicked_node_finds_its_module():
    result = compared("ts_tagger_gru_lbr", "tagger")
    first = framework.first_pick(result)
    assert result.checks[first].point.label == "gru layer 1"
    assert framework.cause_nodes(result) == ["/gru/GRU_1"]
    assert result.checks[framework.row_of_node(result, "/lstm/LSTM")].point.label == "lstm layer 0"
    assert framework.row_of_node(result, "/gru/Transpose") is None  # no module value computed there
    values = framework.error_values(result)
    assert set(values.values) >= {"/gru/GRU_1", "/lstm/LSTM", "/norm/LayerNormalization"}
    assert "/embed/Gather" not in values.values  # it agrees: unfilled
    lines = framework.point_lines(result.checks[first])
    assert lines[0] == "gru layer 1 is ONNX node /gru/GRU_1 (value /gru/GRU_1_output_0)"
    assert lines[1].startswith("own error: error 0.353, own error 0.353, handed 5.96e-08; departs first at step 0, "
                               "direction 0, gate h")
    assert lines[-1] == "source: make_bridge_models.py:44"


def test_a_module_called_in_a_loop_body_names_its_iteration():
    result = compared("ts_loop_gru_cell_gates", "loop_gru")
    cause = result.checks[framework.first_pick(result)]
    assert cause.point.onnx_node.startswith("/Loop/body/")
    assert framework.iteration_text(cause) == "(0,)"
    assert "at loop iteration (0,)" in framework.point_lines(cause)[0]


def test_the_changes_of_a_gate_order_fix_give_back_the_clean_exports_weights():
    model, after, report = fixed("ts_tagger_gru_gates", "tagger")
    assert report.complete
    changes = fix_changes(model, after)
    assert {c.node for c in changes} == {"/gru/GRU"}
    assert [c.what for c in changes] == ["weight W (onnx::GRU_446)", "weight R (onnx::GRU_447)",
                                         "weight B (onnx::GRU_445)"]
    clean = {t.name: numpy_helper.to_array(t) for t in onnx.load(BRIDGE / "ts_tagger.onnx").graph.initializer}
    stored = {t.name: numpy_helper.to_array(t) for t in onnx.load_from_string(after.proto.SerializeToString()).graph.initializer}
    faulty = {t.name: numpy_helper.to_array(t) for t in onnx.load(BRIDGE / "faults" / "ts_tagger_gru_gates.onnx").graph.initializer}
    for change in changes:
        name = change.what.split("(", 1)[1].rstrip(")")
        np.testing.assert_array_equal(stored[name], clean[name])
        differ = int((faulty[name] != clean[name]).sum())
        assert change.after.startswith(f"{differ} of {clean[name].size} values changed")


def test_an_attribute_fix_and_a_rewired_input_are_named():
    model, after, _ = fixed("ts_tagger_gru_lbr", "tagger")
    assert change_rows(fix_changes(model, after)) == [{"ONNX node": "/gru/GRU_1", "op": "GRU",
                                                       "what": "attribute linear_before_reset", "before": "0",
                                                       "after": "1"}]
    model, after, _ = fixed("dynamo_cells_step_bias", "cells")
    rewired = [c for c in fix_changes(model, after) if c.what.startswith("input")]
    assert [(c.what, c.before, c.after) for c in rewired] == [("input C", "gcell.bias_ih_step2", "gcell.bias_ih")]


@pytest.mark.parametrize("fault,capture", [("ts_tagger_gru_lbr", "tagger"), ("ts_loop_gru_cell_gates", "loop_gru")])
def test_the_fix_is_drawn_before_and_after_with_its_nodes_marked(fault, capture):
    model, after, _ = fixed(fault, capture)
    changes = fix_changes(model, after)
    before, fixed_drawing = fix_drawings(model, after, changes)
    removed, added = styles.NODE_STATES["removed"]["color"], styles.NODE_STATES["added"]["color"]
    for change in changes:
        was, now = box_line(before, change.node), box_line(fixed_drawing, change.node)
        assert f'color="{removed}"' in was and "dashed" in was
        assert f'color="{added}"' in now and "bold" in now


def box_line(drawing, node: str) -> str:
    """The DOT statement of the box standing for `node` (its own box, or the header of its expanded body)."""
    box = drawing.box_for(node)
    assert box is not None
    return next(line for line in drawing.dot.splitlines() if line.strip().startswith(f'"{box}" ['))
