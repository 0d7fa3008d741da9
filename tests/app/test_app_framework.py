"""The Compare page against the framework model an export came from (ui/framework_side.py), driven with AppTest on
the real exports of tests/models/bridge with planted faults: from a stored capture (what CI can run), the module
tree beside the export, coloured own error apart from carried, a picked module's ONNX node, iteration and source
line, the diagnosis with the fix drawn before and after and the fixed model downloaded (judged by onnxruntime
against the clean export); the model's code where the app may run it (a .py factory run live when torch is
installed), and off, saying so, in a shared app."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import onnx
import onnxruntime
import pytest
import streamlit
from streamlit import config
from streamlit.testing.v1 import AppTest

import explorer
from explorer.bridge import load_captured
from explorer.ui import state
from explorer.ui.framework_side import CODE_OFF
from explorer.views import styles
from explorer.views.dot_escape import svg_id
from tests.support.apptest import SVG, diagram_args, start

BRIDGE = Path(__file__).resolve().parents[1] / "models" / "bridge"
PAGE = "explorer/ui/pages/compare.py"
TREE_COLUMNS = ["module", "status"]


def framework_page(model: Path, feeds: Path | None = None) -> AppTest:
    """The Compare page on `model` (a local path; side A's inputs `feeds` when given), B the framework model."""
    at = start(timeout=180)
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(model)).run()
    if feeds is not None:
        at.radio(key=state.W_INPUT_MODE).set_value("Upload .npz or .pb").run()
        at.file_uploader(key=state.W_NPZ).upload(feeds.name, feeds.read_bytes()).run()
    at.switch_page(PAGE).run()
    return at.radio(key=state.W_COMPARE_B).set_value("framework").run()


def with_capture(at: AppTest, capture: str) -> AppTest:
    return at.file_uploader(key=state.W_COMPARE_CAPTURE).upload(capture, (BRIDGE / capture).read_bytes()).run()


def texts(at: AppTest) -> str:
    return "\n".join(t.value for t in at.text)


def plain(markdown: str) -> str:
    return markdown.replace("\\", "").replace("\u200b", "")


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def tree_key(at: AppTest) -> str:
    key = at.dataframe[0].key
    assert key is not None and key.startswith(state.W_COMPARE_MODULES + ":")
    return key


def row_fill(at: AppTest, label: str) -> str | None:
    """The background the module tree gives `label`'s row (from the table's styles)."""
    table = at.dataframe[0]
    row = [m.strip() for m in table.value["module"]].index(label)
    styler = table.proto.arrow_data.styler
    found = [rule for rule in styler.styles.split("}") if f"#T_{styler.uuid}_row{row}_col0" in rule]
    return found[0].split("background-color:")[1].strip().rstrip(";").strip() if found else None


def outputs(model: onnx.ModelProto | Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    return onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)


def test_the_module_tree_beside_the_export_and_the_fix_before_and_after():
    at = with_capture(framework_page(BRIDGE / "faults" / "dynamo_tagger_gru_gates.onnx"), "tagger.npz")
    assert_clean(at)
    assert plain(at.error[0].value).startswith("First departing module: gru layer 0 at make_bridge_models.py:44, "
                                               "ONNX node node_GRU_80 (step 0, direction 0, gate z): own error 0.654")
    statuses = dict(zip(at.dataframe[0].value["module"].str.strip(), at.dataframe[0].value["status"]))
    assert statuses["gru layer 0"] == "own error" and statuses["gru layer 1"] == statuses["lstm"] == "carried"
    assert row_fill(at, "gru layer 0") == styles.MODULE_STATUS["own error"][0]
    assert row_fill(at, "lstm") == styles.MODULE_STATUS["carried"][0]
    assert row_fill(at, "embed") == styles.MODULE_STATUS["agrees"][0]
    # the cause is picked first: its ONNX node, where it departs, its source line; the export zoomed to it
    assert "gru layer 0 is ONNX node node_GRU_80 (value val_80)" in texts(at)
    assert "source: make_bridge_models.py:44" in texts(at)
    drawn = diagram_args(at, state.W_COMPARE_MODULE_DIAGRAM)
    assert drawn["focus"] == svg_id("node", "node_GRU_80") and drawn["mark"]
    assert svg_id("node", "node_GRU_80") in drawn["hits"]  # departs by its own error: outlined
    assert drawn["legend"]["title"] == "error against the framework"
    # the diagnosis, its fix proven, what it changed, drawn before and after
    assert "the gate blocks of W, R and B are in the wrong order" in texts(at)
    assert "Fix: reorder the gate blocks of W, R and B as rzh\n→ fixed and proven" in texts(at)
    changes = at.dataframe[1].value
    assert set(changes["ONNX node"]) == {"node_GRU_80"} and all(changes["what"].str.startswith("weight "))
    before = diagram_args(at, state.W_COMPARE_FIX_BEFORE)
    after = diagram_args(at, state.W_COMPARE_FIX_AFTER)
    assert before["focus"] == after["focus"] == svg_id("node", "node_GRU_80")
    labels = [button.proto.label for button in at.get("download_button")]
    assert labels == ["Download the fixed model", "Download report"]


def test_the_fixed_model_downloaded_computes_what_the_clean_export_does(monkeypatch):
    served: dict[str, bytes] = {}
    button = streamlit.download_button

    def recorded(label, data, *args, **kwargs):  # what the button serves, kept
        served[label] = data
        return button(label, data, *args, **kwargs)

    monkeypatch.setattr(streamlit, "download_button", recorded)
    at = with_capture(framework_page(BRIDGE / "faults" / "ts_tagger_gru_lbr.onnx"), "tagger.npz")
    assert_clean(at)
    data = served["Download the fixed model"]
    fixed = onnx.load_from_string(data)
    [gru] = [n for n in fixed.graph.node if n.name == "/gru/GRU_1"]
    assert onnx.helper.get_attribute_value(next(a for a in gru.attribute if a.name == "linear_before_reset")) == 1
    feeds = dict(np.load(BRIDGE / "tagger_feeds.npz"))
    rng = np.random.default_rng(7)
    other = {name: rng.integers(0, 20, value.shape).astype(value.dtype) for name, value in feeds.items()}
    fault = outputs(BRIDGE / "faults" / "ts_tagger_gru_lbr.onnx", feeds)[0]
    assert not np.allclose(fault, outputs(BRIDGE / "ts_tagger.onnx", feeds)[0], rtol=1e-3, atol=1e-3)
    for inputs in (feeds, other):  # the clean export as exported: onnxruntime judges
        np.testing.assert_allclose(outputs(fixed, inputs)[0], outputs(BRIDGE / "ts_tagger.onnx", inputs)[0],
                                   rtol=1e-5, atol=1e-6)
    assert "attribute linear_before_reset" in list(at.dataframe[1].value["what"])
    page = served["Download report"]()  # the report: made when the button is clicked
    assert "Against the framework" in page and "set linear_before_reset=1" in page


def test_a_module_picked_in_the_tree_shows_its_node_iteration_and_source():
    at = with_capture(framework_page(BRIDGE / "faults" / "ts_loop_gru_proj_bias.onnx"), "loop_gru.npz")
    assert_clean(at)
    labels = [m.strip() for m in at.dataframe[0].value["module"]]
    cell = next(k for k, label in enumerate(labels) if label.startswith("cell") and "call 2" in label)
    at.session_state[tree_key(at)] = {"selection": {"rows": [cell], "columns": [], "cells": []}}
    at.run()
    assert_clean(at)
    shown = texts(at)
    node = at.dataframe[0].value["ONNX node"][cell]
    assert node.startswith("/Loop/body/")
    assert f"{labels[cell]} is ONNX node {node}" in shown and "at loop iteration (2,)" in shown
    assert "carried" in shown  # the projection carries its error into the cell: not the cell's own
    assert diagram_args(at, state.W_COMPARE_MODULE_DIAGRAM)["focus"] == svg_id("node", node)


def test_choosing_a_module_moves_the_step_cursor_to_its_first_departing_event():
    """The reset gate moved before the product in the scripted Loop's cell: every call of the cell departs. Picking
    a module value that agrees takes the cursor to its own event; picking a later call of a departing module, to
    the module's first departing call, whose recorded value is the first to part from PyTorch's."""
    fault = BRIDGE / "faults" / "ts_loop_gru_reset_before.onnx"
    at = with_capture(framework_page(fault, BRIDGE / "loop_gru_feeds.npz"), "loop_gru.npz")
    assert_clean(at)
    cursor = at.session_state[state.CURSOR]  # the cause is shown first: the cursor stays where it was
    labels = [m.strip() for m in at.dataframe[0].value["module"]]
    statuses = list(at.dataframe[0].value["status"])
    head = labels.index("head (call 2)")
    assert statuses[head] == "carried"
    at.session_state[tree_key(at)] = {"selection": {"rows": [labels.index("proj (call 2)")], "columns": [],
                                                    "cells": []}}
    at.run()
    assert_clean(at)
    trace = explorer.run(explorer.load(fault), dict(np.load(BRIDGE / "loop_gru_feeds.npz")))
    proj = trace.events[at.session_state[state.CURSOR]]  # proj agrees everywhere: its own event
    assert (proj.node, proj.iteration) == ("/Loop/body//proj/Gemm", (2,)) and proj.index != cursor
    at.session_state[tree_key(at)] = {"selection": {"rows": [head], "columns": [], "cells": []}}
    at.run()
    assert_clean(at)
    moved = at.session_state[state.CURSOR]
    event = trace.events[moved]
    assert event.node == "/Loop/body//head/Gemm"
    captured = load_captured(BRIDGE / "loop_gru.npz")
    runs = trace.events_of(event.node)
    errors = [np.abs(e.outputs["/head/Gemm_output_0"] - captured.values[("out", "head", e.iteration[0], 0)]).max()
              for e in runs]
    first = next(k for k, error in enumerate(errors) if error > 1e-4)  # judged against PyTorch's own values
    assert event.iteration == runs[first].iteration == (0,)
    # the button steps through from there: the Step page opens at that event
    at.button(key=state.W_COMPARE_MODULE_STEP).click().run()
    assert_clean(at)
    assert at.session_state[state.CURSOR] == moved


def test_the_graph_page_colours_the_export_by_own_and_carried_error():
    """After the framework comparison, the Graph page colours each node by its own error (where the error starts:
    the cell, whose reset gate the export applies before the product) or by the error it only carries on (the
    state's Linear and the head, handed a departing state)."""
    fault = BRIDGE / "faults" / "ts_loop_gru_reset_before.onnx"
    at = with_capture(framework_page(fault, BRIDGE / "loop_gru_feeds.npz"), "loop_gru.npz")
    table = at.dataframe[0].value
    own = table[table["status"] == "own error"]
    carried = table[table["status"] == "carried"]
    assert set(own["ONNX node"]) == {"/Loop/body//cell/Add_6"}
    assert set(carried["ONNX node"]) == {"/Loop/body//cell/hh/Gemm", "/Loop/body//head/Gemm"}
    at.switch_page("explorer/ui/pages/graph.py").run()
    at.button_group(key=state.W_BODIES).set_value("all").run()  # the Loop's body drawn open
    colours = at.button_group(key=state.W_COLOUR)
    assert {"own error vs framework", "carried error"} <= set(colours.options)
    cell, head, proj = (svg_id("scope", "/Loop/body//cell"), svg_id("node", "/Loop/body//head/Gemm"),
                        svg_id("node", "/Loop/body//proj/Gemm"))  # the cell's nodes drawn as its scope's box
    for overlay, rows, column, filled, unfilled in (("own", own, "own error", cell, head),
                                                    ("carried", carried, "handed", head, proj)):
        at.button_group(key=state.W_COLOUR).set_value(overlay).run()
        assert_clean(at)
        args = diagram_args(at, state.W_GRAPH_CLICK)
        assert args["legend"]["title"].startswith("own error against" if overlay == "own" else "error carried")
        top = args["legend"]["items"][-1]
        assert float(top[1].split(" – ")[-1]) == pytest.approx(rows[column].max(), rel=1e-2)  # the table's
        fills = {g.get("id"): next(e.get("fill") for e in g.iter() if e.tag in (f"{SVG}path", f"{SVG}polygon"))
                 for g in ElementTree.fromstring(args["svg"]).iter(f"{SVG}g") if g.get("class") == "node"}
        assert fills[filled] in styles.HEAT_SCALE and fills[unfilled] not in styles.HEAT_SCALE


def test_an_agreeing_export_says_so_and_offers_no_fix():
    at = with_capture(framework_page(BRIDGE / "ts_tagger.onnx"), "tagger.npz")
    assert_clean(at)
    assert plain(at.success[0].value) == "Every aligned module agrees with the framework (5 of 5 leaf modules aligned)."
    assert [button.proto.label for button in at.get("download_button")] == ["Download report"]  # no fixed model
    assert set(at.dataframe[0].value["status"]) <= {"agrees", "unaligned"}


@pytest.fixture
def shared(monkeypatch):
    before = config.get_option("server.address")
    monkeypatch.setenv("EXPLORER_SETTINGS", "/nonexistent/explorer.toml")
    monkeypatch.setenv("EXPLORER_SHARED", "1")
    monkeypatch.setenv("EXPLORER_ALLOWED_DIRS", str(BRIDGE))
    config.set_option("server.address", "0.0.0.0")
    yield
    config.set_option("server.address", before)


def test_a_shared_app_runs_no_uploaded_code_and_says_so(shared):
    at = framework_page(BRIDGE / "faults" / "ts_tagger_gru_lbr.onnx")
    option = at.radio(key=state.W_COMPARE_FRAMEWORK)
    assert "off: this app is shared" in option.format_func("code")
    option.set_value("code").run()
    assert_clean(at)
    assert at.warning[0].value == CODE_OFF
    assert not [u for u in at.get("file_uploader") if u.proto.id.endswith(state.W_COMPARE_CODE)]
    at.radio(key=state.W_COMPARE_FRAMEWORK).set_value("capture").run()
    assert "gru layer 1" in with_capture(at, "tagger.npz").dataframe[0].value["module"].str.strip().tolist()


def test_a_factory_is_offered_from_the_file_without_running_it(tmp_path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()\n\ndef build():\n    return None\n\ndef _helper():\n    pass\n"
    at = framework_page(BRIDGE / "faults" / "ts_tagger_gru_lbr.onnx")
    at.radio(key=state.W_COMPARE_FRAMEWORK).set_value("code").run()
    at.file_uploader(key=state.W_COMPARE_CODE).upload("mine.py", code.encode()).run()
    assert_clean(at)
    assert at.selectbox(key=state.W_COMPARE_FACTORY).options == ["build"]
    for library, package in (("PyTorch", "torch"), ("Keras", "keras")):
        at.radio(key=state.W_COMPARE_LIBRARY).set_value(library).run()
        assert_clean(at)
        if importlib.util.find_spec(package) is None:
            assert f"{library} is not installed in the app's Python ({package} does not import)" in \
                plain(at.error[0].value)
        else:
            assert at.button(key=state.W_COMPARE_RUN_CODE).label == "Run build and compare"
        assert not marker.exists()  # nothing runs until asked


# a user's file that builds the model from their project's code (here the recipe of the stored exports)
FACTORY = f"""import importlib.util

spec = importlib.util.spec_from_file_location("bridge_recipe", {str(BRIDGE / "make_bridge_models.py")!r})
recipe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(recipe)


def tagger():
    return recipe.tagger()
"""


def test_a_pytorch_factory_runs_live_and_its_fix_is_proven_on_random_inputs():
    pytest.importorskip("torch")
    at = framework_page(BRIDGE / "faults" / "ts_tagger_lstm_if.onnx", BRIDGE / "tagger_feeds.npz")
    at.radio(key=state.W_COMPARE_FRAMEWORK).set_value("code").run()
    at.file_uploader(key=state.W_COMPARE_CODE).upload("mine.py", FACTORY.encode()).run()
    at.selectbox(key=state.W_COMPARE_FACTORY).set_value("tagger").run()
    at.button(key=state.W_COMPARE_RUN_CODE).click().run()
    for _ in range(60):  # the job runs in the background: the page polls it
        if at.dataframe:
            break
        at.run()
    assert_clean(at)
    assert not [e for e in at.error if "failed" in e.value], texts(at)
    assert plain(at.error[0].value).startswith("First departing module: lstm layer 0 at make_bridge_models.py:45")
    assert "→ fixed and proven" in texts(at)
    assert any("random inputs (seed 1, the same sizes): every aligned module agrees" in plain(c.value)
               for c in at.caption)


def run_code(at: AppTest) -> AppTest:
    at.button(key=state.W_COMPARE_RUN_CODE).click().run()
    for _ in range(60):  # the job runs in the background: the page polls it
        if at.dataframe or any("failed" in e.value for e in at.error):
            break
        at.run()
    assert_clean(at)
    assert not [e for e in at.error if "failed" in e.value], texts(at)
    return at


KERAS_FACTORY = f"""import importlib.util

spec = importlib.util.spec_from_file_location("keras_recipe", {str(BRIDGE / "make_keras_models.py")!r})
recipe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(recipe)


def keras_tagger():
    return recipe.keras_tagger()
"""


@pytest.mark.parametrize("form", [".py", ".keras"])
def test_a_keras_model_runs_live_from_its_factory_or_its_file(form, tmp_path):
    pytest.importorskip("keras")
    at = framework_page(BRIDGE / "faults" / "tf2onnx_keras_tagger_lstm_if.onnx", BRIDGE / "keras_tagger_feeds.npz")
    at.radio(key=state.W_COMPARE_FRAMEWORK).set_value("code").run()
    if form == ".py":
        at.file_uploader(key=state.W_COMPARE_CODE).upload("mine.py", KERAS_FACTORY.encode()).run()
        at.radio(key=state.W_COMPARE_LIBRARY).set_value("Keras").run()
    else:
        recipe = importlib.util.spec_from_file_location("keras_recipe", BRIDGE / "make_keras_models.py")
        module = importlib.util.module_from_spec(recipe)
        recipe.loader.exec_module(module)
        module.keras_tagger().save(tmp_path / "tagger.keras")
        at.file_uploader(key=state.W_COMPARE_CODE).upload("tagger.keras", (tmp_path / "tagger.keras").read_bytes()).run()
    run_code(at)
    statuses = dict(zip(at.dataframe[0].value["module"].str.strip(), at.dataframe[0].value["status"]))
    assert statuses["lstm layer 0"] == "own error" and statuses["lstm"] == statuses["head"] == "carried"
    assert "→ fixed and proven" in texts(at)
    assert any("random inputs (seed 2, the same sizes): every aligned module agrees" in plain(c.value)
               for c in at.caption)  # proven by Keras itself
    if form == ".py":  # built from its factory, each layer keeps the line that made it
        assert "make_keras_models.py:" in plain(at.error[0].value)


def test_a_capture_that_does_not_load_says_why():
    at = framework_page(BRIDGE / "faults" / "ts_tagger_gru_lbr.onnx")
    at.file_uploader(key=state.W_COMPARE_CAPTURE).upload("tagger.npz", (BRIDGE / "tagger_feeds.npz").read_bytes()).run()
    assert_clean(at)
    assert at.error[0].value == "The framework comparison failed:"
    assert "not a capture of a framework run: it has no module tree" in texts(at)
    assert not at.dataframe
