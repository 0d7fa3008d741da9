"""Sequences of maps (ZipMap's output) and maps through the run, the trace file, the value tables and the
comparison with onnxruntime."""
from __future__ import annotations

import json
import zipfile
from html import unescape

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer.compare.stats import compare_values
from explorer.trace.values import MapSequence, describe, nbytes
from explorer.views import value_html
from tests.support.html_tables import tables

X = np.array([[0.25, 0.5, 0.25], [1 / 3, 0.0, 2 / 3]], dtype=np.float32)


def _zipmap(labels: dict) -> explorer.Model:
    node = h.make_node("ZipMap", ["x"], ["z"], name="zip", domain="ai.onnx.ml", **labels)
    key = T.STRING if "classlabels_strings" in labels else T.INT64
    out = h.make_value_info("z", h.make_sequence_type_proto(h.make_map_type_proto(
        key, h.make_tensor_type_proto(T.FLOAT, None))))
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [None, 3])], [out])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 9
    return explorer.load(model)


def test_zipmap_gives_the_maps_onnxruntime_gives():
    model = _zipmap({"classlabels_int64s": [10, 20, 30]})
    maps = explorer.run(model, {"x": X}).outputs["z"]
    (theirs,) = ort.InferenceSession(model.proto.SerializeToString()).run(None, {"x": X})
    assert maps == theirs and [sorted(m) for m in maps] == [[10, 20, 30]] * 2
    assert isinstance(maps, MapSequence) and maps.table.shape == (2, 3)
    assert compare_values("z", maps, theirs).ok
    assert not compare_values("z", maps, [theirs[0], {**theirs[1], 10: 0.5}]).ok
    assert not compare_values("z", maps, [theirs[0], {1: 0.0}]).ok


def test_a_trace_keeps_a_sequence_of_maps_as_its_keys_and_one_table(tmp_path):
    model = _zipmap({"classlabels_strings": ["cat", "dog", "eel"]})
    rows = np.tile(X, (500, 1))
    trace = explorer.run(model, {"x": rows})
    path = tmp_path / "trace.npz"
    trace.save(path)
    with zipfile.ZipFile(path) as archive:
        members = archive.namelist()
        meta = json.loads(archive.read("meta.json"))
    assert len(members) <= 4  # meta.json, the feed, the table (the keys are text in meta.json)
    assert len(json.dumps(meta["outputs"])) < 300
    loaded = explorer.Trace.load(path).outputs["z"]
    assert isinstance(loaded, MapSequence) and loaded == trace.outputs["z"]
    assert loaded.keys.tolist() == ["cat", "dog", "eel"] and np.array_equal(loaded.table, rows)


def test_a_sequence_of_maps_reads_as_a_table_of_its_keys():
    maps = MapSequence(np.array([10, 20, 30]), X)
    assert describe(maps) == "seq(2) of map(int64 → float32)"
    assert nbytes(maps) >= X.nbytes
    html = value_html.value_block("z", maps, full=True)
    assert "seq(2) of map(int64 → float32)" in html and "min 0 · max 0.6667 · mean 0.3333" in html
    [table] = tables(html)
    assert [text for text, _ in table[0]] == ["", "10", "20", "30"]
    assert table[2] == [("1", None), ("0.333333", "0.33333334"), ("0", None), ("0.666667", "0.6666667")]
    assert "rows: the sequence's maps · columns: their keys" in unescape(html)


def test_one_map_reads_as_a_table_of_its_keys():
    [table] = tables(value_html.value_table({"b": 1.5, "a": "x"}))
    assert table == [[("", None), ("value", None)], [("b", None), ("1.5", None)], [("a", None), ("x", None)]]


def test_random_inputs_give_a_map_input_entries_of_its_declared_types():
    node = h.make_node("DictVectorizer", ["m"], ["y"], domain="ai.onnx.ml", string_vocabulary=["k1", "zz", "k0"])
    kind = h.make_map_type_proto(T.STRING, h.make_tensor_type_proto(T.FLOAT, None))
    graph = h.make_graph([node], "g", [h.make_value_info("m", kind)], [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 1)]))
    feeds = model.example_inputs(seed=1)
    assert sorted(feeds["m"]) == ["k0", "k1"] and all(isinstance(v, float) for v in feeds["m"].values())
    row = explorer.run(model, feeds).outputs["y"]
    assert row.dtype == np.float32 and row.tolist() == [[feeds["m"]["k1"], 0.0, feeds["m"]["k0"]]]
