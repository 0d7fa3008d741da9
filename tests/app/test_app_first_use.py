"""What a new user meets first, driven with AppTest: samples open on their own inputs, each model starts from
its own default inputs, and nothing looks chosen before the user chooses it."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from streamlit.testing.v1 import AppTest

import explorer
from explorer.inputs.samples import sample_inputs
from tests.support.apptest import PAGES, html_text, start, texts, upload
from tests.support.markdown_text import shown


def choose(at: AppTest, sample: str) -> AppTest:
    return at.selectbox(key="w_sample").set_value(sample).run()


def test_the_node_selector_shows_no_node_until_one_is_picked():
    at = start()
    assert at.selectbox(key="w_node_pick").value is None  # not the first node while the inspector is empty
    assert not at.subheader
    at.selectbox(key="w_node_pick").set_value("enc").run()  # picking the first node opens it
    assert [s.value for s in at.subheader] == ["Scan 'enc'"]


def test_a_sample_opens_on_its_own_inputs():
    at = start()
    assert at.radio(key="w_input_mode").value == "Sample inputs"
    assert at.session_state["run_request"].make_feeds().keys() == sample_inputs("nested_loops").keys()
    at.switch_page(PAGES["loops"]).run()
    assert "**4 iterations**" in texts(at)  # X of the sample's inputs has T = 4 rows
    choose(at, "while_loop")
    assert "**6 iterations** · stopped: cond false after 6 iterations" in texts(at)


def test_each_model_starts_from_its_own_default_inputs():
    at = choose(start(), "loop_spec")
    at.radio(key="w_input_mode").set_value("Random").run()
    choose(at, "tiny_mlp")  # no inputs of its own: random
    assert at.radio(key="w_input_mode").options == ["Random", "Upload .npz or .pb", "Edit values"]
    assert at.radio(key="w_input_mode").value == "Random"
    choose(at, "loop_spec")
    assert at.radio(key="w_input_mode").value == "Sample inputs"


def test_editing_starts_from_the_sample_inputs():
    at = choose(start(), "loop_spec")
    at.radio(key="w_input_mode").set_value("Edit values").run()
    tables = {c.value.strip("`").split("`")[0]: t.value.iloc[0, 0]
              for c, t in zip([c for c in at.sidebar.caption if c.value.startswith("`")], at.sidebar.dataframe)}
    assert tables == {"a": 3, "b": 6, "keepgoing": True, "max_trip_count": 10}
    assert not [n for n in at.sidebar.number_input if n.label == "Seed"]  # no seed: nothing is random


def test_per_node_pages_start_on_a_node_that_ran():
    # If on a flag that is true: the GRU of the then branch runs, the LSTM of the else branch (listed first) not
    def recurrent(op: str, name: str) -> onnx.GraphProto:
        hidden = 2
        gates = {"GRU": 3, "LSTM": 4}[op]
        weights = [numpy_helper.from_array(np.full((1, gates * hidden, 2), 0.1, np.float32), f"W_{name}"),
                   numpy_helper.from_array(np.full((1, gates * hidden, hidden), 0.1, np.float32), f"R_{name}")]
        return helper.make_graph(
            [helper.make_node(op, ["x", f"W_{name}", f"R_{name}"], [f"Y_{name}"], name=name, hidden_size=hidden)],
            f"{name}_branch", [], [helper.make_tensor_value_info(f"Y_{name}", TensorProto.FLOAT, None)], weights)

    graph = helper.make_graph(
        [helper.make_node("If", ["flag"], ["y"], name="pick", then_branch=recurrent("GRU", "gru"),
                          else_branch=recurrent("LSTM", "lstm"))], "g",
        [helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    at = upload(start(), "branches.onnx", model.SerializeToString())
    at.radio(key="w_input_mode").set_value("Upload .npz or .pb").run()
    buf = io.BytesIO()
    np.savez(buf, flag=np.bool_(True), x=np.ones((3, 1, 2), np.float32))
    at.file_uploader(key="w_npz").upload("feeds.npz", buf.getvalue()).run()
    at.switch_page(PAGES["gates"]).run()
    assert not at.exception
    picker = at.selectbox(key="w_rnn")
    assert picker.options == ["LSTM · pick/else_branch/lstm · did not run", "GRU · pick/then_branch/gru"]
    assert picker.value == "pick/then_branch/gru"


def test_a_loop_limit_says_where_to_raise_it():
    at = start()
    at.number_input(key="w_max_iterations").set_value(2).run()
    [error] = at.error
    assert "LimitExceeded" in error.value and "raise **Max loop iterations** under **Limits**" in error.value
    at.number_input(key="w_max_iterations").set_value(4).run()  # the 4 Scan steps and 3 inner iterations fit
    assert not at.error


def test_the_other_run_limits_stop_the_run_and_say_which_field_to_raise():
    at = start()
    at.number_input(key="w_max_events").set_value(5).run()
    [error] = at.error
    assert "LimitExceeded" in error.value and "raise **Max node executions** under **Limits**" in error.value
    at.number_input(key="w_max_events").set_value(1_000_000).run()
    assert not at.error
    at.number_input(key="w_max_tensor_mb").set_value(0).run()
    [error] = at.error
    assert "beyond Limits" in error.value and "raise **Largest value (MB)** under **Limits**" in error.value


def test_an_upload_without_its_external_data_points_to_local_path(tmp_path):
    weights = numpy_helper.from_array(np.eye(4, dtype=np.float32), "W")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [weights])
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "m.onnx",
                    save_as_external_data=True, location="m.bin", size_threshold=0)
    at = upload(start(), "m.onnx", (tmp_path / "m.onnx").read_bytes())
    [error] = at.error
    assert "external file 'm.bin'" in shown(error.value) and "Choose Local path in the sidebar" in shown(error.value)
    at.radio(key="w_source").set_value("Local path").run()
    at.text_input(key="w_path").input(str(tmp_path / "m.onnx")).run()
    assert not at.error and at.session_state["active_model"].label == str(tmp_path / "m.onnx")


def test_unnamed_dynamic_axes_get_their_own_size_inputs():
    # exported with "?" dims, as silero-vad's input [?, ?]: without these sizes only an .npz could run it
    graph = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["s"], name="total", keepdims=0)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, "T", None])],
                              [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    at = start()
    at.radio(key="w_source").set_value("Upload").run()
    at.file_uploader(key="w_upload").upload("dyn.onnx", model.SerializeToString()).run()
    sizes = {n.label: n for n in at.sidebar.number_input if n.label.startswith("Size of")}
    assert list(sizes) == ["Size of `T`", "Size of `x` axis 0", "Size of `x` axis 2"]
    sizes["Size of `x` axis 0"].set_value(1).run()
    next(n for n in at.sidebar.number_input if n.label == "Size of `x` axis 2").set_value(576).run()
    assert at.session_state["run_request"].make_feeds()["x"].shape == (1, 2, 576)
    at.switch_page(PAGES["step"]).run()
    assert "float32[1, 2, 576]" in html_text(at) and not at.error


def test_waiting_for_an_npz_says_what_is_missing():
    at = choose(start(), "gru_pytorch_batch_first")
    at.radio(key="w_input_mode").set_value("Upload .npz or .pb").run()
    at.switch_page(PAGES["gates"]).run()
    assert [i.value for i in at.info] == ["No run yet: give the model's inputs in the sidebar."]
    assert not at.error


def test_the_optimizer_states_each_proof_once_with_what_it_covers():
    at = choose(start(), "tiny_mlp")
    at.switch_page(PAGES["optimizer"]).run()
    verdicts = [m.value for m in at.markdown if ":green[**equivalent**]" in m.value]
    assert verdicts == ["Fully optimized model: :green[**equivalent**]", "After 2 of 2 rewrites: :green[**equivalent**]"]
    at.slider(key="w_rewrites").set_value(1).run()
    assert "After 1 of 2 rewrites: :green[**equivalent**]" in [m.value for m in at.markdown]


GRU_BIDIRECTIONAL = (Path(__file__).resolve().parents[3] / "shared" / "models" / "JetBrains-Research__kinference"
                     / "utils/utils-testing/src/commonMain/resources/gru/test_gru_bidirectional")


@pytest.mark.skipif(not GRU_BIDIRECTIONAL.is_dir(), reason="../shared/models is not there")
def test_a_test_data_sets_input_files_run_the_model_it_ships_with():
    # the model declares no input shapes: random inputs cannot run it, its test data set's .pb files can
    data = GRU_BIDIRECTIONAL / "test_data_set_0"
    at = start()
    at.radio(key="w_source").set_value("Upload").run()
    at.file_uploader(key="w_upload").upload("model.onnx", (GRU_BIDIRECTIONAL / "model.onnx").read_bytes()).run()
    at.radio(key="w_input_mode").set_value("Upload .npz or .pb").run()
    # picked in the order a file dialog lists them, outputs included: input_<i>.pb is input i, the rest is ignored
    picked = sorted(data.glob("*.pb"), reverse=True)
    at.file_uploader(key="w_npz").set_value([(p.name, p.read_bytes(), "application/octet-stream")
                                             for p in picked]).run()
    assert not at.exception and not at.error
    request = at.session_state["run_request"]
    assert request.label == "6 uploaded files"
    expected = {name: numpy_helper.to_array(onnx.load_tensor(str(data / f"output_{i}.pb")))
                for i, name in enumerate(["Y", "Y_h"])}
    outputs = explorer.run(explorer.load(GRU_BIDIRECTIONAL / "model.onnx"), request.make_feeds()).outputs
    for name, value in expected.items():
        np.testing.assert_allclose(outputs[name], value, rtol=1e-5, atol=1e-6)
    at.switch_page(PAGES["step"]).run()  # the one event is the GRU's: its outputs are the model's
    assert not at.exception and not at.error
    for name, value in expected.items():
        stats = f"min {value.min():.4g} · max {value.max():.4g} · mean {value.mean():.4g}"
        assert f'<b>{name}</b> · <code>float32{list(value.shape)}</code> · <span class="part">{stats}</span>' in html_text(at)
    at.file_uploader(key="w_npz").set_value([("input_0.pb", b"not a tensor", "application/octet-stream")]).run()
    [error] = at.error
    assert "input_0.pb is not a serialized TensorProto for input 'X'" in shown(error.value)
