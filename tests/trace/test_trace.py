"""Trace queries and the exact save/load round trip."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import explorer
from explorer import Limits, Trace
from explorer.errors import TraceFileError
from explorer.trace.trace import Event, Iteration, RunError
from explorer.trace.values import ValueSummary

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def assert_same(a, b, where="value"):
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(a, b)  # NaN-aware, exact
        else:
            assert a.tobytes() == b.tobytes() if a.dtype.kind != "O" else a.tolist() == b.tolist(), where
    elif isinstance(a, Mapping):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def assert_traces_equal(t1: Trace, t2: Trace) -> None:
    assert t1.model_sha256 == t2.model_sha256 and t1.seconds == t2.seconds
    assert t1.budget_exceeded_at == t2.budget_exceeded_at and t1.recorded_bytes == t2.recorded_bytes
    assert_same(t1.error, t2.error, "error")
    assert_same(t1.feeds, t2.feeds, "feeds")
    assert_same(t1.outputs, t2.outputs, "outputs")
    assert len(t1.events) == len(t2.events)
    for e1, e2 in zip(t1.events, t2.events):
        assert (e1.index, e1.node, e1.op_type, e1.iteration, e1.seconds, e1.summarized) == \
               (e2.index, e2.node, e2.op_type, e2.iteration, e2.seconds, e2.summarized)
        assert_same(e1.inputs, e2.inputs, f"{e1.node}.inputs")
        assert_same(e1.outputs, e2.outputs, f"{e1.node}.outputs")
        assert_same(e1.info, e2.info, f"{e1.node}.info")
    assert len(t1.iteration_records) == len(t2.iteration_records)
    for i1, i2 in zip(t1.iteration_records, t2.iteration_records):
        assert (i1.node, i1.index) == (i2.node, i2.index)
        assert_same(i1.inputs, i2.inputs)
        assert_same(i1.outputs, i2.outputs)
        assert_same(i1.info, i2.info)


@pytest.mark.parametrize("sample", ["nested_loops", "loop_sequence", "tiny_mlp", "scan_two_axes"])
def test_recorded_traces_round_trip_exactly(tmp_path, sample):
    model = explorer.load(SAMPLES / f"{sample}.onnx")
    feeds = model.example_inputs(seed=1, dims={"T": 3, "batch": 2})
    if sample == "loop_sequence":
        feeds["n"] = np.array(4, np.int64)
    trace = explorer.run(model, feeds)
    trace.save(tmp_path / "t.npz")
    loaded = Trace.load(tmp_path / "t.npz")
    assert_traces_equal(trace, loaded)
    assert loaded.branch("enc/body/inner/body/branch", (1, 1)) == trace.branch(
        "enc/body/inner/body/branch", (1, 1)) if sample == "nested_loops" else True


def test_every_value_kind_round_trips(tmp_path):
    trace = Trace(model_source="<test>", model_sha256="abc", feeds={"x": np.arange(3, dtype=np.int8)})
    values = {
        "f32": np.array([[1.5, np.nan], [np.inf, -0.0]], np.float32),
        "bf16": np.array([1.0, 2.5, -3.0], dtype=ml_dtypes.bfloat16),
        "f8": np.array([0.5, 1.0], dtype=ml_dtypes.float8_e4m3fn),
        "strings": np.array([["a", "ü"], ["<x>", ""]], dtype=object),
        "scalar": np.array(7, np.int64),
        "seq": [np.ones(2, np.float16), np.zeros((0, 3), np.float32)],
        "empty_optional": None,
        "bools": np.array([True, False]),
        "complex": np.array([1 + 2j], np.complex64),
    }
    summary = ValueSummary((2, 3), "float32", -1.0, 2.0, 0.5, 1, 0)
    trace.events.append(Event.of(0, 'n"odd\n', "Custom", (1, 2), {"in": values["f32"]}, values, 0.25,
                                 {"branch": "then_branch", "children": (0, 0), "gates": {"z": values["f32"]},
                                  "nested": {"tuple": (1, "a")}, "nan": float("nan")}, False))
    trace.events.append(Event.of(1, "late", "Relu", (), {"x": summary}, {"y": summary}, 0.0, {}, True))
    trace.iteration_records.append(Iteration("loop", (3,), {"i": np.array(3)}, {"seq": values["seq"]}, {"t": 1}))
    trace.outputs = {"out": values["bf16"]}
    trace.error = RunError("boom", "ExecutionError", "late", "Relu", (3,))
    trace.budget_exceeded_at = 1
    trace.save(tmp_path / "t.npz")
    assert_traces_equal(trace, Trace.load(tmp_path / "t.npz"))


def test_run_errors_are_stored_as_in_earlier_files(tmp_path):
    """The file format did not change when Trace.error became a RunError: files written before still load."""
    import json
    import zipfile

    trace = Trace()
    trace.error = RunError("boom", "LimitExceeded", "loop/body/add", "Add", (2, 1))
    trace.save(tmp_path / "t.npz")
    with zipfile.ZipFile(tmp_path / "t.npz") as zf:
        meta = json.loads(zf.read("meta.json"))
    assert meta["format"] == 1
    assert meta["error"] == {"k": "dict", "v": {"message": "boom", "node": "loop/body/add", "op_type": "Add",
                                                "iteration": {"k": "tuple", "v": [2, 1]}, "kind": "LimitExceeded"}}
    assert Trace.load(tmp_path / "t.npz").error == trace.error


def test_shared_arrays_are_stored_once(tmp_path):
    model = explorer.load(SAMPLES / "scan_rnn_encoding.onnx")
    trace = explorer.run(model, model.example_inputs(dims={"T": 50}))
    trace.save(tmp_path / "t.npz")
    import zipfile

    with zipfile.ZipFile(tmp_path / "t.npz") as zf:
        arrays = [n for n in zf.namelist() if n.endswith(".npy")]
    distinct = {id(v) for e in trace.events for v in [*e.inputs.values(), *e.outputs.values()]}
    assert len(arrays) <= len(distinct) + len(trace.feeds) + len(trace.outputs)


def test_load_refuses_a_foreign_file(tmp_path):
    np.savez(tmp_path / "other.npz", a=np.ones(2))
    with pytest.raises(TraceFileError, match="not a trace"):
        Trace.load(tmp_path / "other.npz")


def test_summaries_after_budget_keep_statistics(tmp_path):
    model = explorer.load(SAMPLES / "scan_rnn_encoding.onnx")
    trace = explorer.run(model, model.example_inputs(dims={"T": 20}), limits=Limits(trace_budget_bytes=512,
                                                                                  trace_disk_bytes=0))
    assert trace.budget_exceeded_at is not None
    summarized = [e for e in trace.events if e.summarized]
    assert summarized and all(isinstance(v, ValueSummary) for e in summarized for v in e.outputs.values())
    trace.save(tmp_path / "t.npz")
    assert_traces_equal(trace, Trace.load(tmp_path / "t.npz"))


def test_queries_raise_clear_key_errors():
    model = explorer.load(SAMPLES / "tiny_mlp.onnx")
    trace = explorer.run(model, model.example_inputs())
    with pytest.raises(KeyError, match="did not run"):
        trace.event("relu", (3,))
    with pytest.raises(KeyError, match="not an If"):
        trace.branch("relu")
    with pytest.raises(KeyError, match="records no gates"):
        trace.gates("relu")
    with pytest.raises(KeyError, match="no recorded value"):
        trace.value("nope")


def test_an_event_records_each_named_input_once_and_no_omitted_one():
    from onnx import TensorProto as T
    from onnx import helper as h

    nodes = [h.make_node("Add", ["x", "x"], ["y"], name="twice"), h.make_node("Clip", ["y", "", "hi"], ["z"], name="gap")]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [3])],
                         [h.make_tensor_value_info("z", T.FLOAT, [3])],
                         [h.make_tensor("hi", T.FLOAT, [], [1.0])])
    trace = explorer.run(explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])),
                         {"x": np.array([-1, 0.25, 2], np.float32)})
    twice, gap = trace.events
    assert list(twice.inputs) == ["x"] and list(twice.outputs) == ["y"] and len(twice.inputs) == 1
    assert dict(gap.inputs).keys() == {"y", "hi"} and "" not in gap.inputs
    np.testing.assert_array_equal(gap.outputs["z"], [-2, 0.5, 1])
    assert [name for name, _ in gap.inputs.items()] == ["y", "hi"] and len(list(gap.inputs.values())) == 2
    with pytest.raises(KeyError):
        gap.inputs[""]
