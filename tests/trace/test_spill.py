"""Values past the in-memory budget go to the run folder on disk and stay arrays (memory-mapped views of its .npy
segment files), read the same way; past Limits.trace_disk_bytes they become summaries; trace files hold them;
the folder goes with its trace."""
from __future__ import annotations

import gc
import mmap
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import explorer
from explorer.trace import spill
from explorer.trace.values import ValueSummary

SEQ, BATCH, HIDDEN, FEATURES = 30, 2, 8, 4
RNG = np.random.default_rng(0)
FEEDS = {"X": RNG.standard_normal((SEQ, BATCH, FEATURES)).astype(np.float32)}


def lstm_then_loop() -> explorer.Model:
    """Two stacked LSTMs, then a Loop of three iterations over the last state (Tanh(h @ V)), then a Tile big
    enough (2 MiB) to be mapped from a saved trace."""
    inits = []
    for k, width in enumerate((FEATURES, HIDDEN)):
        for name, shape in ((f"W{k}", (1, 4 * HIDDEN, width)), (f"R{k}", (1, 4 * HIDDEN, HIDDEN)),
                            (f"B{k}", (1, 8 * HIDDEN))):
            inits.append(numpy_helper.from_array((RNG.standard_normal(shape) / 3).astype(np.float32), name))
    inits += [numpy_helper.from_array(np.array([1], np.int64), "one"),
              numpy_helper.from_array((RNG.standard_normal((HIDDEN, HIDDEN)) / 3).astype(np.float32), "V"),
              numpy_helper.from_array(np.array(3, np.int64), "trips"),
              numpy_helper.from_array(np.array([1, 8192, 4], np.int64), "reps")]
    body = h.make_graph([h.make_node("MatMul", ["h", "V"], ["m"], name="mm"), h.make_node("Tanh", ["m"], ["h2"]),
                         h.make_node("Identity", ["c"], ["c2"])], "body",
                        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
                         h.make_tensor_value_info("h", T.FLOAT, [1, BATCH, HIDDEN])],
                        [h.make_tensor_value_info("c2", T.BOOL, []),
                         h.make_tensor_value_info("h2", T.FLOAT, [1, BATCH, HIDDEN])])
    nodes = [h.make_node("LSTM", ["X", "W0", "R0", "B0"], ["Y0"], hidden_size=HIDDEN, name="lstm0"),
             h.make_node("Squeeze", ["Y0", "one"], ["H0"], name="squeeze0"),
             h.make_node("LSTM", ["H0", "W1", "R1", "B1"], ["Y1", "last"], hidden_size=HIDDEN, name="lstm1"),
             h.make_node("Loop", ["trips", "", "last"], ["state"], body=body, name="loop"),
             h.make_node("Tile", ["state", "reps"], ["big"], name="tile")]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("X", T.FLOAT, [SEQ, BATCH, FEATURES])],
                         [h.make_tensor_value_info("Y1", T.FLOAT, None), h.make_tensor_value_info("big", T.FLOAT, None)],
                         inits)
    return explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]))


MODEL = lstm_then_loop()


def on_disk(array: np.ndarray) -> bool:
    base = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


def assert_same_values(a: explorer.Trace, b: explorer.Trace) -> None:
    assert len(a.events) == len(b.events)
    for x, y in zip(a.events, b.events):
        assert x.outputs.keys() == y.outputs.keys()
        for name in x.outputs:
            np.testing.assert_array_equal(x.outputs[name], y.outputs[name])
    for path in ("lstm0", "lstm1"):
        for name, gate in a.gates(path).items():
            np.testing.assert_array_equal(gate, b.gates(path)[name])
    for x, y in zip(a.iterations("loop"), b.iterations("loop")):
        for name in x.outputs:
            np.testing.assert_array_equal(x.outputs[name], y.outputs[name])


def test_past_the_budget_every_value_stays_an_array_read_from_disk():
    memory = explorer.run(MODEL, FEEDS)
    disk = explorer.run(MODEL, FEEDS, limits=explorer.Limits(trace_budget_bytes=0))
    assert memory.spilled_at is None and memory.disk_bytes == 0
    assert disk.spilled_at == 0 and disk.recorded_bytes == 0 and disk.budget_exceeded_at is None
    assert not any(event.summarized for event in disk.events)
    assert_same_values(memory, disk)
    gate = disk.gates("lstm1")["f"]
    assert on_disk(gate) and not gate.flags.writeable
    assert on_disk(disk.outputs["big"]) and on_disk(disk.iterations("loop")[2].outputs["h2"])
    folder = disk.spill.path
    assert sorted(os.listdir(folder)) == ["values-0000.npy"]
    assert np.load(folder / "values-0000.npy", mmap_mode="r").dtype == np.uint8  # an .npy file of bytes
    assert disk.disk_bytes >= disk.outputs["big"].nbytes + sum(g.nbytes for g in disk.gates("lstm0").values())


def test_the_next_node_reads_the_value_from_disk_and_views_of_it_take_no_more():
    disk = explorer.run(MODEL, FEEDS, limits=explorer.Limits(trace_budget_bytes=0))
    y0 = disk.events_of("lstm0")[0].outputs["Y0"]
    squeezed = disk.events_of("squeeze0")[0]
    assert squeezed.inputs["Y0"] is y0
    assert np.shares_memory(squeezed.outputs["H0"], y0)  # a view of the file, not written again


def test_the_budget_splits_the_run_between_memory_and_disk():
    first = explorer.run(MODEL, FEEDS).events[0]
    budget = sum(v.nbytes for v in first.outputs.values()) + sum(v.nbytes for v in first.info["gates"].values())
    trace = explorer.run(MODEL, FEEDS, limits=explorer.Limits(trace_budget_bytes=budget))
    assert trace.spilled_at == 1
    assert not on_disk(trace.events[0].outputs["Y0"]) and on_disk(trace.gates("lstm1")["i"])
    assert trace.recorded_bytes == budget and trace.disk_bytes > 0


def test_past_the_disk_limit_values_are_summaries():
    limit = 64 << 10
    trace = explorer.run(MODEL, FEEDS, limits=explorer.Limits(trace_budget_bytes=0, trace_disk_bytes=limit))
    assert trace.disk_bytes <= limit and trace.budget_exceeded_at is not None
    assert trace.budget_exceeded_at > trace.spilled_at == 0
    early, late = trace.events[0], trace.events[-1]
    assert on_disk(early.outputs["Y0"]) and not early.summarized
    assert late.summarized and isinstance(late.outputs["big"], ValueSummary)


def test_no_disk_gives_summaries_past_the_budget_as_before():
    trace = explorer.run(MODEL, FEEDS, limits=explorer.Limits(trace_budget_bytes=0, trace_disk_bytes=0))
    assert trace.spilled_at is None and trace.spill is None and trace.budget_exceeded_at == 0
    assert all(event.summarized for event in trace.events)


def test_strings_past_the_budget_are_summaries_numbers_stay_arrays():
    graph = h.make_graph([h.make_node("Identity", ["s"], ["t"]), h.make_node("Neg", ["x"], ["y"])], "g",
                         [h.make_tensor_value_info("s", T.STRING, [2]), h.make_tensor_value_info("x", T.FLOAT, [3])],
                         [h.make_tensor_value_info("t", T.STRING, [2]), h.make_tensor_value_info("y", T.FLOAT, [3])])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]))
    trace = explorer.run(model, {"s": np.array(["a", "b"], object), "x": np.ones(3, np.float32)},
                         limits=explorer.Limits(trace_budget_bytes=0))
    strings, numbers = trace.events
    assert strings.summarized and isinstance(strings.outputs["t"], ValueSummary)
    assert not numbers.summarized and on_disk(numbers.outputs["y"])


def test_a_saved_trace_holds_the_spilled_values_and_maps_the_big_ones_back(tmp_path):
    disk = explorer.run(MODEL, FEEDS, limits=explorer.Limits(trace_budget_bytes=0))
    disk.save(tmp_path / "trace.npz")
    loaded = explorer.Trace.load(tmp_path / "trace.npz")
    assert_same_values(disk, loaded)
    assert loaded.spilled_at == 0 and loaded.disk_bytes == disk.disk_bytes
    big = loaded.outputs["big"]
    assert big.nbytes >= 1 << 20 and on_disk(big)  # mapped from the trace file, not read into memory
    assert not on_disk(loaded.gates("lstm0")["i"])  # small members are read


def test_the_run_folder_goes_with_its_trace():
    trace = explorer.run(MODEL, FEEDS, limits=explorer.Limits(trace_budget_bytes=0))
    folder = trace.spill.path
    value = trace.outputs["Y1"]
    assert folder.is_dir()
    del trace
    gc.collect()
    assert not folder.exists()
    assert float(value.sum()) == float(value.sum())  # an array kept by the caller still reads (unlinked file)


def test_folders_of_processes_that_died_are_removed():
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = Path(tempfile.gettempdir()) / f"{spill.PREFIX}{int(dead.stdout)}-left"
    orphan.mkdir(exist_ok=True)
    (orphan / "values-0000.npy").write_bytes(b"x")
    trace = explorer.run(MODEL, FEEDS, limits=explorer.Limits(trace_budget_bytes=0))
    assert not orphan.exists() and trace.spill.path.exists()


@pytest.mark.parametrize("value", [np.arange(12, dtype=np.float64).reshape(3, 4).T,  # strided
                                   np.zeros((0, 5), np.float32), np.array(3.5, np.float16),
                                   np.arange(10, dtype=np.int8)[::3]])
def test_any_numeric_array_comes_back_from_disk_as_it_was(value):
    folder = spill.RunFolder(1 << 20)
    try:
        stored = folder.store(value)
        assert stored is not None and stored.dtype == value.dtype and stored.shape == value.shape
        np.testing.assert_array_equal(stored, value)
    finally:
        spill._remove(folder)


def test_a_folder_refuses_what_passes_its_limit():
    folder = spill.RunFolder(100)
    try:
        assert folder.store(np.zeros(10, np.float64)) is not None
        assert folder.store(np.zeros(10, np.float64)) is None
        assert folder.bytes == 80
    finally:
        spill._remove(folder)


def test_the_default_disk_limit_is_half_the_free_disk_at_most_16_gib():
    assert 0 < explorer.Limits().trace_disk_bytes <= 16 << 30


def test_the_command_line_says_where_the_values_are(tmp_path, capsys):
    from explorer.cli import main

    path = tmp_path / "model.onnx"
    path.write_bytes(MODEL.proto.SerializeToString())
    np.savez(tmp_path / "x.npz", **FEEDS)
    assert main(["run", str(path), "--inputs", str(tmp_path / "x.npz"), "--trace-mb", "0"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("trace values:"))
    assert "0 B in memory" in line and f"on disk in {tempfile.gettempdir()}" in line and "(from event 0)" in line
    assert main(["run", str(path), "--inputs", str(tmp_path / "x.npz"), "--trace-mb", "0",
                 "--trace-disk-mb", "0"]) == 0
    assert "summaries from event 0" in capsys.readouterr().out


@pytest.mark.usefixtures("fresh_app")
def test_the_sidebar_shows_the_trace_size_where_it_lives_and_the_limits():
    from tests.support.apptest import start
    from tests.support.markdown_text import shown

    at = start()
    captions = [shown(c.value) for c in at.sidebar.caption]
    assert "trace values: 612 B in memory" in captions
    assert any(c.startswith("limits: 512 MB in memory, ") and c.endswith(" on disk, then summaries") for c in captions)
    at.number_input(key="w_budget_mb").set_value(0).run()
    captions = [shown(c.value) for c in at.sidebar.caption]
    on_disk_line = re.compile(rf"trace values: 0 B in memory, \d+ B on disk in {re.escape(tempfile.gettempdir())}/"
                              rf"{spill.PREFIX}\S+ \(from event 0\)")
    assert any(on_disk_line.fullmatch(c) for c in captions), captions
    at.number_input(key="w_disk_mb").set_value(0).run()
    captions = [shown(c.value) for c in at.sidebar.caption]
    assert "trace values: 0 B in memory, summaries from event 0" in captions, captions
