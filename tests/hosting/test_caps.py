"""The operator's caps on a shared app (explorer/hosting/caps.py): from explorer.toml or the environment, every cap set
in a shared app (defaults for the others), none unless set on this machine; the sidebar's limits cannot pass them
(its inputs' highest values, and the limits the run gets even when the session state asks for more); a bigger
upload or a model of more nodes is refused with explorer's message naming the cap; a shared sidebar names no path
of the server's nor its process id."""
from __future__ import annotations

import os
import tempfile

import pytest
from onnx import TensorProto, helper
from streamlit import config

from explorer import load
from explorer.errors import ExplorerError, ModelError
from explorer.hosting.caps import SHARED_DEFAULTS, Caps, caps_for
from explorer.limits import Limits
from explorer.ui import state
from tests.support.apptest import start, upload
from tests.support.caps_models import chain, state_trace
from tests.support.markdown_text import shown


def test_caps_come_from_the_environment_over_the_settings_file(tmp_path):
    settings = tmp_path / "explorer.toml"
    settings.write_text("[caps]\nthreads = 2\nnodes = 500\nidle_minutes = 0.5\n")
    environ = {"EXPLORER_SETTINGS": str(settings)}
    assert caps_for(False, environ) == Caps(threads=2, nodes=500, idle_minutes=0.5)
    assert caps_for(False, {**environ, "EXPLORER_MAX_THREADS": "3"}).threads == 3
    shared = caps_for(True, environ)
    assert (shared.threads, shared.nodes, shared.memory_mb) == (2, 500, SHARED_DEFAULTS["memory_mb"])
    assert caps_for(False, {"EXPLORER_SETTINGS": str(tmp_path / "none.toml")}) == Caps()
    for bad in ("0", "-1", "many"):
        with pytest.raises(ExplorerError, match="EXPLORER_MAX_EVENTS must be a positive number"):
            caps_for(True, {**environ, "EXPLORER_MAX_EVENTS": bad})


def test_caps_lower_the_limits_asked_for():
    asked = Limits(max_iterations=10**9, max_tensor_bytes=1 << 40, trace_budget_bytes=1 << 40, max_events=10**9,
                   threads=1024, trace_disk_bytes=1 << 50, max_input_bytes=1 << 40)
    capped = Caps(memory_mb=64, disk_mb=100, threads=2, events=500, iterations=50).limits(asked)
    assert capped == Limits(max_iterations=50, max_tensor_bytes=64 << 20, trace_budget_bytes=64 << 20,
                            max_input_bytes=64 << 20, max_events=500, threads=2, trace_disk_bytes=100 << 20)
    assert Caps().limits(asked) == asked


def test_a_model_of_more_nodes_than_the_cap_is_refused_naming_it():
    assert len(load(chain(5), max_nodes=5).index.nodes) == 5
    with pytest.raises(ModelError, match="has 6 nodes, more than the 5 this app loads"):
        load(chain(6), max_nodes=5)


@pytest.fixture
def shared(monkeypatch, tmp_path):
    """The app declared shared on 127.0.0.1, the operator's caps set by the test in the environment."""
    before = config.get_option("server.address")
    for name in list(os.environ):
        if name.startswith(("EXPLORER_MAX_", "EXPLORER_ALLOWED", "EXPLORER_IDLE")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("EXPLORER_SETTINGS", str(tmp_path / "none.toml"))
    monkeypatch.setenv("EXPLORER_SHARED", "1")
    config.set_option("server.address", "127.0.0.1")
    yield monkeypatch
    config.set_option("server.address", before)


CAPS = {"EXPLORER_MAX_MEMORY_MB": "64", "EXPLORER_MAX_DISK_MB": "100", "EXPLORER_MAX_THREADS": "2",
        "EXPLORER_MAX_EVENTS": "500", "EXPLORER_MAX_ITERATIONS": "50"}


def test_the_sidebar_cannot_pass_the_operators_caps(shared):
    for name, value in CAPS.items():
        shared.setenv(name, value)
    at = start("tiny_mlp")
    tops = {n.key: n.max for n in at.sidebar.number_input}
    assert (tops[state.W_MAX_ITERATIONS], tops[state.W_MAX_EVENTS], tops[state.W_THREADS]) == (50, 500, 2)
    assert (tops[state.W_BUDGET_MB], tops[state.W_MAX_TENSOR_MB], tops[state.W_DISK_MB]) == (64, 64, 100)
    for key, value in ((state.W_THREADS, 1024), (state.W_BUDGET_MB, 1 << 20), (state.W_DISK_MB, 1 << 30),
                       (state.W_MAX_EVENTS, 10**9), (state.W_MAX_ITERATIONS, 10**9), (state.W_MAX_TENSOR_MB, 1 << 20)):
        at.session_state[key] = value  # what a visitor's browser may send, whatever the inputs allow
    at.run()
    limits = at.session_state[state.RUN_REQUEST].limits
    assert 1 <= limits.threads <= 2  # the cap; fewer where the worker's cores or BLAS settings allow fewer
    assert limits == Limits(max_iterations=50, max_tensor_bytes=64 << 20, trace_budget_bytes=64 << 20,
                            max_input_bytes=64 << 20, max_events=500, threads=limits.threads,
                            trace_disk_bytes=100 << 20)


def test_a_shared_app_caps_even_when_the_operator_set_nothing(shared):
    at = start("tiny_mlp")
    at.session_state[state.W_THREADS] = 1024
    at.run()
    assert at.session_state[state.RUN_REQUEST].limits.threads <= SHARED_DEFAULTS["threads"]


def test_an_upload_bigger_than_the_cap_is_refused(shared):
    shared.setenv("EXPLORER_MAX_UPLOAD_MB", "1")
    at = start("tiny_mlp")
    at.radio(key=state.W_SOURCE).set_value("Upload").run()
    assert at.get("file_uploader")[0].proto.max_upload_size_mb == 1  # the browser is told
    big = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], doc_string="x" * (3 << 19))], "big",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]), opset_imports=[helper.make_opsetid("", 17)])
    at = upload(at, "big.onnx", big.SerializeToString())
    assert any("more than the 1 MB this app takes in one upload" in shown(e.value) for e in at.error)
    assert at.session_state[state.ACTIVE].label == "tiny_mlp"


def test_a_model_of_more_nodes_than_the_cap_is_refused_in_the_app(shared):
    shared.setenv("EXPLORER_MAX_NODES", "6")  # tiny_mlp's
    at = upload(start("tiny_mlp"), "long.onnx", chain(7))
    assert any("has 7 nodes, more than the 6 this app loads" in shown(e.value) for e in at.error)
    assert at.session_state[state.ACTIVE].label == "tiny_mlp"
    at = upload(at, "short.onnx", chain(6))
    assert at.session_state[state.ACTIVE].label == "short.onnx"


def test_a_shared_sidebar_names_no_server_path_nor_process_id(shared):
    at = start("tiny_mlp")
    at.session_state[state.W_BUDGET_MB] = 0  # every value goes to the run's folder on disk
    at.run()
    trace = state_trace(at)
    assert trace.spilled_at is not None and trace.spill.path is not None
    sidebar = "\n".join(shown(c.value) for c in at.sidebar.caption)
    assert "on disk" in sidebar
    assert tempfile.gettempdir() not in sidebar and str(os.getpid()) not in sidebar and "explorer-run" not in sidebar
