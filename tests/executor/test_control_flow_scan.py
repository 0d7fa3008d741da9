"""Scan (opset 8 and 9+) against onnxruntime: axes, directions, several states/inputs/outputs, ragged batches,
zero-length scans, body initializers and outer-scope captures; per-iteration records against hand slicing."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import explorer
from tests.support import control_flow_models as cf


def _scan_input(rng: np.random.Generator, width: list[int], axis: int, length: int) -> np.ndarray:
    shape = list(width)
    rank = len(width) + 1
    shape.insert(axis % rank, length)
    return rng.standard_normal(shape).astype(np.float32)


def _scan9_feeds(rng, n_states, axes, length, width=(2, 3), capture=False) -> dict:
    feeds = {f"S{i}": rng.standard_normal(width).astype(np.float32) for i in range(n_states)}
    feeds.update({f"X{j}": _scan_input(rng, list(width), a, length) for j, a in enumerate(axes)})
    if capture:
        feeds["gain"] = np.array(rng.uniform(0.5, 1.5), np.float32)
    return feeds


axis3 = st.integers(-3, 2)  # every valid axis (negative too) of a rank-3 scan input / output


@settings(max_examples=40, deadline=None)
@given(n_states=st.integers(0, 2), n_scans=st.integers(1, 3), n_outputs=st.integers(0, 3),
       length=st.integers(1, 4), data=st.data(), seed=st.integers(0, 2**16))
def test_scan9_matches_onnxruntime(n_states, n_scans, n_outputs, length, data, seed):
    if n_states + n_outputs == 0:
        n_outputs = 1
    in_axes = data.draw(st.lists(axis3, min_size=n_scans, max_size=n_scans))
    in_dirs = data.draw(st.lists(st.integers(0, 1), min_size=n_scans, max_size=n_scans))
    out_axes = data.draw(st.lists(axis3, min_size=n_outputs, max_size=n_outputs))
    out_dirs = data.draw(st.lists(st.integers(0, 1), min_size=n_outputs, max_size=n_outputs))
    capture = data.draw(st.booleans())
    proto = cf.scan9(n_states, n_scans, n_outputs, in_axes=in_axes, in_dirs=in_dirs, out_axes=out_axes,
                     out_dirs=out_dirs, capture=capture)
    feeds = _scan9_feeds(np.random.default_rng(seed), n_states, in_axes, length, capture=capture)
    trace = cf.run_both(proto, feeds)
    assert len(trace.iterations("scan")) == length


# onnxruntime cannot judge zero-length scans (it fails, or dies of SIGFPE when the scan axis is not 0): the spec
# says the loop body never runs, states come out unchanged, scan outputs have 0 along their scan axis.
@settings(max_examples=25, deadline=None)
@given(n_states=st.integers(0, 2), n_scans=st.integers(1, 3), n_outputs=st.integers(1, 3), data=st.data())
def test_scan9_zero_length(n_states, n_scans, n_outputs, data):
    in_axes = data.draw(st.lists(axis3, min_size=n_scans, max_size=n_scans))
    out_axes = data.draw(st.lists(axis3, min_size=n_outputs, max_size=n_outputs))
    out_dirs = data.draw(st.lists(st.integers(0, 1), min_size=n_outputs, max_size=n_outputs))
    proto = cf.scan9(n_states, n_scans, n_outputs, in_axes=in_axes, out_axes=out_axes, out_dirs=out_dirs)
    feeds = _scan9_feeds(np.random.default_rng(0), n_states, in_axes, 0)
    trace = explorer.run(explorer.load(proto), feeds)
    assert trace.iterations("scan") == [] and trace.events_of("scan/body/pre0") == []
    assert trace.event("scan").info["iterations"] == 0
    for i in range(n_states):
        np.testing.assert_array_equal(trace.outputs[f"S{i}_final"], feeds[f"S{i}"])
    for k in range(n_outputs):
        expected = [2, 3]
        expected.insert(out_axes[k] % 3, 0)
        assert trace.outputs[f"Y{k}"].shape == tuple(expected)
        assert trace.outputs[f"Y{k}"].dtype == np.float32


@pytest.mark.parametrize("opset", [9, 11, 16, 19, 21, 23, 25])
def test_scan9_every_opset_version(opset):
    proto = cf.scan9(1, 2, 2, in_axes=[1, -1], in_dirs=[1, 0], out_axes=[-1, 0], out_dirs=[0, 1], opset=opset)
    for seed in range(3):
        cf.run_both(proto, _scan9_feeds(np.random.default_rng(seed), 1, [1, -1], 3 + seed))


def test_scan9_defaults_are_axis0_forward():
    proto = cf.scan9(2, 2, 3, capture=True)
    cf.run_both(proto, _scan9_feeds(np.random.default_rng(7), 2, [0, 0], 5, capture=True))


def test_scan9_iteration_records_hold_slices_and_states():
    """Hand-computed: iteration t of a reversed axis -1 input sees X[..., L-1-t]; states chain output to input."""
    proto = cf.scan9(1, 2, 1, in_axes=[0, -1], in_dirs=[0, 1])
    feeds = _scan9_feeds(np.random.default_rng(3), 1, [0, -1], 4)
    trace = cf.run_both(proto, feeds)
    records = trace.iterations("scan")
    assert [r.index for r in records] == [(0,), (1,), (2,), (3,)]
    previous, state = feeds["S0"], feeds["S0"]
    for t, record in enumerate(records):
        assert set(record.inputs) == {"s0", "x0", "x1"}
        assert set(record.outputs) == {"s0_out", "y0"}
        np.testing.assert_array_equal(record.inputs["x0"], feeds["X0"][t])
        np.testing.assert_array_equal(record.inputs["x1"], feeds["X1"][..., 3 - t])
        np.testing.assert_array_equal(record.inputs["s0"], previous)
        state = np.tanh(state * np.float32(1.5) + feeds["X0"][t] + 2 * feeds["X1"][..., 3 - t])
        np.testing.assert_allclose(record.outputs["s0_out"], state, rtol=1e-5)
        previous = record.outputs["s0_out"]
        # the body's own events carry the iteration tuple
        assert trace.event("scan/body/pre0", (t,)).outputs["pre0"].shape == (2, 3)
    np.testing.assert_array_equal(trace.outputs["S0_final"], previous)


@pytest.mark.parametrize("directions", [None, [0, 0], [1, 0], [0, 1], [1, 1]])
@pytest.mark.parametrize("with_lens", [False, True])
def test_scan8_matches_onnxruntime(directions, with_lens):
    proto = cf.scan8(2, 2, 3, directions=directions, with_lens=with_lens)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        batch, seq = 3, 5
        feeds = {f"S{i}": rng.standard_normal((batch, 3)).astype(np.float32) for i in range(2)}
        feeds.update({f"X{j}": rng.standard_normal((batch, seq, 3)).astype(np.float32) for j in range(2)})
        if with_lens:  # ragged batches (onnxruntime wants 1 <= length <= seq)
            feeds["lens"] = rng.integers(1, seq + 1, size=batch).astype(np.int64)
        trace = cf.run_both(proto, feeds)
        lens = feeds["lens"] if with_lens else [seq] * batch
        records = trace.iterations("scan")
        assert len(records) == sum(lens)
        assert [r.info["batch"] for r in records] == [b for b in range(batch) for _ in range(lens[b])]


def test_scan8_ragged_reverse_reads_each_row_backwards_from_its_own_length():
    proto = cf.scan8(1, 1, 1, directions=[1], with_lens=True)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    feeds = {"S0": np.zeros((2, 3), np.float32), "X0": x, "lens": np.array([2, 4], np.int64)}
    trace = cf.run_both(proto, feeds)
    seen = [(r.info["batch"], r.inputs["x0"]) for r in trace.iterations("scan")]
    expected = [(0, x[0, 1]), (0, x[0, 0]), (1, x[1, 3]), (1, x[1, 2]), (1, x[1, 1]), (1, x[1, 0])]
    for (b, got), (want_b, want) in zip(seen, expected, strict=True):
        assert b == want_b
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(trace.outputs["Y0"][0, 2:], 0)  # padding past a row's length is zero


def test_scan8_single_state_no_scan_outputs():
    proto = cf.scan8(1, 1, 1)
    rng = np.random.default_rng(5)
    feeds = {"S0": rng.standard_normal((1, 3)).astype(np.float32),
             "X0": rng.standard_normal((1, 6, 3)).astype(np.float32)}
    cf.run_both(proto, feeds)


def test_scan_mismatched_lengths_is_a_clear_error():
    proto = cf.scan9(1, 2, 1)
    rng = np.random.default_rng(0)
    feeds = {"S0": np.zeros((2, 3), np.float32), "X0": rng.standard_normal((3, 2, 3)).astype(np.float32),
             "X1": rng.standard_normal((4, 2, 3)).astype(np.float32)}
    with pytest.raises(explorer.ExecutionError) as info:
        explorer.run(explorer.load(proto), feeds)
    assert info.value.node == "scan" and "sequence lengths [3, 4]" in str(info.value)


def test_body_value_that_is_both_state_and_scan_output():
    """One body value listed twice among the outputs (state and scan output): a running sum. onnxruntime gets this
    wrong (it returns the initial state and X itself), so it is judged by hand: np.cumsum."""
    body = cf.graph([cf.node("Add", ["s", "x"], ["s_out"])], "cumsum", [cf.vi("s", cf.F, [2]), cf.vi("x", cf.F, [2])],
                    [cf.vi("s_out", cf.F, [2]), cf.vi("s_out", cf.F, [2])])
    scan = cf.node("Scan", ["s0", "X"], ["s_final", "Y"], name="scan", body=body, num_scan_inputs=1)
    proto = cf.model(cf.graph([scan], "cumsum", [cf.vi("s0", cf.F, [2]), cf.vi("X", cf.F, [4, 2])],
                              [cf.vi("s_final", cf.F, [2]), cf.vi("Y", cf.F, [4, 2])]))
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    trace = explorer.run(explorer.load(proto), {"s0": np.zeros(2, np.float32), "X": x})
    np.testing.assert_array_equal(trace.outputs["Y"], np.cumsum(x, axis=0))
    np.testing.assert_array_equal(trace.outputs["s_final"], x.sum(axis=0))


@pytest.mark.parametrize(("in_axis", "out_axis", "direction"), [(0, 0, 0), (-1, -1, 1), (0, -1, 1)])
def test_scan_of_scalars(in_axis, out_axis, direction):
    """A rank-1 input scanned into scalars; a scalar state; scalar scan outputs stack to shape (L,)."""
    body = cf.graph([cf.node("Mul", ["s", "decay"], ["sd"]), cf.node("Add", ["sd", "x"], ["s_out"]),
                     cf.node("Identity", ["s_out"], ["y"])], "ema", [cf.vi("s", cf.F, []), cf.vi("x", cf.F, [])],
                    [cf.vi("s_out", cf.F, []), cf.vi("y", cf.F, [])], [cf.const("decay", 0.5)])
    scan = cf.node("Scan", ["s0", "X"], ["s_final", "Y"], name="scan", body=body, num_scan_inputs=1,
                   scan_input_axes=[in_axis], scan_input_directions=[direction], scan_output_axes=[out_axis])
    proto = cf.model(cf.graph([scan], "ema", [cf.vi("s0", cf.F, []), cf.vi("X", cf.F, [5])],
                              [cf.vi("s_final", cf.F, []), cf.vi("Y", cf.F, [5])]))
    x = np.random.default_rng(in_axis + 3).standard_normal(5).astype(np.float32)
    trace = cf.run_both(proto, {"s0": np.array(1.0, np.float32), "X": x})
    assert trace.outputs["Y"].shape == (5,)
    assert [float(r.inputs["x"]) for r in trace.iterations("scan")] == list(x[::-1] if direction else x)
