"""The app served beyond this machine (server.address 0.0.0.0), driven with AppTest: without allowed folders no
local path opens; with one, only models inside it do, and `..` escapes, symlinks out of it, a missing file and a
file that is not a model all get one identical refusal that quotes nothing of the file; the sidebar says the
mode; uploads still work; the Sweep page takes only allowed folders and listed schedulers; nothing is optimized
that a visitor did not ask for. Served on localhost, local paths open as they always did."""
from __future__ import annotations

import pytest
from streamlit import config

from explorer.files.access import REFUSED, SAVE_REFUSED
from explorer.inputs.samples import sample_path
from explorer.model.model import load
from explorer.ui import cache, state
from explorer.ui.sweeping import key
from explorer.views.rewrites import pattern_rules
from tests.support.apptest import start, upload
from tests.support.markdown_text import shown
from tests.support.sweep_models import planted_pair

SECRET = "hunter2-only-in-this-file"


@pytest.fixture
def served(monkeypatch):
    """Sets server.address for the test (restored after); the operator's settings come from the environment."""
    before = config.get_option("server.address")
    monkeypatch.delenv("EXPLORER_ALLOWED_DIRS", raising=False)
    monkeypatch.delenv("EXPLORER_SCHEDULERS", raising=False)
    monkeypatch.delenv("EXPLORER_SAVE_DIR", raising=False)
    monkeypatch.delenv("EXPLORER_SHARED", raising=False)
    monkeypatch.setenv("EXPLORER_SETTINGS", "/nonexistent/explorer.toml")

    def serve(address: str) -> None:
        config.set_option("server.address", address)
        if address not in ("localhost", "127.0.0.1", "::1"):
            monkeypatch.setenv("EXPLORER_SHARED", "1")  # declared shared: listening beyond is refused otherwise

    yield serve
    config.set_option("server.address", before)


@pytest.fixture
def folders(tmp_path):
    """(allowed folder with a model in it, a model outside it): paths of every kind a visitor may type."""
    allowed, outside = tmp_path / "class", tmp_path / "private"
    allowed.mkdir()
    outside.mkdir()
    inside_model, _ = planted_pair(allowed)
    outside_model, _ = planted_pair(outside)
    (allowed / "escape.onnx").symlink_to(outside_model)
    (allowed / "notes.onnx").write_text(f"root:x:0:0:{SECRET}\n")
    return allowed, inside_model, outside_model


def open_path(at, text: str):
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    return at.text_input(key=state.W_PATH).input(text).run()


def refusal(at) -> str:
    """The one error the page shows, as a reader sees it."""
    [error] = [shown(e.value) for e in at.error]
    return error


def sidebar_texts(at) -> str:
    return "\n".join(shown(c.value) for c in at.sidebar.caption)


def test_shared_without_allowed_folders_opens_no_local_path(served, folders):
    served("0.0.0.0")
    allowed, inside_model, outside_model = folders
    seen = set()
    for text in (str(inside_model), str(outside_model), str(allowed / "missing.onnx"), "/etc/passwd",
                 str(allowed / "notes.onnx")):
        at = open_path(start(), text)
        assert at.session_state[state.ACTIVE].kind == "sample"  # the previous model stays
        seen.add(refusal(at))
    assert len(seen) == 1 and REFUSED in seen.pop()
    assert "shared: no local paths (samples and uploads only)" in sidebar_texts(at)


def test_shared_with_an_allowed_folder_opens_only_models_inside_it(served, folders, monkeypatch):
    allowed, inside_model, outside_model = folders
    monkeypatch.setenv("EXPLORER_ALLOWED_DIRS", str(allowed))
    served("0.0.0.0")
    at = open_path(start(), str(inside_model))
    assert not at.error and at.session_state[state.ACTIVE].path == str(inside_model.resolve())
    assert f"shared: models from {allowed.resolve()} only" in sidebar_texts(at)
    seen = set()
    for text in (str(allowed / ".." / "private" / outside_model.name), str(allowed / "escape.onnx"),
                 str(allowed / "missing.onnx"), str(allowed / "notes.onnx"), str(outside_model), "/etc/passwd",
                 str(allowed)):
        at = open_path(start(), text)
        message = refusal(at)
        assert SECRET not in message and "root:x" not in message
        seen.add(message)
    assert len(seen) == 1 and REFUSED in seen.pop()


def test_shared_uploads_still_open(served, folders):
    served("0.0.0.0")
    _, inside_model, _ = folders
    at = upload(start(), "mine.onnx", inside_model.read_bytes())
    assert not at.error and at.session_state[state.ACTIVE].kind == "upload"


def test_the_sweep_page_takes_only_allowed_folders_and_listed_schedulers(served, folders, monkeypatch):
    allowed, inside_model, _ = folders
    monkeypatch.setenv("EXPLORER_ALLOWED_DIRS", str(allowed))
    served("0.0.0.0")
    at = open_path(start(), str(inside_model)).switch_page("explorer/ui/pages/sweep.py").run()
    at.radio(key=key("where")).set_value("scheduler").run()
    assert "No scheduler is configured for this shared app" in "\n".join(i.value for i in at.info)
    at.radio(key=key("inputs")).set_value("folder").run()
    at.text_input(key=key("folder")).input(str(allowed / "..")).run()
    assert refusal(at) == REFUSED
    at.radio(key=key("where")).set_value("scheduler").run()
    monkeypatch.setenv("EXPLORER_SCHEDULERS", "tcp://10.0.0.5:8786,tcp://10.0.0.6:8786")
    at.run()
    assert at.selectbox(key=key("scheduler")).options == ["tcp://10.0.0.5:8786", "tcp://10.0.0.6:8786"]


def test_served_on_this_machine_local_paths_open_as_before(served, folders):
    served("localhost")
    allowed, _, outside_model = folders
    at = open_path(start(), str(outside_model))
    assert not at.error and at.session_state[state.ACTIVE].path == str(outside_model.resolve())
    assert "served on this machine only: local paths open" in sidebar_texts(at)
    at = open_path(at, str(allowed / "missing.onnx"))
    assert "does not exist" in refusal(at)


def test_a_shared_app_writes_no_weights_through_a_symlink_out_of_its_folders(served, folders, monkeypatch):
    """Saving an optimized model writes `<name>.data` beside it: a symlink of that name leading out of the save
    folder refuses the save, and the file it points at is left as it was."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from tests.support.apptest import PAGES

    allowed, _, outside_model = folders
    weight = numpy_helper.from_array(np.arange(1 << 18, dtype=np.float32), "w")  # big enough to be mapped
    nodes = [helper.make_node("Mul", ["x", "w"], ["m"]), helper.make_node("Identity", ["m"], ["i"]),
             helper.make_node("Add", ["i", "w"], ["y"])]
    graph = helper.make_graph(nodes,
                              "weighted", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 18])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 18])], [weight])
    model = allowed / "weighted.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model,
              save_as_external_data=True, location="weighted.bin", size_threshold=0)
    victim = outside_model.parent / "victim.data"
    victim.write_bytes(b"keep")
    (allowed / "weighted.optimized.onnx.data").symlink_to(victim)
    monkeypatch.setenv("EXPLORER_ALLOWED_DIRS", str(allowed))
    monkeypatch.setenv("EXPLORER_SAVE_DIR", str(allowed))
    served("0.0.0.0")
    at = open_path(start(), str(model))
    assert not at.error
    at.switch_page(PAGES["optimizer"]).run()
    at.text_input(key=state.W_OPTIMIZED_PATH).input(str(allowed / "weighted.optimized.onnx")).run()
    at.button(key=state.W_OPTIMIZED_SAVE).click().run()
    assert any(SAVE_REFUSED in shown(e.value) for e in at.error)
    assert victim.read_bytes() == b"keep" and not (allowed / "weighted.optimized.onnx").exists()


def test_a_shared_app_optimizes_only_what_a_visitor_asks_for(served):
    served("0.0.0.0")
    at = start("opt_shape_chain")
    assert not at.exception
    assert cache._optimizations.find((load(str(sample_path("opt_shape_chain"))).sha256, tuple(pattern_rules()),
                                     None)) is None
