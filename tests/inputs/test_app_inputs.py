"""User feeds: .npz files, test data set .pb files, tables, content keys (explorer/inputs/input_files.py)."""
import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import TensorProto, helper, numpy_helper

import explorer
from explorer.errors import FeedError
from explorer.inputs.input_files import (
    editable,
    feeds_from_input_protos,
    feeds_from_npz,
    feeds_from_test_data,
    feeds_from_upload,
    feeds_key,
    from_grid,
    to_grid,
)
from explorer.model.model import ValueSpec


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_npz_members_come_back_exactly():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    n = np.array([3], dtype=np.int64)
    feeds = feeds_from_npz(_npz(x=x, n=n))
    assert set(feeds) == {"x", "n"}
    np.testing.assert_array_equal(feeds["x"], x)
    assert feeds["x"].dtype == np.float32 and feeds["n"].dtype == np.int64


@pytest.mark.parametrize("data", [b"", b"garbage bytes, not a zip", _npz(x=np.zeros(3))[:40]])
def test_unreadable_npz_is_a_feed_error(data):
    with pytest.raises(FeedError, match="not a readable .npz"):
        feeds_from_npz(data)


def test_a_single_npy_is_refused_with_a_reason():
    buf = io.BytesIO()
    np.save(buf, np.zeros(3))
    with pytest.raises(FeedError, match="single .npy"):
        feeds_from_npz(buf.getvalue())


def test_pickled_object_arrays_are_refused():
    with pytest.raises(FeedError):
        feeds_from_npz(_npz(x=np.array([{"a": 1}], dtype=object)))


def _two_input_model() -> explorer.Model:
    """x: float32 tensor, s: sequence of int64 tensors."""
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, None))
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("SequenceLength", ["s"], ["n"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]), helper.make_value_info("s", seq)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [])])
    return explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


X = np.arange(6, dtype=np.float32).reshape(2, 3)
S = [np.array([1, 2], np.int64), np.array([7], np.int64)]


def _pb(value) -> bytes:
    if isinstance(value, list):
        return numpy_helper.from_list(value, "s").SerializeToString()
    return numpy_helper.from_array(value, "x").SerializeToString()


def test_input_files_are_read_as_each_inputs_proto_by_their_number():
    model = _two_input_model()
    feeds = feeds_from_input_protos(model, {"input_1.pb": _pb(S), "input_0.pb": _pb(X), "output_0.pb": b"\x08"})
    assert list(feeds) == ["x", "s"]
    np.testing.assert_array_equal(feeds["x"], X)
    assert feeds["x"].dtype == np.float32
    assert [list(t) for t in feeds["s"]] == [[1, 2], [7]]
    trace = explorer.run(model, feeds)  # the run takes them as they are
    np.testing.assert_array_equal(trace.outputs["y"], X)
    assert int(trace.outputs["n"]) == 2


def test_the_folder_and_the_bytes_give_the_same_feeds(tmp_path):
    model = _two_input_model()
    (tmp_path / "input_0.pb").write_bytes(_pb(X))
    (tmp_path / "input_1.pb").write_bytes(_pb(S))
    (tmp_path / "output_0.pb").write_bytes(_pb(X))
    from_folder = feeds_from_test_data(model, tmp_path)
    assert feeds_key(from_folder) == feeds_key(feeds_from_input_protos(model, {"input_0.pb": _pb(X),
                                                                               "input_1.pb": _pb(S)}))


def _short_raw_data() -> bytes:
    """A float32 [2, 3] tensor whose raw_data holds 4 bytes."""
    tensor = helper.make_tensor("x", TensorProto.FLOAT, [2, 3], np.zeros(6, np.float32).tobytes(), raw=True)
    tensor.raw_data = b"\0" * 4
    return tensor.SerializeToString()


@pytest.mark.parametrize("files, message", [
    ({}, r"none of \[\] is named input_<i>\.pb"),
    ({"output_0.pb": _pb(X), "x.pb": _pb(X)}, r"none of \['output_0.pb', 'x.pb'\] is named input_<i>\.pb"),
    ({"input_0.pb": _pb(X), "input_1.pb": _pb(S), "input_2.pb": _pb(X)},
     r"input_2\.pb is input 2, but the model takes 2 input\(s\): \['x', 's'\]"),
    ({"input_0.pb": _pb(X), "input_00.pb": _pb(X)}, r"input_0\.pb and input_00\.pb both give input 0"),
    ({"input_0.pb": b"not a protobuf at all"}, r"input_0\.pb is not a serialized TensorProto for input 'x'"),
    # a tensor file where the sequence goes: it parses, leaving fields a SequenceProto does not have
    ({"input_0.pb": _pb(X), "input_1.pb": _pb(X)},
     r"input_1\.pb is not a serialized SequenceProto for input 's'.*fields a SequenceProto does not have"),
    ({"input_0.pb": _short_raw_data()}, r"input_0\.pb is not a serialized TensorProto for input 'x'"),
])
def test_bad_input_files_are_feed_errors_naming_the_file(files, message):
    with pytest.raises(FeedError, match=message):
        feeds_from_input_protos(_two_input_model(), files)


def test_a_folder_without_input_files_says_so(tmp_path):
    (tmp_path / "output_0.pb").write_bytes(_pb(X))
    with pytest.raises(FeedError, match="holds no input_<i>.pb files"):
        feeds_from_test_data(_two_input_model(), tmp_path)


def test_an_upload_is_one_npz_or_input_files():
    model = _two_input_model()
    np.testing.assert_array_equal(feeds_from_upload(model, {"feeds.npz": _npz(x=X)})["x"], X)
    np.testing.assert_array_equal(feeds_from_upload(model, {"input_0.pb": _pb(X)})["x"], X)
    with pytest.raises(FeedError, match="either one .npz or input_<i>.pb files, not 2 files with feeds.npz"):
        feeds_from_upload(model, {"feeds.npz": _npz(x=X), "input_1.pb": _pb(S)})


small_arrays = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float64, np.int64, np.int32, np.uint8, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=6),
    elements={"allow_nan": False, "allow_infinity": False},
)


@given(small_arrays)
def test_grid_round_trip_keeps_dtype_shape_and_values(array):
    grid = to_grid(array)
    assert grid.ndim == 2
    back = from_grid(grid.astype(object), array, "x")
    assert back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)


def test_grid_cells_are_checked_against_the_dtype():
    like = np.zeros((1, 2), dtype=np.int64)
    with pytest.raises(FeedError, match="'n'.*int64"):
        from_grid(np.array([[1.5, 2]], dtype=object), like, "n")
    with pytest.raises(FeedError, match="'n'.*every cell"):
        from_grid(np.array([[None, 2]], dtype=object), like, "n")
    with pytest.raises(FeedError, match="'n'.*cells must be numbers"):
        from_grid(np.array([["abc", 2]], dtype=object), like, "n")
    np.testing.assert_array_equal(from_grid(np.array([["true", "0"]], dtype=object), np.zeros((1, 2), bool), "b"),
                                  [[True, False]])


def test_editable_only_small_numeric_tensors():
    spec = ValueSpec("x", None, "tensor", np.dtype(np.float32), (2, 3))
    assert editable(spec, np.zeros((2, 3), np.float32))
    assert not editable(spec, np.zeros((2, 3, 4), np.float32))  # rank 3
    assert not editable(spec, np.zeros((20, 20), np.float32))  # 400 > 256 elements
    assert not editable(spec, np.array(["a", "b"], dtype=object))
    assert not editable(ValueSpec("s", None, "sequence", None, None), [np.zeros(2)])


def test_feeds_key_follows_content_not_identity():
    a = {"x": np.arange(4, dtype=np.float32), "s": [np.zeros(2), np.ones(2)]}
    same = {"s": [np.zeros(2), np.ones(2)], "x": np.arange(4, dtype=np.float32).copy()}
    assert feeds_key(a) == feeds_key(same)
    changed = [
        {**a, "x": np.arange(4, dtype=np.float64)},  # dtype
        {**a, "x": np.arange(4, dtype=np.float32).reshape(2, 2)},  # shape
        {**a, "x": np.array([0, 1, 2, 4], dtype=np.float32)},  # value
        {**a, "s": [np.zeros(2)]},  # sequence length
        {"y": a["x"], "s": a["s"]},  # name
    ]
    assert len({feeds_key(a), *(feeds_key(c) for c in changed)}) == 1 + len(changed)
