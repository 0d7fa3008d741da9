"""The pre-allocation guards estimate each op's output size from its inputs alone. Judged by onnxruntime's outputs
on small valid nodes: the estimate is never below the real size (else a limit could be crossed) and at most twice
it (else a run within the limits would be refused)."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto as T
from onnx import helper as h

import explorer
from explorer.executor.guards import guard_for, quick_guard_for
from explorer.executor.ops.axes import broadcast_dims, broadcasts_to

F = np.float32
rng = np.random.default_rng(0)


def x(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(F)


def i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


# op, inputs in order (None: left out), attributes, opset
CASES = {
    "gemm_outer": ("Gemm", [x(7, 1), x(1, 5)], {}, 21),
    "gemm_transposed": ("Gemm", [x(3, 7), x(5, 3), x(5)], {"transA": 1, "transB": 1}, 21),
    "conv_padded_strided": ("Conv", [x(2, 3, 9, 8), x(6, 3, 3, 2)], {"pads": [1, 0, 2, 1], "strides": [2, 3]}, 21),
    "conv_same": ("Conv", [x(1, 2, 7, 7), x(4, 2, 3, 3)], {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, 21),
    "conv_grouped": ("Conv", [x(1, 4, 6), x(8, 2, 3)], {"group": 2}, 21),
    "conv_transpose": ("ConvTranspose", [x(1, 2, 4, 5), x(2, 3, 3, 3)], {"strides": [3, 2], "pads": [1, 0, 0, 1],
                                                                         "output_padding": [1, 1]}, 21),
    "conv_transpose_grouped_same": ("ConvTranspose", [x(1, 4, 5), x(4, 1, 2)],
                                    {"group": 2, "strides": [2], "auto_pad": "SAME_UPPER"}, 21),
    "conv_transpose_output_shape": ("ConvTranspose", [x(1, 1, 3, 3), x(1, 2, 3, 3)],
                                    {"strides": [3, 3], "output_shape": [10, 8]}, 21),
    "gru": ("GRU", [x(6, 2, 3), x(1, 12, 3), x(1, 12, 4)], {"hidden_size": 4}, 21),
    "lstm_bidirectional": ("LSTM", [x(5, 2, 3), x(2, 16, 3), x(2, 16, 4)],
                           {"hidden_size": 4, "direction": "bidirectional"}, 21),
    "random_normal": ("RandomNormal", [], {"shape": [3, 4, 5], "dtype": T.DOUBLE}, 21),
    "random_uniform": ("RandomUniform", [], {"shape": [7, 2]}, 21),
    "hann_window": ("HannWindow", [np.array(10, np.int64)], {}, 17),
    "blackman_window_double": ("BlackmanWindow", [np.array(9, np.int32)], {"output_datatype": T.DOUBLE}, 17),
    "mel_weight_matrix": ("MelWeightMatrix", [np.array(8, np.int64), np.array(16, np.int64),
                                              np.array(8000, np.int64), np.array(0.0, F), np.array(4000.0, F)],
                          {}, 17),
    "dft_17": ("DFT", [x(2, 8, 1), np.array(12, np.int64)], {}, 17),
    "dft_20_axis_input": ("DFT", [x(2, 8, 1), None, np.array(1, np.int64)], {}, 20),
    "stft": ("STFT", [x(1, 64, 1), np.array(8, np.int64), None, np.array(16, np.int64)], {}, 17),
    "stft_window_two_sided": ("STFT", [x(2, 40, 1), np.array(4, np.int64), np.hanning(10).astype(F)],
                              {"onesided": 0}, 17),
    "affine_grid": ("AffineGrid", [x(2, 2, 3), i64(2, 3, 5, 7)], {}, 20),
    "col2im": ("Col2Im", [x(1, 8, 12), i64(4, 5), i64(2, 2)], {}, 18),
    "max_unpool": ("MaxUnpool", [x(1, 1, 2, 2), np.array([[[[0, 3], [8, 15]]]], np.int64)],
                   {"kernel_shape": [2, 2], "strides": [2, 2]}, 22),
    "max_unpool_output_shape": ("MaxUnpool", [x(1, 1, 2, 2), np.array([[[[0, 3], [8, 15]]]], np.int64),
                                              i64(1, 1, 5, 5)], {"kernel_shape": [2, 2], "strides": [2, 2]}, 22),
    "roi_align": ("RoiAlign", [x(1, 3, 10, 10), np.array([[0, 0, 5, 5], [1, 1, 8, 8]], F), i64(0, 0)],
                  {"output_height": 4, "output_width": 3}, 16),
    "max_roi_pool": ("MaxRoiPool", [x(1, 3, 10, 10), np.array([[0, 0, 0, 5, 5]], F)], {"pooled_shape": [2, 3]}, 21),
    "center_crop_pad": ("CenterCropPad", [x(4, 6, 3), i64(9, 2)], {"axes": [0, 1]}, 18),
    "grid_sample": ("GridSample", [x(1, 3, 4, 4), rng.uniform(-1, 1, (1, 6, 5, 2)).astype(F)], {}, 22),
    "gather_nd": ("GatherND", [x(3, 4, 5), np.array([[[0, 1]], [[2, 3]]], np.int64)], {}, 13),
    "gather_nd_batched": ("GatherND", [x(2, 4, 5), np.array([[1], [3]], np.int64)], {"batch_dims": 1}, 13),
    "multinomial": ("Multinomial", [np.log(np.full((3, 4), 0.25, F))], {"sample_size": 6}, 7),
    "matmul_integer": ("MatMulInteger", [np.ones((5, 1), np.uint8), np.ones((1, 7), np.uint8)], {}, 10),
    "string_concat": ("StringConcat", [np.array([["a"], ["b"]], object), np.array(["x", "y", "z"], object)], {},
                      20),
}


def _model(op: str, inputs: list, attrs: dict, opset: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    names = ["" if v is None else f"in{k}" for k, v in enumerate(inputs)]
    while names and names[-1] == "":
        names.pop()
    feeds = {n: v for n, v in zip(names, inputs) if n}
    infos = [h.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(v.dtype) if v.dtype != object
                                      else T.STRING, list(v.shape)) for n, v in feeds.items()]
    node = h.make_node(op, names, ["y"], **attrs)
    graph = h.make_graph([node], "g", infos, [h.make_empty_tensor_value_info("y")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]), feeds


@pytest.mark.parametrize("name", list(CASES))
def test_the_estimate_covers_the_real_output_and_stays_close(name):
    op, inputs, attrs, opset = CASES[name]
    model, feeds = _model(op, inputs, attrs, opset)
    [actual] = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        ["y"], feeds)
    guard = guard_for(model.graph.node[0])
    assert guard is not None
    estimate = guard(list(inputs))
    assert actual.nbytes <= estimate <= 2 * actual.nbytes, (actual.shape, actual.dtype, estimate)


def test_a_batch_first_recurrent_node_counts_steps_from_axis_1():
    node = h.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=4, direction="bidirectional", layout=1)
    # Y: [batch 2, steps 5, directions 2, hidden 4] float32
    assert guard_for(node)([x(2, 5, 3), x(2, 16, 3), x(2, 16, 4)]) == 2 * 5 * 2 * 4 * 4


@pytest.mark.parametrize("shapes", [[(3, 1), (1, 4)], [(5,), (5,)], [(2, 1, 3), (4, 1), (1,)], [(0, 3), (3,)]])
def test_the_quick_bound_of_elementwise_ops_covers_the_output(shapes):
    args = [x(*shape) for shape in shapes]
    node = h.make_node("Add" if len(args) == 2 else "Sum", [f"in{k}" for k in range(len(args))], ["y"])
    real = int(np.prod(np.broadcast_shapes(*shapes))) * 4
    assert guard_for(node)(args) >= real and quick_guard_for(node)(args) >= real


def test_a_bound_over_the_limit_refuses_only_when_the_estimate_is_over_it_too():
    graph = h.make_graph([h.make_node("Add", ["a", "b"], ["y"], name="add")], "g",
                         [h.make_tensor_value_info(n, T.FLOAT, [None, None]) for n in "ab"],
                         [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = explorer.load(h.make_model(graph, opset_imports=[h.make_opsetid("", 21)]))
    limits = explorer.Limits(max_tensor_bytes=100_000)  # the bound of two [100, 100] inputs is 400 MB
    same = {"a": x(100, 100), "b": x(100, 100)}
    np.testing.assert_array_equal(explorer.run(model, same, limits=limits).outputs["y"], same["a"] + same["b"])
    with pytest.raises(explorer.LimitExceeded, match="its output would take 160000 bytes"):
        explorer.run(model, {"a": x(200, 1), "b": x(1, 200)}, limits=limits)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=4), min_size=1, max_size=3))
def test_broadcast_dims_is_numpys_broadcast(shapes):
    """The guards' and Expand's broadcast agrees with np.broadcast_shapes, refusals included."""
    try:
        expected = np.broadcast_shapes(*map(tuple, shapes))
    except ValueError:
        with pytest.raises(ValueError, match="do not broadcast"):
            broadcast_dims(*shapes)
    else:
        assert broadcast_dims(*shapes) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 3), max_size=3), st.lists(st.integers(1, 3), max_size=3))
def test_broadcasts_to_is_numpys_broadcast_leaving_the_target(shape, target):
    try:
        expected = np.broadcast_shapes(tuple(shape), tuple(target)) == tuple(target)
    except ValueError:
        expected = False
    assert broadcasts_to(tuple(shape), tuple(target)) is expected
