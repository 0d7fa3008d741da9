"""explorer.load: sources, bad input, external data confinement, checker warnings, node paths, example inputs."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer import ModelError

SAMPLES = Path(__file__).resolve().parents[2] / "sample_models"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "models"


def small_model(**graph_kwargs) -> onnx.ModelProto:
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2])], **graph_kwargs)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])


def test_load_from_path_bytes_and_proto_agree(tmp_path):
    proto = small_model()
    path = tmp_path / "m.onnx"
    path.write_bytes(proto.SerializeToString())
    models = [explorer.load(path), explorer.load(str(path)), explorer.load(path.read_bytes()), explorer.load(proto)]
    assert {m.sha256 for m in models} == {models[0].sha256}
    assert [n.path for n in models[0].nodes()] == ["Relu_0"]


def test_load_does_not_modify_the_given_proto():
    proto = small_model()
    before = proto.SerializeToString()
    explorer.load(proto)
    assert proto.SerializeToString() == before


@pytest.mark.parametrize("payload, message", [
    (b"", "empty"),
    (b"this is not a model at all", "not an ONNX model"),
    (b"\x08\x07", "has no graph"),
])
def test_bad_bytes_give_model_errors(payload, message):
    with pytest.raises(ModelError, match=message):
        explorer.load(payload)


def test_label_names_the_model_in_messages():
    with pytest.raises(ModelError, match="'upload.onnx' is not an ONNX model"):
        explorer.load(b"junk junk junk", label="'upload.onnx'")
    assert explorer.load(small_model().SerializeToString(), label="mine").source == "mine"


def test_truncated_model_is_refused():
    data = onnx.load(SAMPLES / "nested_loops.onnx").SerializeToString()
    with pytest.raises(ModelError, match="truncated or garbage"):
        explorer.load(data[: len(data) // 2])


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        explorer.load(tmp_path / "nope.onnx")
    with pytest.raises(ModelError, match="is not a file"):
        explorer.load(tmp_path)


def test_unsupported_ir_and_opset():
    proto = small_model()
    proto.ir_version = onnx.IR_VERSION + 5
    with pytest.raises(ModelError, match="IR version"):
        explorer.load(proto)
    proto = small_model()
    proto.opset_import[0].version = onnx.defs.onnx_opset_version() + 3
    with pytest.raises(ModelError, match="opset"):
        explorer.load(proto)


def test_undeclared_domain_is_refused_naming_the_node():
    graph = h.make_graph([h.make_node("Fancy", ["x"], ["y"], domain="com.example", name="fancy_node")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])])
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    with pytest.raises(ModelError, match="fancy_node.*com.example"):
        explorer.load(proto)


def test_declared_but_unknown_operator_fails_at_run_naming_the_node():
    graph = h.make_graph([h.make_node("Fancy", ["x"], ["y"], domain="com.example", name="fancy_node")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])])
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 18), h.make_opsetid("com.example", 1)])
    model = explorer.load(proto)
    with pytest.raises(explorer.UnsupportedOperatorError, match="fancy_node") as info:
        explorer.run(model, {"x": np.ones(2, np.float32)})
    assert info.value.node == "fancy_node"
    assert info.value.trace is not None and info.value.trace.events == []


def test_checker_complaints_become_warnings_not_failures():
    # a graph output without a shape: the checker rejects it, runtimes run it
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                         [onnx.ValueInfoProto(name="y")])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]))
    assert any("checker" in w for w in model.warnings)
    trace = explorer.run(model, {"x": np.array([-1, 2], np.float32)})
    np.testing.assert_array_equal(trace.outputs["y"], [0, 2])


def test_shape_inference_annotates_intermediate_values():
    graph = h.make_graph([h.make_node("Relu", ["x"], ["r"]), h.make_node("Neg", ["r"], ["y"])], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [2, 5])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]))
    infos = {v.name: v for v in model.graph.value_info}
    assert [d.dim_value for d in infos["r"].type.tensor_type.shape.dim] == [2, 5]


# ---- external data ---------------------------------------------------------------------------------------------
def _external_model(location: str, length: int = 16) -> onnx.ModelProto:
    tensor = onnx.TensorProto(name="W", data_type=T.FLOAT, dims=[4])
    tensor.data_location = onnx.TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    graph = h.make_graph([h.make_node("Add", ["x", "W"], ["y"])], "g", [h.make_tensor_value_info("x", T.FLOAT, [4])],
                         [h.make_tensor_value_info("y", T.FLOAT, [4])], [tensor])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])


def test_external_data_inside_the_folder_is_read(tmp_path):
    (tmp_path / "weights.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    (tmp_path / "m.onnx").write_bytes(_external_model("weights.bin").SerializeToString())
    model = explorer.load(tmp_path / "m.onnx")
    trace = explorer.run(model, {"x": np.ones(4, np.float32)})
    np.testing.assert_array_equal(trace.outputs["y"], [1, 2, 3, 4])


@pytest.mark.parametrize("location", ["../secret.bin", "sub/../../secret.bin", "/etc/passwd"])
def test_external_data_escaping_the_folder_is_refused(tmp_path, location):
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 16)
    (folder / "m.onnx").write_bytes(_external_model(location).SerializeToString())
    with pytest.raises(ModelError, match="refused"):
        explorer.load(folder / "m.onnx")


def test_external_data_through_a_symlink_out_is_refused(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 16)
    os.symlink(tmp_path / "secret.bin", folder / "link.bin")
    (folder / "m.onnx").write_bytes(_external_model("link.bin").SerializeToString())
    with pytest.raises(ModelError, match="outside the model folder"):
        explorer.load(folder / "m.onnx")


def test_external_data_range_beyond_the_file_is_refused(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"\0" * 8)
    (tmp_path / "m.onnx").write_bytes(_external_model("weights.bin", length=16).SerializeToString())
    with pytest.raises(ModelError, match="outside"):
        explorer.load(tmp_path / "m.onnx")


def test_external_data_from_bytes_needs_a_folder():
    with pytest.raises(ModelError, match="external file"):
        explorer.load(_external_model("weights.bin").SerializeToString())


# ---- node paths ------------------------------------------------------------------------------------------------
def test_nested_paths_follow_the_id_rule():
    model = explorer.load(SAMPLES / "nested_loops.onnx")
    paths = [n.path for n in model.nodes()]
    assert paths[0] == "enc"
    assert "enc/body/inner" in paths
    assert "enc/body/inner/body/branch/then_branch/add_x" in paths
    assert "enc/body/inner/body/branch/else_branch/halve" in paths
    node = model.node("enc/body/inner/body/branch")
    assert node.op_type == "If" and node.graph.path == "enc/body/inner/body"
    assert {g.path for g in node.subgraphs} == {"enc/body/inner/body/branch/then_branch",
                                                 "enc/body/inner/body/branch/else_branch"}
    with pytest.raises(KeyError, match="no node"):
        model.node("enc/body/missing")


def test_empty_and_duplicate_names_get_positional_ids():
    nodes = [h.make_node("Relu", ["x"], ["a"], name="dup"), h.make_node("Neg", ["a"], ["b"], name="dup"),
             h.make_node("Abs", ["b"], ["c"]), h.make_node("Relu", ["c"], ["d"], name="Neg_1"),
             h.make_node("Exp", ["d"], ["y"], name="unique")]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2])])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]))
    paths = [n.path for n in model.nodes()]
    assert paths[0] == "Relu_0" and paths[2] == "Abs_2" and paths[4] == "unique"
    assert paths[3] == "Neg_1"  # a real node named like a generated id keeps its name...
    assert paths[1] == "Neg_1_"  # ...and the generated id steps aside
    assert len(set(paths)) == len(paths)


def test_captures_of_a_body():
    model = explorer.load(SAMPLES / "nested_loops.onnx")
    # the If branches read acc_in and x_t from enclosing bodies; the Loop body passes them on
    assert set(model.index.captures("enc/body/inner/body/branch/then_branch")) == {"acc_in", "x_t"}
    assert "x_t" in model.index.captures("enc/body/inner/body")


# ---- example inputs --------------------------------------------------------------------------------------------
def test_example_inputs_follow_declared_types_and_dims():
    graph = h.make_graph(
        [h.make_node("Cast", ["i"], ["y"], to=T.FLOAT)], "g",
        [h.make_tensor_value_info("i", T.INT32, ["batch", 3]), h.make_tensor_value_info("b", T.BOOL, []),
         h.make_tensor_value_info("f", T.FLOAT16, [2, "n"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]))
    feeds = model.example_inputs(seed=3, dims={"batch": 5})
    assert feeds["i"].dtype == np.int32 and feeds["i"].shape == (5, 3)
    assert isinstance(feeds["b"], np.ndarray) and feeds["b"].dtype == np.bool_ and feeds["b"].shape == ()
    assert feeds["f"].dtype == np.float16 and feeds["f"].shape == (2, 2)
    again = model.example_inputs(seed=3, dims={"batch": 5})
    assert all(np.array_equal(feeds[k], again[k]) for k in feeds)


@pytest.mark.parametrize("elem", [T.BFLOAT16, T.FLOAT8E4M3FN, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ])
def test_example_inputs_of_the_small_float_types_are_random_floats(elem):
    # ml_dtypes says kind "V" for most of these types but "f" for float8e5m2, which numpy does not call floating
    graph = h.make_graph([h.make_node("Cast", ["x"], ["y"], to=T.FLOAT)], "g",
                         [h.make_tensor_value_info("x", elem, [4, 8])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 19)]))
    x = model.example_inputs(seed=1)["x"]
    assert x.dtype == onnx.helper.tensor_dtype_to_np_dtype(elem) and x.shape == (4, 8)
    wide = x.astype(np.float32)
    assert np.isfinite(wide).all() and len(np.unique(wide)) > 4 and (wide < 0).any() and (wide > 0).any()


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/models is absent")
def test_example_inputs_without_a_declared_shape_explain_themselves():
    model = explorer.load(SHARED / "JetBrains-Research__kinference/utils/utils-testing/src/commonMain/resources/"
                                   "gru/test_gru_bidirectional/model.onnx")
    with pytest.raises(explorer.FeedError, match="declares no shape"):
        model.example_inputs()


def test_shape_inference_is_skipped_when_it_would_take_long_and_the_declared_types_stay():
    from explorer.budgets import INFERENCE_BUDGET
    from tests.support.diagrams import synthetic_model

    small, big = synthetic_model(400), synthetic_model(20_000)
    assert explorer.load(small).warnings == []  # affordable: inferred as before
    model = explorer.load(big)
    [warning] = model.warnings
    assert warning.startswith("shape inference skipped: 20000 nodes in ") and "declares" in warning
    bodies = int(warning.split(" in ")[1].split()[0])
    assert 20_000 * bodies > INFERENCE_BUDGET
    assert model.index.value_type("x", "") is not None  # declared input types are kept
