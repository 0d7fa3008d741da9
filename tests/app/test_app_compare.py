"""The Compare page driven with AppTest: B chosen as onnxruntime, another model, reference values and PyTorch's
equations; the first divergence, the lockstep cursor, error over iterations and the gates of both sides."""
import io
from pathlib import Path

import numpy as np
import onnx
import pytest
from streamlit.testing.v1 import AppTest

import explorer
from explorer.inputs.samples import sample_inputs, sample_path
from explorer.ui import state
from tests.support.apptest import (
    SVG,
    chart_titles,
    diagram_args,
    figures,
    interactive,
    open_tab,
    record_tables,
    start,
)
from tests.support.compare_models import exported_rnn, torch_parameters

PAGE = "explorer/ui/pages/compare.py"


def compare_page(path: str | None = None) -> AppTest:
    at = start(timeout=120)
    if path is not None:
        at.radio(key="w_source").set_value("Local path").run()
        at.text_input(key="w_path").input(path).run()
    return at.switch_page(PAGE).run()


def texts(at: AppTest) -> str:
    return "\n".join(t.value for t in at.text)


def plain(markdown: str) -> str:
    """A message as read: without the escapes markup.md adds."""
    return markdown.replace("\\", "").replace("\u200b", "")


def assert_clean(at: AppTest) -> None:
    """No exception (the Compare page may show errors: that is what some of these tests look for)."""
    assert not at.exception, [e.value for e in at.exception]


def test_default_sample_against_onnxruntime_agrees_and_steps_in_lockstep():
    at = compare_page()
    assert_clean(at)
    assert at.radio(key="w_compare_b").value == "onnxruntime"
    assert " and onnxruntime agree: 11 aligned value(s)" in plain(at.success[0].value)  # the verdict banner
    assert not at.slider  # the Diagram tab is open, and only it runs
    open_tab(at, "Step both")
    assert "A: enc/body/inner/body/parity (Mod) at iteration (0, 0)" in texts(at)
    at.slider(key="w_compare_cursor").set_value(3).run()
    assert "A: enc/body/inner/body/branch (If) at iteration (0, 0)" in texts(at)
    rows = record_tables(at)[1]  # the lockstep table (after the outputs table)
    assert list(rows["value"]) == ["acc_out"] and rows["within tolerance"].all()
    open_tab(at, "Error over time")
    assert not at.slider and "branch (If)" not in texts(at)  # the lockstep tab no longer runs
    assert any("error over iterations" in t for t in chart_titles(at)) and not at.get("plotly_chart")
    interactive(at)  # the same chart, by plotly
    assert any("error over iterations" in f.layout.title.text for f in figures(at))
    open_tab(at, "Step both")  # the cursor kept while its tab was hidden
    assert at.slider(key="w_compare_cursor").value == 3
    assert "A: enc/body/inner/body/branch (If) at iteration (0, 0)" in texts(at)


def test_reference_values_show_the_first_divergence(tmp_path):
    at = compare_page()
    trace = explorer.run(explorer.load(sample_path("nested_loops")), sample_inputs("nested_loops"))
    stacked = np.stack([e.outputs["s_out"] for e in trace.events_of("enc/body/squash")])
    stacked[2] += np.float32(0.1)  # the reference departs at the third Scan iteration
    buffer = io.BytesIO()
    np.savez(buffer, s_out=stacked)
    at.radio(key="w_compare_b").set_value("reference").run()
    assert "Upload an .npz" in at.info[0].value
    at.file_uploader(key="w_compare_npz").upload("ref.npz", buffer.getvalue()).run()
    assert_clean(at)
    assert "node 'enc/body/squash' (Tanh) at iteration (2,), value 's_out'" in texts(at)


def test_the_graph_page_colours_nodes_by_the_error_against_b_once_compared():
    from xml.etree import ElementTree

    from explorer.views.dot_escape import svg_id
    from explorer.views.styles import HEAT_SCALE
    at = start(timeout=120).switch_page("explorer/ui/pages/graph.py").run()
    assert "error" not in at.button_group(key="w_colour").options  # nothing compared yet
    trace = explorer.run(explorer.load(sample_path("nested_loops")), sample_inputs("nested_loops"))
    stacked = np.stack([e.outputs["s_out"] for e in trace.events_of("enc/body/squash")])
    stacked[2] += np.float32(0.25)
    buffer = io.BytesIO()
    np.savez(buffer, s_out=stacked)
    at.switch_page(PAGE).run()
    at.radio(key="w_compare_b").set_value("reference").run()
    at.file_uploader(key="w_compare_npz").upload("ref.npz", buffer.getvalue()).run()
    at.switch_page("explorer/ui/pages/graph.py").run()
    at.button_group(key="w_colour").set_value("error").run()
    assert_clean(at)
    args = diagram_args(at, state.W_GRAPH_CLICK)
    assert args["legend"]["title"].startswith("max abs error against reference values")
    [(colour, text)] = args["legend"]["items"]  # one node departs: one colour
    assert float(text) == pytest.approx(0.25, rel=1e-3)
    fills = {g.get("id"): next(e.get("fill") for e in g.iter() if e.tag in (f"{SVG}path", f"{SVG}polygon"))
             for g in ElementTree.fromstring(args["svg"]).iter(f"{SVG}g") if g.get("class") == "node"}
    assert fills[svg_id("node", "enc/body/squash")] == colour == HEAT_SCALE[-1]
    assert HEAT_SCALE[-1] not in {fill for box, fill in fills.items() if box != svg_id("node", "enc/body/squash")}


def test_two_models_show_the_gate_that_departs_first(tmp_path):
    params = torch_parameters("GRU")
    onnx.save(exported_rnn("GRU", params, linear_before_reset=1), tmp_path / "right.onnx")
    onnx.save(exported_rnn("GRU", params, linear_before_reset=0), tmp_path / "wrong.onnx")
    at = compare_page(str(tmp_path / "right.onnx"))
    at.radio(key="w_compare_b").set_value("path").run()
    at.text_input(key="w_compare_path").input(str(tmp_path / "wrong.onnx")).run()
    assert_clean(at)
    assert "part at node 'rnn' (GRU), gate h at time step 0 (direction 0)" in plain(at.error[0].value)  # banner
    assert "gate h departs first from B, at time step 0" in texts(at)
    assert "B's gates: recorded by B's run of 'rnn'" in [c.value for c in at.caption]
    assert any("Gate h departs first at time step 0" in plain(e.value) for e in at.error)
    titles = chart_titles(at)  # the Gates tab opened on the departing gate
    assert any(t.startswith("h · A") for t in titles) and any(t.startswith("h · |A − B|") for t in titles)


def test_pytorch_equations_flag_linear_before_reset_zero(tmp_path):
    wrong = exported_rnn("GRU", torch_parameters("GRU"), linear_before_reset=0)
    wrong.producer_name = "pytorch"
    onnx.save(wrong, tmp_path / "wrong.onnx")
    at = compare_page(str(tmp_path / "wrong.onnx"))
    at.radio(key="w_compare_b").set_value("pytorch").run()
    assert_clean(at)
    assert "gate h departs first from PyTorch, at time step 0" in texts(at)
    assert "part at node 'rnn' (GRU), gate h at time step 0" in plain(at.error[0].value)  # no value aligned
    assert "(a known exporter bug)" in plain(at.error[0].value)  # the diagnosis is part of the verdict
    at.number_input(key=state.keyed("w_compare_item", "rnn")).set_value(1).run()
    assert "h · |A − B| (direction 0, batch item 1)" in chart_titles(at)


def test_agreeing_gates_are_said_to_agree():
    at = compare_page()
    at.selectbox(key="w_sample").set_value("lstm_bidirectional_ragged").run()
    at.radio(key="w_compare_b").set_value("pytorch").run()
    assert_clean(at)
    assert "Gates compared step by step, all agree: LSTM 'lstm'" in texts(at)


def test_an_export_against_its_framework_capture_shows_the_module_tree_and_the_fix():
    bridge = Path(__file__).resolve().parents[1] / "models" / "bridge"
    at = compare_page(str(bridge / "faults" / "ts_tagger_gru_lbr.onnx"))
    at.radio(key="w_compare_b").set_value("framework").run()
    assert "the app runs no framework code" in at.info[0].value
    at.file_uploader(key=state.W_COMPARE_CAPTURE).upload("tagger.npz", (bridge / "tagger.npz").read_bytes()).run()
    assert_clean(at)
    assert "First departing module: gru layer 1 at make_bridge_models.py:44, ONNX node /gru/GRU_1 (step 0, " \
        "direction 0, gate h): own error 0.353" in plain(at.error[0].value)
    rows = at.dataframe[0].value  # the framework's module tree: a grid whose rows are chosen
    statuses = dict(zip(rows["module"].str.strip(), rows["status"]))
    assert statuses["gru layer 1"] == "own error" and statuses["lstm"] == "carried" and statuses["embed"] == "agrees"
    assert "Fix: set linear_before_reset=1" in texts(at)
    fixed = at.get("download_button")[0]
    assert fixed.proto.label == "Download the fixed model"
