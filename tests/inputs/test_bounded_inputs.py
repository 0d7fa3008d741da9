"""External inputs (.npz / .pb feeds, trace files) are checked before they are inflated; summaries never copy a
whole tensor; a loop growing a sequence past the trace budget stays linear."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer import Limits, Trace
from explorer.budgets import SPILL_SEQUENCE_MAX
from explorer.errors import FeedError, TraceFileError
from explorer.inputs.input_files import feeds_from_input_protos, feeds_from_npz
from explorer.trace.values import SequenceSummary, summarize

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"


def npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def zip_of(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_npz_round_trip_keeps_dtypes_shapes_and_order():
    buf = io.BytesIO()
    values = {"a": np.arange(6.0).reshape(2, 3), "f": np.asfortranarray(np.arange(6).reshape(2, 3)),
              "s": np.array(["x", "yy"]), "e": np.zeros((0, 3), np.float32), "b": np.array(True)}
    np.savez(buf, **values)
    feeds = feeds_from_npz(buf.getvalue())
    for name, value in values.items():
        assert feeds[name].dtype == value.dtype and feeds[name].shape == value.shape
        np.testing.assert_array_equal(feeds[name], value)


def test_a_compressed_bomb_is_refused_before_it_inflates():
    # 64 MiB of zeros deflate to ~64 KB; the header claims 4 GiB
    data = npy_header("<f8", (1 << 29,)) + bytes(64 << 20)
    bomb = zip_of({"x.npy": data})
    assert len(bomb) < 1 << 20
    with pytest.raises(FeedError, match="beyond the limit"):
        feeds_from_npz(bomb)
    with pytest.raises(FeedError, match="more than 1048576 bytes"):
        feeds_from_npz(bomb, Limits(max_input_bytes=1 << 20))


@pytest.mark.parametrize(("descr", "why"), [("|O", "not allowed"), ("[('a', '<f4')]", "not allowed|not an .npy"),
                                            ("|V8", "not allowed")])
def test_npz_dtypes_outside_the_allow_list_are_refused(descr, why):
    with pytest.raises(FeedError, match=why):
        feeds_from_npz(zip_of({"p.npy": npy_header(descr, (1,)) + bytes(8)}))


def test_a_header_claiming_more_than_the_member_holds_is_refused():
    with pytest.raises(FeedError, match="holds fewer"):
        feeds_from_npz(zip_of({"x.npy": npy_header("<f4", (1000,)) + bytes(40)}))


@pytest.mark.parametrize("data", [b"", b"garbage", zip_of({}), zip_of({"x.txt": b"hello"})])
def test_not_an_npz(data):
    with pytest.raises(FeedError):
        feeds_from_npz(data)


def _one_input_model() -> explorer.Model:
    graph = h.make_graph([h.make_node("Identity", ["x"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, None)],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    return explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]))


def test_a_pb_feed_with_external_data_is_refused():
    tensor = onnx.numpy_helper.from_array(np.ones(4, np.float32), "x")
    tensor.data_location = T.EXTERNAL
    tensor.ClearField("raw_data")
    tensor.external_data.add(key="location", value="../../etc/passwd")
    with pytest.raises(FeedError, match="external file"):
        feeds_from_input_protos(_one_input_model(), {"input_0.pb": tensor.SerializeToString()})


def test_a_pb_feed_declaring_huge_dims_is_refused_before_reading():
    tensor = onnx.TensorProto(name="x", data_type=T.FLOAT, dims=[1 << 20, 1 << 20], raw_data=b"\0" * 16)
    with pytest.raises(FeedError, match="beyond the limit"):
        feeds_from_input_protos(_one_input_model(), {"input_0.pb": tensor.SerializeToString()})


def _saved_trace(tmp_path) -> Path:
    model = explorer.load(SAMPLES / "loop_spec.onnx")
    path = tmp_path / "t.npz"
    explorer.run(model, model.example_inputs()).save(path)
    return path


def _rewrite_meta(path: Path, change) -> Path:
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    meta = json.loads(members["meta.json"])
    change(meta)
    members["meta.json"] = json.dumps(meta).encode()
    out = path.with_name("crafted.npz")
    out.write_bytes(zip_of(members, zipfile.ZIP_STORED))
    return out


def _first_array(meta: dict) -> dict:
    def find(value):
        if isinstance(value, dict):
            if value.get("k") == "array":
                return value
            return next((f for f in map(find, value.values()) if f is not None), None)
        if isinstance(value, list):
            return next((f for f in map(find, value) if f is not None), None)
        return None

    return find(meta["events"])


@pytest.mark.parametrize(("change", "match"), [
    (lambda m: _first_array(m).update(dtype="__class__"), "not one explorer stores"),
    (lambda m: _first_array(m).update(dtype="float8_e4m3fn"), "malformed|not one"),
    (lambda m: _first_array(m).update(ref="a999999"), "malformed"),
    (lambda m: m.update(format=99), "unsupported trace format 99"),
    (lambda m: m.update(events=[[1, 2]]), "malformed"),
    (lambda m: m.update(events="x"), "malformed"),
    (lambda m: m.update(outputs={"k": "nope"}), "unknown encoded value kind"),
    (lambda m: m.update(outputs=json.loads('{"k": "list", "v": [' * 100 + ']}' * 100)), "nested more than"),
    (lambda m: m.pop("feeds"), "malformed"),
])
def test_crafted_trace_files_end_in_trace_file_error(tmp_path, change, match):
    with pytest.raises(TraceFileError, match=match):
        Trace.load(_rewrite_meta(_saved_trace(tmp_path), change))


def test_a_trace_file_bomb_is_refused(tmp_path):
    path = tmp_path / "bomb.npz"
    path.write_bytes(zip_of({"meta.json": b"{}", "a0.npy": npy_header("<f8", (1 << 28,)) + bytes(2 << 30 >> 3)}))
    with pytest.raises(TraceFileError, match="beyond the limit|inflate"):
        Trace.load(path, Limits(max_input_bytes=64 << 20))


@pytest.mark.parametrize("data", [b"", b"not a zip", zip_of({"meta.json": b"{not json"}),
                                  zip_of({"meta.json": b"[" * 100_000 + b"]" * 100_000})])
def test_garbage_trace_files(tmp_path, data):
    path = tmp_path / "t.npz"
    path.write_bytes(data)
    with pytest.raises(TraceFileError):
        Trace.load(path)


def test_missing_trace_file(tmp_path):
    with pytest.raises(TraceFileError, match="does not exist"):
        Trace.load(tmp_path / "nope.npz")


def test_summaries_match_numpy_and_work_chunk_by_chunk():
    rng = np.random.default_rng(0)
    big = rng.standard_normal(3_000_001).astype(np.float32)
    big[[5, 7]] = np.nan, np.inf
    finite = big[np.isfinite(big)]
    s = summarize(big)
    assert (s.nan_count, s.inf_count) == (1, 1)
    assert s.min == float(finite.min()) and s.max == float(finite.max())
    assert s.mean == pytest.approx(float(finite.mean(dtype=np.float64)), rel=1e-9)
    strided = np.arange(24, dtype=np.int64).reshape(4, 6)[:, ::2]
    assert (summarize(strided).min, summarize(strided).max, summarize(strided).mean) == (0, 22, 11)


def test_a_sequence_past_the_budget_is_summarized_in_constant_size():
    seq = [np.ones(3, np.float32)] * 10_000
    summary = summarize(seq)
    assert isinstance(summary, SequenceSummary) and summary.length == 10_000 and summary.first.shape == (3,)


def _growing_sequence_loop() -> explorer.Model:
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["co"]), h.make_node("SequenceInsert", ["s", "x"], ["so"]),
         h.make_node("Identity", ["x"], ["xo"])], "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
         h.make_tensor_sequence_value_info("s", T.FLOAT, [4]), h.make_tensor_value_info("x", T.FLOAT, [4])],
        [h.make_tensor_value_info("co", T.BOOL, []), h.make_tensor_sequence_value_info("so", T.FLOAT, [4]),
         h.make_tensor_value_info("xo", T.FLOAT, [4])])
    graph = h.make_graph([h.make_node("SequenceEmpty", [], ["s0"], dtype=T.FLOAT),
                          h.make_node("Loop", ["n", "", "s0", "x"], ["sf", "xf"], body=body)], "g",
                         [h.make_tensor_value_info("n", T.INT64, []), h.make_tensor_value_info("x", T.FLOAT, [4])],
                         [h.make_tensor_sequence_value_info("sf", T.FLOAT, [4])])
    return explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]))


@pytest.mark.parametrize("disk", [0, 1 << 30])
def test_a_loop_growing_a_sequence_past_the_budget_keeps_each_event_small(disk):
    model = _growing_sequence_loop()
    limits = Limits(trace_budget_bytes=10_000, trace_disk_bytes=disk)
    trace = explorer.run(model, {"n": np.array(600), "x": np.ones(4, np.float32)}, limits=limits)
    assert len(trace.outputs["sf"]) == 600 and trace.budget_exceeded_at is not None
    inserts = [e for e in trace.events if e.op_type == "SequenceInsert"]
    on_disk = [e for e in inserts[trace.spilled_at or len(inserts):] if not e.summarized]  # elements on disk
    assert all(len(e.outputs["so"]) <= SPILL_SEQUENCE_MAX for e in on_disk)
    assert bool(on_disk) == bool(disk)
    late = [e for e in trace.events if e.summarized and e.op_type == "SequenceInsert"]
    assert late and all(isinstance(e.outputs["so"], SequenceSummary) for e in late)
    first = 600 - len(late) + 1  # one SequenceInsert per iteration, each adding one element
    assert [e.outputs["so"].length for e in late] == list(range(first, 601))
    # what the views show of each: the length and the first element's summary, never the elements themselves
    assert [explorer.trace.values.describe(e.outputs["so"]) for e in late] == \
        [f"seq({n}) of float32[4] (summary)" for n in range(first, 601)]


@pytest.mark.parametrize("budget", [10_000, Limits().trace_budget_bytes])
def test_the_size_of_a_growing_sequence_is_kept_not_summed_at_every_event(monkeypatch, budget):
    """Each SequenceInsert passes its sequence's size on: over 2,000 iterations the elements ever summed stay
    a small multiple of the events (summing the whole sequence at each event would visit about 2,000,000)."""
    visited = []
    summed = explorer.trace.values.elements_bytes

    def counting(value):
        visited.append(len(value))
        return summed(value)

    monkeypatch.setattr(explorer.trace.values, "elements_bytes", counting)
    trace = explorer.run(_growing_sequence_loop(), {"n": np.array(2000), "x": np.ones(4, np.float32)},
                         limits=Limits(trace_budget_bytes=budget))
    final = trace.outputs["sf"]
    assert len(final) == 2000 and len(trace.events) == 3 * 2000 + 2
    assert sum(visited) <= len(trace.events)
    assert explorer.trace.values.nbytes(final) == summed(list(final)) == 2000 * (16 + explorer.trace.values.POINTER_BYTES)
