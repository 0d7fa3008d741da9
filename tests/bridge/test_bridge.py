"""An export against the PyTorch model it came from, read from the framework's stored captures (CI has no torch):
real TorchScript and dynamo exports (tests/models/bridge, made by make_bridge_models.py), clean and with planted
faults. Each fault is found at its module (layer, call, step, gate), with its own error above what it was handed
and the line of the recipe that calls the module; each gets its fix, which explorer writes and proves, and which
onnxruntime confirms against PyTorch's own output."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import numpy_helper

import explorer
from explorer.bridge import captured_side, compare_framework, fix, load_captured
from explorer.bridge.layouts import fitting_layout, recurrent_y
from explorer.cli import main
from explorer.files.atomic_write import WriteRefused

HERE = Path(__file__).resolve().parents[1] / "models" / "bridge"
RECIPE = (HERE / "make_bridge_models.py").read_text().splitlines()
CLEAN = ["ts_tagger", "dynamo_tagger", "ts_cells", "dynamo_cells", "ts_conv_gru", "dynamo_conv_gru", "ts_block",
         "dynamo_block", "ts_elman", "dynamo_branches", "ts_loop_gru", "dynamo_scan_gru", "tf2onnx_keras_tagger",
         "tf2onnx_keras_conv", "tf2onnx_keras_masked"]


def _line(text: str, after: str) -> str:
    """make_bridge_models.py:N of the first line holding `text` after the line holding `after`."""
    start = next(k for k, line in enumerate(RECIPE) if after in line)
    number = next(k for k in range(start, len(RECIPE)) if text in RECIPE[k]) + 1
    return f"make_bridge_models.py:{number}"


def _keras_line(fault: str, module: str) -> str:
    """make_keras_models.py:N of the line that makes the fault's layer in its model's function."""
    model = next(m for m in ("keras_tagger", "keras_conv", "keras_masked") if fault.startswith(m))
    lines = (HERE / "make_keras_models.py").read_text().splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"def {model}(")))
    text = f'name="{module.split(".")[0]}"'
    return f"make_keras_models.py:{next(k for k in range(start, len(lines)) if text in lines[k]) + 1}"


def _capture(name: str) -> Path:
    return HERE / f"{re.sub('^(ts|dynamo|tf2onnx)_', '', name).split('.')[0]}.npz"


MODELS = ("conv_gru", "tagger", "cells", "block", "elman", "branches", "loop_gru", "scan_gru", "keras_tagger", "keras_conv",
          "keras_masked")


# fault -> (module, layer, call, step, gate)
FAULTS = {
    "tagger_gru_gates": ("gru", 0, 0, 0, "z"),
    "tagger_gru_lbr": ("gru", 1, 0, 0, "h"),
    "tagger_gru_directions": ("gru", 0, 0, 0, None),
    "tagger_gru_bias_halves": ("gru", 1, 0, 0, "h"),
    "tagger_lstm_if": ("lstm", 0, 0, 0, "i"),
    "tagger_layernorm_eps": ("norm", None, 0, None, None),
    "cells_step_bias": ("gcell", None, 2, 2, None),
    "cells_cell_gates": ("gcell", None, 0, 0, None),
    "conv_gru_gru_gates": ("gru", 0, 0, 0, "z"),
    "conv_gru_gru_lbr": ("gru", 1, 0, 0, "h"),
    "block_layernorm_eps": ("norm1", None, 0, None, None),
    "elman_loop_weight": ("hh", None, 1, 1, None),  # h starts at zero: the weight shows from step 1 on
    "elman_ih_weight": ("ih", None, 0, 0, None),
    # a GRU cell written out (two Linear) in a scripted Loop's body
    "loop_gru_cell_gates": ("cell.ih", None, 0, 0, "z"),
    "loop_gru_cell_biases": ("cell.ih", None, 0, 0, "h"),
    "loop_gru_proj_bias": ("proj", None, 0, 0, None),
    # the same cell with its reset gate applied before the recurrent product: the candidate h departs first
    "loop_gru_reset_before": ("cell", None, 0, 0, "h"),
    # an nn.GRUCell in torch.scan's body (a Scan)
    "scan_gru_cell_gates": ("cell", None, 0, 0, "z"),
    "scan_gru_reset_before": ("cell", None, 0, 0, "h"),
    "branches_branch_bias": ("calm", None, 0, None, None),
    # Keras (tf2onnx): its LSTM as an operator, its GRUs as Loops
    "keras_tagger_lstm_if": ("lstm", 0, 0, 0, None),
    "keras_tagger_loop_constant": ("bigru.forward_gru", None, 0, 0, None),
    "keras_conv_loop_constant": ("gru", None, 0, 0, None),
    # its GRU (reset_after=False) written resetting after the product: h starts at zero, so it shows from step 1
    "keras_conv_gru_reset_after": ("gru", None, 0, 1, "h"),
    "keras_conv_gru_reset_after_cut": ("gru", None, 0, 1, "h"),  # r times a third of one product of h
    "keras_tagger_gru_gates": ("bigru.forward_gru", None, 0, 0, "z"),
    "keras_tagger_gru_directions": ("bigru.forward_gru", None, 0, 0, None),
    "keras_tagger_gru_bias_halves": ("bigru.forward_gru", None, 0, 0, "h"),
    # the forward GRU (reset_after=True) written resetting the state before the product, tf2onnx's other form
    "keras_tagger_gru_reset_before": ("bigru.forward_gru", None, 0, 0, "h"),
    "keras_masked_lstm_if": ("lstm", None, 0, 0, "i"),  # an LSTM behind a Masking layer, written as a Loop
}
SOURCES = {"gru": ("self.gru(", "class Tagger"), "lstm": ("self.lstm(", "class Tagger"),
           "norm": ("self.norm(", "class Tagger"), "gcell": ("self.gcell(", "class Cells"),
           "norm1": ("self.norm1(", "class Block"), "hh": ("self.hh(", "class Elman"),
           "calm": ("torch.cond(", "class Branches"), "ih": ("self.ih(", "class Elman"),
           "proj": ("self.cell(self.proj(", "class LoopGru"), "cell.ih": ("self.ih(x)", "class GruCell"),
           "cell": ("self.cell(self.proj(", "class LoopGru"), "scan_gru:cell": ("self.cell(xt, h)", "class ScanGru")}
LOOPED = {"elman_loop_weight", "elman_ih_weight", "loop_gru_cell_gates", "loop_gru_cell_biases", "loop_gru_proj_bias",
          "loop_gru_reset_before", "scan_gru_cell_gates", "scan_gru_reset_before"}
EXPORTERS = {"elman_loop_weight": ("ts",), "elman_ih_weight": ("ts",), "branches_branch_bias": ("dynamo",),
             "loop_gru_cell_gates": ("ts",), "loop_gru_cell_biases": ("ts",), "loop_gru_proj_bias": ("ts",),
             "loop_gru_reset_before": ("ts",), "scan_gru_cell_gates": ("dynamo",),
             "scan_gru_reset_before": ("dynamo",),
             # scripted Loops; torch.cond
             "keras_tagger_lstm_if": ("tf2onnx",), "keras_tagger_loop_constant": ("tf2onnx",),
             "keras_conv_loop_constant": ("tf2onnx",), "keras_conv_gru_reset_after": ("tf2onnx",),
             "keras_tagger_gru_reset_before": ("tf2onnx",),
             "keras_conv_gru_reset_after_cut": ("tf2onnx",), "keras_tagger_gru_gates": ("tf2onnx",),
             "keras_tagger_gru_directions": ("tf2onnx",), "keras_tagger_gru_bias_halves": ("tf2onnx",),
             "keras_masked_lstm_if": ("tf2onnx",)}
CASES = [(exporter, fault) for fault in FAULTS for exporter in EXPORTERS.get(fault, ("ts", "dynamo"))]
UNFIXABLE = {"elman_loop_weight", "branches_branch_bias", "elman_ih_weight", "loop_gru_proj_bias",  # no variant
             "keras_tagger_loop_constant", "keras_conv_loop_constant"}  # a constant inside a Loop's body


def _model(exporter: str, fault: str) -> Path:
    return HERE / "faults" / f"{exporter}_{fault}.onnx"


def _capture_of_fault(fault: str) -> Path:
    return HERE / f"{next(m for m in MODELS if fault.startswith(m + '_'))}.npz"


@pytest.mark.parametrize("name", CLEAN)
def test_a_clean_export_agrees_with_every_module_aligned_or_explained(name):
    result = compare_framework(HERE / f"{name}.onnx", captured_side(_capture(name)))
    assert result.agree and result.first is None and not result.diagnosis
    aligned, leaves = result.leaf_coverage()
    assert aligned == leaves >= 1  # fewer than 10 leaf modules: every one
    assert all(c.status == "agrees" for c in result.checks if c.point.aligned)
    explained = ("may not use it", "its one layer is the module's output")
    unexplained = [c.point.label for c in result.checks
                   if not c.point.aligned and not any(e in c.point.reason for e in explained)]
    assert not unexplained  # only values the model never uses (an RNN's final state), or a layer that is its module


def test_scopes_are_read_from_what_each_exporter_wrote():
    ts = compare_framework(HERE / "ts_cells.onnx", captured_side(HERE / "cells.npz"))
    dynamo = compare_framework(HERE / "dynamo_cells.onnx", captured_side(HERE / "cells.npz"))
    assert (ts.scopes_from, dynamo.scopes_from) == ("TorchScript names", "dynamo metadata")
    for result in (ts, dynamo):  # a cell called once per step: each call its own point, in the framework's order
        calls = [c.point.call for c in result.checks if c.point.module == "gcell"]
        assert calls == [0, 1, 2, 3]
        assert all(c.point.aligned for c in result.checks if c.point.module == "gcell")
    by_label = {c.point.label: c.point.onnx_value for c in ts.checks}
    assert by_label["gcell (call 2)"] == "/gcell_2/Add_3_output_0"
    assert by_label["lcell"] == "/lcell/Mul_2_output_0" and by_label["lcell output 1"] == "/lcell/Add_1_output_0"


@pytest.mark.parametrize(("exporter", "fault"), CASES)
def test_a_planted_fault_is_found_at_its_module_with_its_own_error_and_source_line(exporter, fault):
    module, layer, call, step, gate = FAULTS[fault]
    result = compare_framework(_model(exporter, fault), captured_side(_capture_of_fault(fault)))
    assert result.differs and not result.agree
    first = result.first
    assert first is not None and first.status == "own error"
    assert (first.point.module, first.point.call) == (module, call)
    assert (first.point.index if first.point.kind == "layer_out" else None) == layer
    assert first.where.step == step
    assert first.where.iteration == ((call,) if fault in LOOPED else None)  # the Loop's iteration
    if gate is not None:
        assert first.where.gate == gate
    assert first.own is not None and first.own.max_abs > 1e-3 > first.handed
    if exporter == "tf2onnx":  # the line of the Keras recipe that made the layer
        assert first.source == _keras_line(fault, module)
    else:
        text, after = SOURCES.get(f"{_capture_of_fault(fault).stem}:{module}", SOURCES[module])
        assert first.source == _line(text, "class ConvGru" if fault.startswith("conv_gru") else after)
    after = result.checks[result.checks.index(first) + 1:]
    departing = [c for c in after if c.departs]
    # the rest only carry its error (or are the same module again, reading the same weight at a later step; or
    # hold it inside a body they run, where the two cannot be told apart)
    # a cell's fix mends its two Linear layers; a Bidirectional's, both directions
    family = "cell" if fault.startswith("loop_gru_cell") else "bigru" if fault.startswith("keras_tagger_gru") \
        else module
    assert departing and all(c.status in ("carried", "unknown") or c.point.module.startswith(family)
                             for c in departing)
    assert any(c.status == "carried" for c in departing) or fault in UNFIXABLE
    doc = result.to_json()
    assert doc["agree"] is False and doc["first"]["module"] == module and doc["first"]["step"] == step
    assert doc["first"]["own_error"] > doc["first"]["carried_error"]
    assert doc["first"]["source"] == first.source and doc["first"]["onnx_node"] == first.point.onnx_node


@pytest.mark.parametrize(("exporter", "fault"), [c for c in CASES if c[1] not in UNFIXABLE])
def test_each_fault_is_fixed_and_the_fix_proven(tmp_path, exporter, fault):
    captured = _capture_of_fault(fault)
    target = tmp_path / "fixed.onnx"
    report = fix(_model(exporter, fault), captured_side(captured), None, target)
    assert report.complete and report.written == str(target)
    assert [o.finding.fix for o in report.outcomes if o.finding.fix]
    again = compare_framework(target, captured_side(captured))
    assert again.agree
    stored = load_captured(captured)
    session = onnxruntime.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    got = session.run(None, dict(zip(names, stored.inputs)))[0]  # onnxruntime's word against PyTorch's output
    np.testing.assert_allclose(got, stored.outputs("")[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("exporter", "fault"), [c for c in CASES if c[1] in UNFIXABLE])
def test_a_fault_without_a_fix_is_reported_and_never_applied(tmp_path, exporter, fault):
    target = tmp_path / "fixed.onnx"
    report = fix(_model(exporter, fault), captured_side(_capture_of_fault(fault)), None, target)
    assert not report.complete and report.written is None and not target.exists()
    (outcome,) = report.outcomes
    assert outcome.finding.module == FAULTS[fault][0] and outcome.finding.fix is None and not outcome.applied


@pytest.mark.parametrize(("fault", "carrier"), [("elman_ih_weight", "hh"), ("loop_gru_proj_bias", "cell")])
def test_inside_a_loop_a_module_handed_a_departing_state_only_carries_its_error(fault, carrier):
    """The state a Loop's body carries from one step to the next is put back as the framework had it at that step:
    a module reading a state that departed at the step before departs too, making no error of its own."""
    result = compare_framework(_model("ts", fault), captured_side(_capture_of_fault(fault)))
    handed = [c for c in result.checks if c.point.module.startswith(carrier) and c.departs]
    assert {c.point.call for c in handed} >= {1, 2, 3, 4}  # every step after the first reads a departing state
    for c in handed:
        assert c.status == "carried" and c.own is not None and c.own.ok and c.handed > 1e-3, c.point.label
    (finding,) = result.diagnosis  # the one cause, no second finding at the state's reader
    assert finding.module == FAULTS[fault][0]


def test_a_masked_keras_lstm_is_compared_with_its_mask_and_its_source_line():
    captured = load_captured(HERE / "keras_masked.npz")
    x, mask = captured.inputs[0], captured.values[("in", "lstm", 0, 1)]
    np.testing.assert_array_equal(mask, np.any(x != 0, axis=-1))  # Keras's mask: the steps not all zeros
    y = captured.outputs("lstm")[0]
    np.testing.assert_array_equal(y[0, 4:], np.broadcast_to(y[0, 3], (2, 4)))  # padding keeps the last output
    np.testing.assert_array_equal(y[1, 2], y[1, 1])
    result = compare_framework(HERE / "tf2onnx_keras_masked.onnx", captured_side(captured))
    assert result.agree and result.leaf_coverage() == (3, 3)
    sources = {m["module"]: m["source"] for m in result.to_json()["modules"]}
    assert sources["lstm"] == _keras_line("keras_masked", "lstm") != sources["mask"] == _keras_line("keras_masked",
                                                                                                   "mask")


def test_recurrent_findings_name_the_exporter_mistake():
    texts = {}
    for fault in ("tagger_gru_lbr", "tagger_gru_directions", "tagger_gru_bias_halves", "tagger_lstm_if",
                  "tagger_gru_gates"):
        result = compare_framework(_model("ts", fault), captured_side(HERE / "tagger.npz"))
        (finding,) = result.diagnosis
        texts[fault] = (finding.finding, finding.fix)
    assert "linear_before_reset=0" in texts["tagger_gru_lbr"][0]
    assert texts["tagger_gru_lbr"][1] == "set linear_before_reset=1"
    assert "directions" in texts["tagger_gru_directions"][1]
    assert "halves of B" in texts["tagger_gru_bias_halves"][1]
    assert "foic" in texts["tagger_lstm_if"][1] and "rzh" in texts["tagger_gru_gates"][1]


def test_an_unrolled_cell_gets_its_weights_gate_order_fitted():
    result = compare_framework(_model("dynamo", "cells_cell_gates"), captured_side(HERE / "cells.npz"))
    (finding,) = result.diagnosis
    assert finding.module == "gcell" and finding.fix == "reorder the gate blocks of weight_ih, weight_hh, " \
        "bias_ih, bias_hh as zrn"
    assert sorted(finding.replace) == ["gcell.bias_hh", "gcell.bias_ih", "gcell.weight_hh", "gcell.weight_ih"]


@pytest.mark.parametrize(("fault", "fix_text"), [
    ("loop_gru_cell_gates", "reorder the gate blocks of cell.ih.weight, cell.hh.weight, cell.ih.bias, cell.hh.bias as zrn"),
    ("loop_gru_cell_biases", "swap cell.ih.bias and cell.hh.bias")])
def test_a_cell_in_a_loops_body_gets_the_weights_its_body_reads_fitted_and_rewritten(tmp_path, fault, fix_text):
    result = compare_framework(_model("ts", fault), captured_side(HERE / "loop_gru.npz"))
    (finding,) = result.diagnosis  # one finding for the cell, though both its Linear layers depart
    assert finding.fix == fix_text and finding.finding.startswith("GRU written as a loop ('/Loop')")
    assert {path for path, _ in finding.weights} == {"/Loop/body//cell/ih/Gemm", "/Loop/body//cell/hh/Gemm"}
    report = fix(_model("ts", fault), captured_side(HERE / "loop_gru.npz"), None, tmp_path / "fixed.onnx")
    assert report.complete
    fixed, clean = (onnx.load(str(path)) for path in (tmp_path / "fixed.onnx", HERE / "ts_loop_gru.onnx"))
    stored = {t.name: numpy_helper.to_array(t) for t in clean.graph.initializer}
    for t in fixed.graph.initializer:  # rewritten in place: the export's own weights again
        np.testing.assert_array_equal(numpy_helper.to_array(t), stored[t.name])


def _body_ops(path: Path) -> list[str]:
    loop = next(n for n in onnx.load(str(path)).graph.node if n.op_type in ("Loop", "Scan"))
    return [n.op_type for n in next(a.g for a in loop.attribute if a.name == "body").node]


@pytest.mark.parametrize(("exporter", "fault", "form", "framework_resets"), [
    ("ts", "loop_gru_reset_before", "loop", "after"), ("dynamo", "scan_gru_reset_before", "scan", "after"),
    ("tf2onnx", "keras_tagger_gru_reset_before", "loop", "after"),
    ("tf2onnx", "keras_conv_gru_reset_after", "loop", "before"),
    ("tf2onnx", "keras_conv_gru_reset_after_cut", "loop", "before")])
def test_a_loop_form_gru_with_its_reset_gate_misplaced_gets_its_body_rewritten(tmp_path, exporter, fault, form,
                                                                               framework_resets):
    """linear_before_reset is the body's structure in a loop-form GRU: PyTorch computes (W x + b) + r * (R h + Rb)
    where the export computes (W x + b) + R (r * h) + Rb, and Keras's reset_after=False GRU the other way round;
    the fix moves the reset gate's Mul to the other side of the candidate's product."""
    captured = _capture_of_fault(fault)
    model = _model(exporter, fault)
    result = compare_framework(model, captured_side(captured))
    (finding,) = result.diagnosis
    written = "linear_before_reset=0" if framework_resets == "after" else "linear_before_reset=1"
    assert finding.finding.startswith(f"GRU written as a {form}") and f"{written} written out" in finding.finding
    assert finding.fix.startswith(f"move the reset gate {framework_resets} the candidate's recurrent product")
    module, _, _, step, gate = FAULTS[fault]
    first = result.to_json()["first"]
    assert (first["module"], first["step"], first["gate"]) == (module, step, gate)
    target = tmp_path / "fixed.onnx"
    report = fix(model, captured_side(captured), None, target)
    assert report.complete and [o.proven for o in report.outcomes] == [True]
    # the body's nodes moved, none added or removed: the reset gate's Mul reads the product, or the product it;
    # where the export cuts the candidate out of one product for every gate, r * h gets a copy of that product
    (move,) = finding.body
    added = [ref.op_type for ref in map(explorer.load(model).node, move.chain)] if move.copied else \
        ["Add"] if move.outside else []  # the input's part a Gemm added as its C, added after r instead
    assert sorted(_body_ops(target)) == sorted(_body_ops(model) + added)
    body = next(a.g for n in onnx.load(str(target)).graph.node if n.op_type in ("Loop", "Scan")
                for a in n.attribute if a.name == "body")
    made = {o: n for n in body.node for o in n.output}
    reset = next(n for n in body.node if n.name == explorer.load(model).node(move.reset).proto.name)
    readers = [n for n in body.node if reset.output[0] in n.input]
    if framework_resets == "after":
        assert made[reset.input[1]].name == explorer.load(model).node(move.chain[-1]).proto.name
    else:
        assert reset.input[1] == move.state
        assert [n.op_type for n in readers] == [explorer.load(model).node(move.chain[0]).op_type]
    # onnxruntime: the fixed model gives the framework's output, and the clean export's on other inputs too
    stored = load_captured(captured)
    clean = HERE / f"{exporter}_{captured.stem}.onnx"
    sessions = [onnxruntime.InferenceSession(str(p), providers=["CPUExecutionProvider"]) for p in (target, clean)]
    np.testing.assert_allclose(sessions[0].run(None, {"x": stored.inputs[0]})[0], stored.outputs("")[0], rtol=1e-5,
                               atol=1e-6)
    other = np.random.default_rng(11).standard_normal(stored.inputs[0].shape).astype(np.float32) * 2
    fixed_y, clean_y = (s.run(None, {"x": other})[0] for s in sessions)
    np.testing.assert_allclose(fixed_y, clean_y, rtol=1e-5, atol=1e-6)


def test_a_scan_form_export_is_aligned_per_step_from_dynamos_scopes():
    """dynamo writes no module scope inside torch.scan's body: the nodes reading the cell's parameters are the
    cell's, the body's other nodes take the scope of what they read, and call k is the Scan's iteration k."""
    result = compare_framework(HERE / "dynamo_scan_gru.onnx", captured_side(HERE / "scan_gru.npz"))
    cells = [c for c in result.checks if c.point.module == "cell"]
    assert [c.point.iteration for c in cells] == [(k,) for k in range(5)]
    assert all(c.point.onnx_node.startswith("node_scan__1/body/") and c.status == "agrees" for c in cells)
    assert result.leaf_coverage() == (2, 2)


def test_compare_and_fix_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "out.json"
    model = _model("dynamo", "tagger_gru_lbr")
    code = main(["compare", str(model), "--captured", str(HERE / "tagger.npz"), "--json", str(out)])
    assert code == 1
    doc = json.loads(out.read_text())
    assert doc["first"]["module"] == "gru" and doc["first"]["gate"] == "h" and doc["first"]["layer"] == 1
    assert doc["diagnosis"][0]["fix"] == "set linear_before_reset=1"
    assert {"agree", "first", "aligned", "unaligned", "diagnosis"} <= set(doc)
    assert main(["compare", str(HERE / "ts_tagger.onnx"), "--captured", str(HERE / "tagger.npz")]) == 0
    fixed = tmp_path / "fixed.onnx"
    assert main(["fix", str(model), "--captured", str(HERE / "tagger.npz"), "-o", str(fixed)]) == 0
    assert main(["compare", str(fixed), "--captured", str(HERE / "tagger.npz")]) == 0
    capsys.readouterr()
    # a finding without a fix: nothing written, exit 1
    assert main(["fix", str(HERE / "ts_tagger.onnx"), "--captured", str(HERE / "tagger.npz"), "-o",
                 str(tmp_path / "none.onnx")]) == 1
    assert not (tmp_path / "none.onnx").exists()


def test_the_json_document_gives_each_module_its_source_and_its_own_and_carried_error(tmp_path):
    out = tmp_path / "out.json"
    assert main(["compare", str(_model("ts", "tagger_gru_lbr")), "--captured", str(HERE / "tagger.npz"), "--json",
                 str(out)]) == 1
    doc = json.loads(out.read_text())
    modules = {m["module"]: m for m in doc["modules"]}
    assert list(modules) == ["embed", "gru", "lstm", "norm", "head", ""]  # the framework's order
    gru, lstm = modules["gru"], modules["lstm"]
    assert gru["source"] == _line("self.gru(", "class Tagger") and gru["status"] == "own error"
    assert gru["own_error"] > 1e-3 > modules["embed"]["error"] and gru["points"] == 4  # two layers, two outputs
    assert lstm["status"] == "carried" and lstm["carried_error"] > 1e-3 > lstm["own_error"]
    assert modules["embed"]["status"] == "agrees" and modules["embed"]["own_error"] is None
    layer1 = next(p for p in doc["points"] if p["point"] == "gru layer 1")
    assert (layer1["module"], layer1["layer"], layer1["call"], layer1["gate"]) == ("gru", 1, 0, "h")
    assert layer1["source"] == gru["source"] and layer1["onnx_node"] == doc["first"]["onnx_node"]
    assert layer1["own_error"] == doc["first"]["own_error"] and layer1["carried_error"] == doc["first"]["carried_error"]


def test_fix_never_writes_over_the_loaded_model(tmp_path):
    copy = tmp_path / "m.onnx"
    copy.write_bytes(_model("ts", "tagger_gru_lbr").read_bytes())
    before = copy.read_bytes()
    with pytest.raises(WriteRefused):
        fix(explorer.load(copy), captured_side(HERE / "tagger.npz"), None, copy)
    assert copy.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


def test_layouts_undo_and_redo_the_exporters_axes():
    rng = np.random.default_rng(0)
    y = rng.standard_normal((6, 2, 3, 5))  # [seq, directions, batch, hidden]
    for batch_first in (True, False):
        layout = recurrent_y(batch_first, 0, y.shape)
        framework = layout.to_framework(y)
        assert framework.shape == ((3, 6, 10) if batch_first else (6, 3, 10))
        # PyTorch's output concatenates the directions' features: forward first
        step = framework[1] if batch_first else framework[:, 1]
        np.testing.assert_array_equal(step[2, :5], y[2, 0, 1]) if batch_first else \
            np.testing.assert_array_equal(step[2, 5:], y[2, 1, 1])
        np.testing.assert_array_equal(layout.to_onnx(framework, y.shape), y)
    swapped = fitting_layout((6, 2, 10), (2, 6, 10))
    assert swapped is not None and swapped.perm == (1, 0, 2)
    assert fitting_layout((1, 2, 4), (2, 4)).shape == (2, 4) and fitting_layout((3, 4), (5, 4)) is None


def test_a_projected_lstm_is_said_plainly():
    captured = load_captured(HERE / "tagger.npz")
    captured.modules["lstm"].recurrent["proj_size"] = 2  # as the capture of nn.LSTM(..., proj_size=2) records it
    result = compare_framework(HERE / "ts_tagger.onnx", captured_side(captured))
    assert any("proj_size=2" in note and "does not export" in note for note in result.notes)
    assert result.to_json()["notes"] == result.notes and result.notes[0] in result.lines()
