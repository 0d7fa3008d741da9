"""Every file a sweep, an input folder or a test data set reads in a shared app is checked where it is read: the
file actually opened must lie inside the allowed folders, symlinks followed (before, only the folder was
checked: a symlinked `leak.npz`, or a test data set's `input_0.pb`, pointing out of them was read and its
values swept). Any such file gets the one refusal, a FIFO is never opened for good (it would block the reader),
and served locally everything reads as before."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

import explorer
from explorer.errors import ExplorerError
from explorer.files.access import REFUSED, AccessRefused, confined_folder, open_confined, read_confined
from explorer.inputs.input_files import feeds_from_npz_file, feeds_from_test_data, outputs_from_test_data
from explorer.sweep.plan import Item
from explorer.sweep.task import feeds_of, reference_of
from tests.support.sweep_models import planted_pair, save_test_data_set

SECRET = np.full((3, 3), 1234.5, np.float32)  # values only the file outside holds


@pytest.fixture
def place(tmp_path):
    """(allowed folder, outside folder, the model): the model and a good input inside; outside, an .npz and a
    test data set whose values must never be read; symlinks inside pointing at each."""
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    model_path, _ = planted_pair(allowed)
    model = explorer.load(model_path)
    inputs = allowed / "inputs"
    inputs.mkdir()
    np.savez(inputs / "good.npz", X=np.ones((3, 3), np.float32))
    np.savez(outside / "secret.npz", X=SECRET)
    (inputs / "leak.npz").symlink_to(outside / "secret.npz")
    outputs = [o for o in explorer.run(model, {"X": SECRET}).outputs.values()]
    save_test_data_set(outside / "set", [SECRET], outputs)
    save_test_data_set(inputs / "test_data_set_0", [np.ones((3, 3), np.float32)], outputs)
    (inputs / "test_data_set_0" / "input_0.pb").unlink()
    (inputs / "test_data_set_0" / "input_0.pb").symlink_to(outside / "set" / "input_0.pb")
    save_test_data_set(inputs / "test_data_set_1", [np.ones((3, 3), np.float32)], outputs)
    (inputs / "test_data_set_1" / "output_0.pb").unlink()
    (inputs / "test_data_set_1" / "output_0.pb").symlink_to(outside / "set" / "output_0.pb")
    (inputs / "test_data_set_2").symlink_to(outside / "set")
    return allowed.resolve(), outside, model


def refused(call, *args) -> None:
    with pytest.raises(AccessRefused) as raised:
        call(*args)
    assert str(raised.value) == REFUSED


def test_a_symlinked_file_or_folder_out_of_the_allowed_folders_is_refused_where_it_is_read(place):
    allowed, outside, model = place
    inputs = allowed / "inputs"
    folders = (allowed,)
    np.testing.assert_array_equal(feeds_from_npz_file(inputs / "good.npz", None, folders)["X"], 1)
    refused(feeds_from_npz_file, inputs / "leak.npz", None, folders)
    refused(feeds_from_npz_file, inputs / "missing.npz", None, folders)
    refused(feeds_from_test_data, model, inputs / "test_data_set_0", None, folders)
    refused(outputs_from_test_data, model, inputs / "test_data_set_1", None, folders)
    refused(feeds_from_test_data, model, inputs / "test_data_set_2", None, folders)  # not even listed
    refused(outputs_from_test_data, model, inputs / "test_data_set_2", None, folders)
    assert feeds_from_test_data(model, inputs / "test_data_set_1", None, folders)["X"].shape == (3, 3)
    for index, name in enumerate(["leak.npz", "test_data_set_0", "test_data_set_2"]):
        refused(feeds_of, model, Item(index, name, path=str(inputs / name)), explorer.Limits(), folders)
    refused(reference_of, model, Item(0, "set", path=str(inputs / "test_data_set_1"),
                                      reference=str(inputs / "test_data_set_1")), explorer.Limits(), folders)
    # served on this machine, local paths read as they always did
    np.testing.assert_array_equal(feeds_from_npz_file(inputs / "leak.npz")["X"], SECRET)
    np.testing.assert_array_equal(feeds_from_test_data(model, inputs / "test_data_set_0")["X"], SECRET)


def test_a_symlink_that_stays_inside_the_allowed_folders_reads(place):
    allowed, _, _ = place
    (allowed / "inputs" / "again.npz").symlink_to(allowed / "inputs" / "good.npz")
    assert read_confined(allowed / "inputs" / "again.npz", (allowed,)) == (allowed / "inputs" / "good.npz").read_bytes()
    assert confined_folder(allowed / "inputs", (allowed,)) == allowed / "inputs"


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "input_0.pb"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def read() -> None:
        for folders in ((tmp_path.resolve(),), None):
            try:
                open_confined(fifo, folders)
            except ExplorerError as exc:
                outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "opening a FIFO blocked"
    assert [type(e) for e in outcome] == [AccessRefused, ExplorerError] and str(outcome[0]) == REFUSED


def test_a_sweep_confined_to_the_allowed_folders_refuses_each_file_out_of_them(place, sweep_scheduler):
    allowed, _, model = place
    result = explorer.sweep(model.path, "onnxruntime", allowed / "inputs", folders=[allowed],
                            scheduler=sweep_scheduler)
    rows = {row["input"]: row for row in result.rows}
    assert set(rows) == {"good.npz", "leak.npz", "test_data_set_0", "test_data_set_1", "test_data_set_2"}
    assert rows["good.npz"]["status"] == "ok" and rows["test_data_set_1"]["status"] == "ok"
    for name in ("leak.npz", "test_data_set_0", "test_data_set_2"):
        assert rows[name]["status"] == "error" and rows[name]["message"] == REFUSED
    with_references = explorer.sweep(model.path, allowed / "inputs", [allowed / "inputs" / "test_data_set_1"],
                                     folders=[allowed], scheduler=sweep_scheduler)
    [row] = with_references.rows
    assert row["status"] == "error" and row["message"] == REFUSED  # its output_0.pb leads out
    with pytest.raises(AccessRefused):  # a folder out of them is refused before the sweep starts
        explorer.sweep(model.path, "onnxruntime", allowed / "inputs" / "test_data_set_2", folders=[allowed],
                       scheduler=sweep_scheduler)


def test_unconfined_sweeps_read_as_before(place, sweep_scheduler):
    allowed, _, model = place
    result = explorer.sweep(model.path, "onnxruntime", [allowed / "inputs" / "leak.npz"], scheduler=sweep_scheduler)
    assert [row["status"] for row in result.rows] == ["ok"]


def test_paths_are_resolved_against_the_allowed_folders_not_their_spelling(place):
    allowed, outside, _ = place
    spelled = Path(str(allowed) + "/inputs/../../outside/secret.npz")
    refused(read_confined, spelled, (allowed,))
    refused(confined_folder, allowed / "inputs" / ".." / ".." / "outside", (allowed,))
    refused(read_confined, allowed / "inputs", (allowed,))  # a folder is not a file
