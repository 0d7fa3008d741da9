"""A shared app's saves and reads, driven with AppTest: the Optimizer page saves only into the folder the operator
named for saves (EXPLORER_SAVE_DIR; none named: no saves), only .onnx/.data/.npz/.html files (never
explorer.toml); a save over any loaded model's file (this session's or another's: its source, its weights, a
hard link to one) is refused with the files unchanged byte for byte, and the model still opens in a new session
(before, its weights were emptied under the mapping and the next session to open it brought the server down); a
save that fails halfway leaves the old files and no temporary file. The Sweep page reads no file out of the
allowed folders, whatever symlink leads there: a symlinked .npz or a test data set's input_0.pb is refused in
its row and when opened in the Compare page."""
from __future__ import annotations

import os

import numpy as np
import pytest
from streamlit import config

import explorer
from explorer.files.access import NO_SAVES, REFUSED, SAVE_NAMES, SAVE_REFUSED
from explorer.files.atomic_write import TEMP_SUFFIX
from explorer.model import model_files
from explorer.ui import state
from explorer.ui.sweeping import key
from tests.support.apptest import PAGES, start
from tests.support.markdown_text import shown
from tests.support.saves_models import weighted_model
from tests.support.sweep_models import planted_pair, save_test_data_set

REFUSED_SAVE = "is not written: it is the file a loaded model was read from"
TAKEN = "a file of that name is already in its save folder"
SECRET = 1234.5  # the value only the file outside the allowed folders holds


@pytest.fixture
def served(monkeypatch):
    """A shared app (EXPLORER_SHARED=1 on 0.0.0.0, restored after); the operator's settings from the environment."""
    before = config.get_option("server.address")
    for name in ("EXPLORER_ALLOWED_DIRS", "EXPLORER_SCHEDULERS", "EXPLORER_SAVE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EXPLORER_SETTINGS", "/nonexistent/explorer.toml")
    monkeypatch.setenv("EXPLORER_SHARED", "1")
    config.set_option("server.address", "0.0.0.0")
    yield monkeypatch
    config.set_option("server.address", before)


@pytest.fixture
def shared_folder(tmp_path, served):
    """An allowed folder that is also the save folder, with two models with external data in it."""
    folder = tmp_path / "class"
    folder.mkdir()
    weighted_model(folder / "m.onnx")
    weighted_model(folder / "n.onnx", 1 << 17)
    served.setenv("EXPLORER_ALLOWED_DIRS", str(folder))
    served.setenv("EXPLORER_SAVE_DIR", str(folder))
    return folder


def files(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and not p.is_symlink()}


def leftovers(folder) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(TEMP_SUFFIX)]


def optimizer_page(path):
    at = start()
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(path)).run()
    assert not at.error, [e.value for e in at.error]
    return at.switch_page(PAGES["optimizer"]).run()


def save(at, target):
    at.text_input(key=state.W_OPTIMIZED_PATH).input(str(target)).run()
    return at.button(key=state.W_OPTIMIZED_SAVE).click().run()


def errors(at) -> str:
    return "\n".join(shown(e.value) for e in at.error)


def test_saving_over_a_loaded_models_files_is_refused_and_they_stay_as_they_were(shared_folder):
    folder = shared_folder
    os.link(folder / "m.onnx", folder / "hard.onnx")
    os.link(folder / "m.onnx.data", folder / "other.onnx.data")  # what a save to other.onnx would write into
    before = files(folder)
    at = optimizer_page(folder / "m.onnx")
    for target in ("m.onnx", "hard.onnx", "other.onnx", "m.onnx.data"):
        at = save(at, folder / target)
        assert "Not saved" in errors(at) and REFUSED_SAVE in errors(at), target
        assert not at.exception
    assert files(folder) == before and not leftovers(folder) and not (folder / "other.onnx").exists()
    # another session, on another model: m.onnx is still a loaded model's file (this server loaded it)
    at = save(optimizer_page(folder / "n.onnx"), folder / "m.onnx")
    assert REFUSED_SAVE in errors(at) and files(folder) == before
    # a new session opens the model and runs it: its weights are all there
    at = start()
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(folder / "m.onnx")).run()
    at.switch_page(PAGES["step"]).run()
    assert not at.exception and not at.error
    assert at.session_state[state.ACTIVE].path == str((folder / "m.onnx").resolve())


def test_a_save_to_a_new_name_in_the_save_folder_is_written_and_opens(shared_folder):
    folder = shared_folder
    at = save(optimizer_page(folder / "m.onnx"), folder / "m.optimized.onnx")
    assert not at.error and any("Saved" in shown(s.value) for s in at.success)
    model = explorer.load(folder / "m.optimized.onnx")
    n = 1 << 18
    x = np.ones(n, np.float32)
    np.testing.assert_array_equal(explorer.run(model, {"x": x}).outputs["y"], x * np.arange(n) + np.arange(n))
    assert not leftovers(folder)


def test_a_shared_app_never_saves_over_a_file_another_visitor_saved_or_the_operator_put_there(shared_folder):
    """Before, any session's save replaced a file of the same name in the save folder: another visitor's save, or
    a file the operator had put there (one no session had loaded)."""
    folder = shared_folder
    (folder / "kept.onnx").write_bytes(b"the operator's")
    first = save(optimizer_page(folder / "m.onnx"), folder / "mine.onnx")
    assert not first.error
    saved = files(folder)
    second = optimizer_page(folder / "n.onnx")  # another visitor, on another model
    for target in ("mine.onnx", "kept.onnx"):
        second = save(second, folder / target)
        assert TAKEN in errors(second) and not second.exception, target
    (folder / "alone.onnx.data").write_bytes(b"the operator's weights")
    second = save(second, folder / "alone.onnx")  # its weights would replace a file that is not the visitor's
    assert TAKEN in errors(second) and not (folder / "alone.onnx").exists()
    assert files(folder) == {**saved, "alone.onnx.data": b"the operator's weights"} and not leftovers(folder)
    second = save(second, folder / "theirs.onnx")  # a new name: saved, and saved again over its own file
    assert not second.error and not save(second, folder / "theirs.onnx").error
    first = save(first, folder / "mine.onnx")  # the first visitor replaces its own file, not the second's
    assert not first.error
    first = save(first, folder / "theirs.onnx")
    assert TAKEN in errors(first)
    assert explorer.load(folder / "mine.onnx").source and explorer.load(folder / "theirs.onnx").source


def test_a_shared_app_saves_only_the_file_types_it_names_into_its_save_folder(shared_folder, tmp_path):
    folder = shared_folder
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (folder / "escape.onnx").symlink_to(outside / "escape.onnx")
    at = optimizer_page(folder / "m.onnx")
    for name in ("explorer.toml", "notes.txt", "m.py", ".hidden.onnx"):
        at = save(at, folder / name)
        assert SAVE_NAMES in errors(at), name
        assert not (folder / name).exists()
    for target in (outside / "x.onnx", folder / "escape.onnx", folder / ".." / "elsewhere" / "y.onnx",
                   folder / "missing" / "z.onnx"):
        at = save(at, target)
        assert SAVE_REFUSED in errors(at), target
    assert list(outside.iterdir()) == []


def test_a_shared_app_without_a_save_folder_offers_no_save(served, tmp_path):
    weighted_model(tmp_path / "m.onnx")
    served.setenv("EXPLORER_ALLOWED_DIRS", str(tmp_path))
    at = optimizer_page(tmp_path / "m.onnx")
    assert NO_SAVES in "\n".join(shown(i.value) for i in at.info)
    with pytest.raises(KeyError):
        at.button(key=state.W_OPTIMIZED_SAVE)


def test_a_save_that_fails_halfway_leaves_the_old_files_and_no_temporary_file(shared_folder, monkeypatch):
    folder = shared_folder
    at = save(optimizer_page(folder / "m.onnx"), folder / "out.onnx")
    assert not at.error
    before = files(folder)
    real = model_files.copy_bytes

    def copy_half(source, offset, length, out):
        real(source, offset, length // 2, out)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(model_files, "copy_bytes", copy_half)
    at = at.button(key=state.W_OPTIMIZED_SAVE).click().run()
    assert "Not saved" in errors(at) and "No space left on device" in errors(at) and not at.exception
    assert files(folder) == before and not leftovers(folder)


@pytest.fixture
def leaky_inputs(tmp_path, served, sweep_scheduler):
    """An allowed folder with the planted model and a folder of inputs: a good .npz, a symlinked .npz and a test
    data set whose input_0.pb lead out of the allowed folders to values nothing may read."""
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    model_path, _ = planted_pair(allowed)
    inputs = allowed / "inputs"
    inputs.mkdir()
    np.savez(inputs / "good.npz", X=np.ones((3, 3), np.float32))
    secret = np.full((3, 3), SECRET, np.float32)
    np.savez(outside / "secret.npz", X=secret)
    (inputs / "leak.npz").symlink_to(outside / "secret.npz")
    save_test_data_set(outside / "set", [secret], [])
    (inputs / "test_data_set_0").mkdir()
    (inputs / "test_data_set_0" / "input_0.pb").symlink_to(outside / "set" / "input_0.pb")
    served.setenv("EXPLORER_ALLOWED_DIRS", str(allowed))
    served.setenv("EXPLORER_SCHEDULERS", sweep_scheduler)
    return model_path, inputs


def test_the_sweep_page_reads_no_file_out_of_the_allowed_folders(leaky_inputs):
    model_path, inputs = leaky_inputs
    at = start(timeout=120)
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input(str(model_path)).run()
    at = at.switch_page("explorer/ui/pages/sweep.py").run()
    at.radio(key=key("inputs")).set_value("folder").run()
    at.text_input(key=key("folder")).input(str(inputs)).run()
    at.radio(key=key("where")).set_value("scheduler").run()
    at.button(key=key("start")).click().run()
    job, _ = at.session_state[state.SWEEP_JOB]
    assert job.wait(240)
    at = at.run()
    table = at.dataframe[0].value
    rows = {row["input"]: row for row in table.to_dict("records")}
    assert set(rows) == {"good.npz", "leak.npz", "test_data_set_0"}
    assert rows["good.npz"]["verdict"] == "agrees"
    for name in ("leak.npz", "test_data_set_0"):
        assert rows[name]["verdict"] == "error" and rows[name]["message"] == REFUSED
    # opened in the Compare page, the refused input is refused again: none of its values shows
    label = next(o for o in at.selectbox(key=key("pick")).options if o.startswith("leak.npz"))
    at.selectbox(key=key("pick")).select(label).run()
    at.button(key=key("open")).click().run()
    assert not at.exception
    assert at.radio(key=state.W_INPUT_MODE).value == "Sweep input"
    page = "\n".join([errors(at)] + [m.value for m in at.markdown] + [t.value for t in at.text]
                     + [c.value for c in at.caption])
    assert REFUSED in page and "1234" not in page
    at.switch_page(PAGES["step"]).run()
    page = "\n".join([errors(at)] + [m.value for m in at.markdown] + [t.value for t in at.text]
                     + [h.proto.body for h in at.html])
    assert "1234" not in page
