"""User feeds: .npz files, tables, content keys (explorer/inputs.py)."""
import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from explorer.errors import FeedError
from explorer.inputs import editable, feeds_from_npz, feeds_key, from_grid, to_grid
from explorer.model import ValueSpec


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
