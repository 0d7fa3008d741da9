"""Saves never lose data (explorer/files/atomic_write.py), through the API and the command line: a model (one file over
4 MiB, whose weights are mapped from it, or with external data) saved over itself, over a hard link or a
symlink to its file, or with a `.data` beside it that is the loaded model's weights, is refused with explorer's
error before anything is written, its files unchanged byte for byte (before, `optimize m.onnx -o m.onnx` left
a 112-byte file, or emptied `m.onnx.data` under the mapping); a save, a trace or a sweep's rows that fail
halfway leave the old files as they were and no temporary file behind; a file replaced while it is mapped
keeps its old bytes for whoever maps it."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import explorer
from explorer.cli import main
from explorer.files.atomic_write import TEMP_SUFFIX, WriteRefused, is_loaded
from explorer.model import model_files
from explorer.optimizer import optimize
from explorer.sweep.writer import RowWriter

BIG = 1 << 21  # float32 elements: an 8 MiB weight, whose single-file model is mapped, not read


def weighted(n: int) -> onnx.ModelProto:
    """y = x * w + w through an Identity the optimizer removes."""
    weight = numpy_helper.from_array(np.arange(n, dtype=np.float32), "w")
    nodes = [helper.make_node("Mul", ["x", "w"], ["m"]), helper.make_node("Identity", ["m"], ["i"]),
             helper.make_node("Add", ["i", "w"], ["y"])]
    graph = helper.make_graph(nodes, "weighted", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], [weight])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def single_file(folder: Path) -> Path:
    path = folder / "big.onnx"
    onnx.save(weighted(BIG), path)
    return path


def with_external_data(folder: Path) -> Path:
    path = folder / "m.onnx"
    onnx.save(weighted(1 << 16), path, save_as_external_data=True, location="m.onnx.data", size_threshold=0)
    return path


KINDS = {"single file over 4 MiB": single_file, "external data": with_external_data}


def files(folder: Path) -> dict[str, bytes]:
    """Every file of a folder by name, with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and not p.is_symlink()}


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(TEMP_SUFFIX)]


def runs(path: Path) -> None:
    """The model at `path` still loads and gives x * w + w."""
    model = explorer.load(path)
    n = model.inputs[0].shape[0]
    x = np.ones(n, np.float32)
    w = np.arange(n, dtype=np.float32)
    np.testing.assert_array_equal(explorer.run(model, {"x": x}).outputs["y"], x * w + w)


@pytest.mark.parametrize("kind", KINDS)
def test_optimizing_a_model_over_itself_is_refused_and_its_files_stay_as_they_were(kind, tmp_path, capsys):
    path = KINDS[kind](tmp_path)
    before = files(tmp_path)
    assert main(["optimize", str(path), "-o", str(path), "--no-verify"]) == 2
    err = capsys.readouterr().err
    assert f"error: '{path.name}' is not written: it is the file a loaded model was read from" in err
    assert files(tmp_path) == before and not leftovers(tmp_path)
    runs(path)


@pytest.mark.parametrize("kind", KINDS)
def test_a_hard_link_or_a_symlink_to_a_loaded_models_file_is_refused(kind, tmp_path, capsys):
    path = KINDS[kind](tmp_path)
    weights = tmp_path / "m.onnx.data" if kind == "external data" else path
    os.link(path, tmp_path / "hard.onnx")
    (tmp_path / "soft.onnx").symlink_to(path)
    os.link(weights, tmp_path / "other.onnx.data")  # what saving to other.onnx would write its weights into
    before = files(tmp_path)
    for target in ("hard.onnx", "soft.onnx", "other.onnx"):
        assert main(["optimize", str(path), "-o", str(tmp_path / target), "--no-verify"]) == 2
        assert "is not written: it is the file a loaded model was read from" in capsys.readouterr().err
    assert files(tmp_path) == before and not (tmp_path / "other.onnx").exists() and not leftovers(tmp_path)
    runs(path)


def test_the_api_refuses_too_a_trace_a_report_and_a_model_saved_over_a_loaded_models_files(tmp_path, capsys):
    path = with_external_data(tmp_path)
    data = tmp_path / "m.onnx.data"
    before = files(tmp_path)
    model = explorer.load(path)
    assert is_loaded(path) and is_loaded(data)
    result = optimize(model)
    for target in (path, data):
        with pytest.raises(WriteRefused):
            result.save(target)
        with pytest.raises(WriteRefused):
            model_files.save_model(model, target)
        with pytest.raises(WriteRefused):
            explorer.run(model, {"x": np.ones(1 << 16, np.float32)}).save(target)
    assert main(["run", str(path), "--save", str(data)]) == 2
    assert main(["optimize", str(path), "-o", str(tmp_path / "out.onnx"), "--report", str(path), "--no-verify"]) == 2
    assert "is not written" in capsys.readouterr().err
    assert files(tmp_path) == before and not leftovers(tmp_path)
    result.save(tmp_path / "out.onnx")  # another name: written, and it runs
    runs(tmp_path / "out.onnx")


def failing_copy(monkeypatch):
    """copy_bytes writes half of what it is asked, then the disk is full."""
    real = model_files.copy_bytes

    def copy_half(source, offset, length, out):
        real(source, offset, length // 2, out)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(model_files, "copy_bytes", copy_half)


@pytest.mark.parametrize("kind", KINDS)
def test_a_save_that_fails_halfway_leaves_the_old_files_and_no_temporary_file(kind, tmp_path, monkeypatch):
    source = tmp_path / "source"
    source.mkdir()
    result = optimize(explorer.load(KINDS[kind](source)))
    out = tmp_path / "out"
    out.mkdir()
    result.save(out / "m.onnx")  # the old files the failed save must leave as they are
    before = files(out)
    assert ("m.onnx.data" in before) == (kind == "external data")
    failing_copy(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        result.save(out / "m.onnx")
    assert files(out) == before and not leftovers(out)
    monkeypatch.undo()
    runs(out / "m.onnx")


def test_a_cli_save_that_fails_halfway_exits_2_and_leaves_the_old_files(tmp_path, monkeypatch, capsys):
    path = with_external_data(tmp_path)
    out = tmp_path / "out.onnx"
    assert main(["optimize", str(path), "-o", str(out), "--no-verify"]) == 0
    before = files(tmp_path)
    failing_copy(monkeypatch)
    assert main(["optimize", str(path), "-o", str(out), "--no-verify"]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert files(tmp_path) == before and not leftovers(tmp_path)


def test_a_trace_save_that_fails_halfway_leaves_the_old_trace(tmp_path, monkeypatch):
    model = explorer.load(weighted(8))
    trace = explorer.run(model, {"x": np.ones(8, np.float32)})
    path = tmp_path / "t.npz"
    trace.save(path)
    before = files(tmp_path)

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np.lib.format, "write_array", broken)
    with pytest.raises(OSError):
        trace.save(path)
    monkeypatch.undo()
    assert files(tmp_path) == before and not leftovers(tmp_path)
    np.testing.assert_array_equal(explorer.Trace.load(path).outputs["y"], trace.outputs["y"])


def test_a_sweeps_rows_replace_the_old_files_only_when_the_sweep_ends(tmp_path):
    out = tmp_path / "rows.json"
    out.write_text("old rows")
    (tmp_path / "rows.csv").write_text("old csv")
    writer = RowWriter(out, ["T"], ["y"])
    row = {"index": 0, "input": "T=2 seed 0", "seed": 0, "file": None, "dims": {"T": 2}, "status": "ok",
           "differs": False, "max_abs": 0.0, "max_rel": 0.0, "outputs": {}, "first_divergence": None,
           "first_nonfinite": None, "gates": [], "seconds": 0.1, "message": ""}
    writer.write(row)
    assert out.read_text() == "old rows" and (tmp_path / "rows.csv").read_text() == "old csv"
    assert len(leftovers(tmp_path)) == 2
    writer.close()
    assert json.loads(out.read_text()) == [row] and "T=2 seed 0" in (tmp_path / "rows.csv").read_text()
    assert not leftovers(tmp_path)


def test_written_files_get_the_mode_open_would_give_and_a_replaced_file_keeps_its_own(tmp_path):
    model = explorer.load(weighted(8))
    umask = os.umask(0o022)
    os.umask(umask)
    model_files.save_model(model, tmp_path / "new.onnx")
    assert stat.S_IMODE((tmp_path / "new.onnx").stat().st_mode) == 0o666 & ~umask
    (tmp_path / "new.onnx").chmod(0o640)
    model_files.save_model(model, tmp_path / "new.onnx")
    assert stat.S_IMODE((tmp_path / "new.onnx").stat().st_mode) == 0o640


def test_a_file_replaced_while_it_is_mapped_keeps_its_old_bytes_for_the_mapping(tmp_path):
    """A trace with a big member is mapped from its file; saving another trace over that file replaces it
    without touching the mapped bytes (before, the file was emptied first: reading the mapping was a SIGBUS)."""
    n = 1 << 20
    model = explorer.load(weighted(n))
    first = explorer.run(model, {"x": np.ones(n, np.float32)})
    path = tmp_path / "t.npz"
    first.save(path)
    loaded = explorer.Trace.load(path)
    explorer.run(model, {"x": np.zeros(n, np.float32)}).save(path)
    np.testing.assert_array_equal(loaded.outputs["y"], first.outputs["y"])
    np.testing.assert_array_equal(explorer.Trace.load(path).outputs["y"], np.arange(n, dtype=np.float32))


# Where explorer may write a file without atomic_write: its own scratch folders (a run's spill segments, the copy
# of a model handed to onnxruntime), which no user names and nothing else reads.
SCRATCH_WRITERS = {("spill.py", "__init__"), ("model_files.py", "runtime_copy"), ("model_files.py", "_place_file")}


def _writes(path: Path) -> list[tuple[str, int]]:
    """(function, line) of each call in a module that writes a file by itself: open() for writing, Path's
    write_text/write_bytes, onnx.save(_tensor), np.save(z), ndarray.tofile, a ZipFile opened for writing, except
    into an in-memory buffer (io.BytesIO) or in a function that writes through `replacing` or `staged`."""
    import ast

    def mode_of(call: ast.Call) -> set[str]:
        given = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
        return set(given.value) if isinstance(given, ast.Constant) and isinstance(given.value, str) else set()

    def called(call: ast.Call) -> tuple[str | None, str]:
        func = call.func
        if isinstance(func, ast.Name):
            return None, func.id
        if isinstance(func, ast.Attribute):
            return (func.value.id if isinstance(func.value, ast.Name) else "?"), func.attr
        return "?", ""

    tree = ast.parse(path.read_text())
    atomic_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and (node.module or "").endswith("atomic_write") for alias in node.names}
    found = []
    for function in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
        atomic = any(called(c)[1] in ("replacing", "staged") for c in calls)
        buffers = {target.id for node in ast.walk(function) if isinstance(node, ast.Assign)
                   and isinstance(node.value, ast.Call) and called(node.value)[1] == "BytesIO"
                   for target in node.targets if isinstance(target, ast.Name)}
        for call in calls:
            owner, name = called(call)
            first = call.args[0] if call.args else None
            in_memory = isinstance(first, ast.Name) and first.id in buffers
            writes = (name == "open" and owner in (None, "io", "builtins") and bool(mode_of(call) & set("wax+"))) \
                or (name == "ZipFile" and bool(mode_of(call) & set("wax")) and not atomic and not in_memory) \
                or (name in ("write_text", "write_bytes") and (owner is not None or name not in atomic_names)
                    and owner != "atomic_write") \
                or name == "tofile" \
                or (name in ("save", "save_model", "save_tensor", "savez", "savez_compressed")
                    and owner in ("onnx", "np", "numpy") and not in_memory and not atomic)
            if writes:
                found.append((function.name, call.lineno))
    return sorted(set(found), key=lambda f: f[1])


def test_every_file_explorer_writes_goes_through_atomic_write():
    """A new writer of models, traces, rows or reports must write through explorer/files/atomic_write.py (a temporary
    file moved into place, loaded models' files refused): this lists every other write in explorer/."""
    package = Path(explorer.__file__).parent
    stray = [f"{path.relative_to(package)}:{line} in {function}"
             for path in sorted(package.rglob("*.py")) if path.name != "atomic_write.py"
             for function, line in _writes(path) if (path.name, function) not in SCRATCH_WRITERS]
    assert not stray, "write these through explorer.files.atomic_write (replacing, write_text, staged): " + ", ".join(stray)
