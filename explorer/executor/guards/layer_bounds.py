"""Output sizes of the layers and generators whose output can outgrow their inputs many times over: Gemm (an
outer product), the Conv family and ConvTranspose, Attention's score matrix, the recurrent nodes, random and
window generators, the signal transforms, and the image sampling and pooling-by-region ops."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx

from ...proto.graph import attribute
from .shapes import Guard, ints, prod, widest_itemsize


def _dtype_size(code: int) -> int:
    return int(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code)).itemsize)


def _given(args: Sequence[Any], index: int) -> Any:
    """Input `index` when the node was given it (optional inputs may be missing or empty)."""
    if len(args) <= index or args[index] is None:
        return None
    value = np.asarray(args[index])
    return value if value.size else None


def _gemm(node: onnx.NodeProto) -> Guard:
    trans_a, trans_b = attribute(node, "transA", 0), attribute(node, "transB", 0)

    def size(args: Sequence[Any]) -> int:
        a, b = args[0], args[1]
        rows: int = a.shape[1] if trans_a else a.shape[0]
        columns: int = b.shape[0] if trans_b else b.shape[1]
        itemsize: int = a.itemsize if a.itemsize > b.itemsize else b.itemsize
        return rows * columns * itemsize

    return size


def _conv(x_index: int, w_index: int, output_itemsize: int | None = None) -> Callable[[onnx.NodeProto], Guard]:
    """Conv, ConvInteger, QLinearConv, DeformConv: N × M × each spatial dim at most ceil((in + pads) / stride)."""

    def make(node: onnx.NodeProto) -> Guard:
        pads_attribute, strides_attribute = attribute(node, "pads", None), attribute(node, "strides", None)

        def size(args: Sequence[Any]) -> int:
            x, w = args[x_index], args[w_index]
            spatial = x.shape[2:]
            pads = list(pads_attribute or [0] * (2 * len(spatial)))
            strides = list(strides_attribute or [1] * len(spatial))
            dims = [-(-(int(d) + max(pads[k], 0) + max(pads[k + len(spatial)], 0)) // max(int(strides[k]), 1))
                    for k, d in enumerate(spatial)]
            return prod((x.shape[0], w.shape[0], *dims)) * (output_itemsize or int(x.itemsize))

        return size

    return make


def _conv_transpose(node: onnx.NodeProto) -> Guard:
    output_shape = attribute(node, "output_shape")
    auto_pad = attribute(node, "auto_pad", "NOTSET")
    group = int(attribute(node, "group", 1))
    given = {name: attribute(node, name, None) for name in ("kernel_shape", "strides", "dilations", "output_padding",
                                                        "pads")}

    def size(args: Sequence[Any]) -> int:
        x, w = args[0], args[1]
        spatial = [int(d) for d in x.shape[2:]]
        n = len(spatial)
        if output_shape:
            dims = [int(d) for d in list(output_shape)[-n:]]
        else:
            kernel = list(given["kernel_shape"] or w.shape[2:])
            strides = list(given["strides"] or [1] * n)
            dilations = list(given["dilations"] or [1] * n)
            extra = list(given["output_padding"] or [0] * n)
            pads = list(given["pads"] or [0] * (2 * n))
            if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
                dims = [d * int(s) for d, s in zip(spatial, strides)]
            else:
                dims = [int(s) * (d - 1) + int(e) + (int(k) - 1) * int(dl) + 1 - int(pads[i]) - int(pads[i + n])
                        for i, (d, s, e, k, dl) in enumerate(zip(spatial, strides, extra, kernel, dilations))]
        return prod((x.shape[0], int(w.shape[1]) * group, *dims)) * int(x.itemsize)

    return size


def _attention(node: onnx.NodeProto) -> Guard:
    """The score matrix: batch × query heads × query length × (past + new) key length."""
    q_heads = int(attribute(node, "q_num_heads", 0) or 0)

    def size(args: Sequence[Any]) -> int:
        q, k = args[0], args[1]
        batch, heads, q_length = (q.shape[0], q.shape[1], q.shape[2]) if q.ndim == 4 else \
            (q.shape[0], q_heads or 1, q.shape[1])
        k_length = int(k.shape[2] if k.ndim == 4 else k.shape[1])
        past = _given(args, 4)
        if past is not None and past.ndim == 4:
            k_length += int(past.shape[2])
        return prod((batch, heads, q_length, k_length)) * widest_itemsize(args[:3])

    return size


def _recurrent(node: onnx.NodeProto) -> Guard:
    """GRU, LSTM, RNN: Y, time steps × directions × batch × hidden_size (each recorded gate is as big)."""
    hidden = int(attribute(node, "hidden_size", 0) or 0)
    batch_first = int(attribute(node, "layout", 0)) == 1
    directions = 2 if attribute(node, "direction", "forward") == "bidirectional" else 1

    def size(args: Sequence[Any]) -> int:
        x = args[0]
        steps, batch = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
        units = hidden or int(args[2].shape[-1])  # R: [directions, gates * hidden, hidden]
        return prod((steps, directions, batch, units)) * int(x.itemsize)

    return size


def _random(node: onnx.NodeProto) -> Guard:
    count = prod(attribute(node, "shape", None) or [])
    itemsize = _dtype_size(int(attribute(node, "dtype", onnx.TensorProto.FLOAT)))
    return lambda args: count * itemsize


def _multinomial(node: onnx.NodeProto) -> Guard:
    samples = int(attribute(node, "sample_size", 1))
    itemsize = _dtype_size(int(attribute(node, "dtype", onnx.TensorProto.INT32)))
    return lambda args: int(args[0].shape[0]) * max(samples, 0) * itemsize


def _window(node: onnx.NodeProto) -> Guard:
    itemsize = _dtype_size(int(attribute(node, "output_datatype", onnx.TensorProto.FLOAT)))
    return lambda args: max(int(np.asarray(args[0]).item()), 0) * itemsize


def _mel_weights(node: onnx.NodeProto) -> Guard:
    itemsize = _dtype_size(int(attribute(node, "output_datatype", onnx.TensorProto.FLOAT)))

    def size(args: Sequence[Any]) -> int:
        bins, dft_length = (int(np.asarray(a).item()) for a in args[:2])
        return max(dft_length // 2 + 1, 0) * max(bins, 0) * itemsize

    return size


def _dft(node: onnx.NodeProto) -> Guard:
    """The signal's other axes × max(dft_length, its length) × 2 (real, imaginary); the axis is an attribute
    (opset 17, default 1) or an input (opset 20, default -2): without either both are bounded."""
    axis_attribute = attribute(node, "axis")

    def size(args: Sequence[Any]) -> int:
        x = args[0]
        length = _given(args, 1)
        axis_input = _given(args, 2)
        if axis_attribute is not None:
            axes = [int(axis_attribute)]
        elif axis_input is not None:
            axes = [int(axis_input.item())]
        else:
            axes = [1, -2]
        biggest = 0
        for axis in axes:
            along = int(x.shape[axis % x.ndim])
            points = max(int(length.item()) if length is not None else along, along)
            biggest = max(biggest, x.size // max(x.shape[-1], 1) // max(along, 1) * points * 2)
        return biggest * int(x.itemsize)

    return size


def _stft(node: onnx.NodeProto) -> Guard:
    onesided = int(attribute(node, "onesided", 1))

    def size(args: Sequence[Any]) -> int:
        signal, step = args[0], int(np.asarray(args[1]).item())
        window, frame = _given(args, 2), _given(args, 3)
        frame_length = int(frame.item()) if frame is not None else int(window.shape[0])
        frames = (int(signal.shape[1]) - frame_length) // max(step, 1) + 1
        bins = frame_length // 2 + 1 if onesided else frame_length
        return prod((signal.shape[0], max(frames, 0), bins, 2)) * int(signal.itemsize)

    return size


def _affine_grid(args: Sequence[Any]) -> int:
    size = ints(args[1])  # N, C, then the spatial dims
    return prod((size[0], *size[2:], len(size) - 2)) * int(args[0].itemsize)


def _col2im(args: Sequence[Any]) -> int:
    x, image, block = args[0], ints(args[1]), ints(args[2])
    return prod((x.shape[0], int(x.shape[1]) // max(prod(block), 1), *image)) * int(x.itemsize)


def _max_unpool(node: onnx.NodeProto) -> Guard:
    def size(args: Sequence[Any]) -> int:
        x, output_shape = args[0], _given(args, 2)
        if output_shape is not None:
            return prod(ints(output_shape)) * int(x.itemsize)
        spatial = [int(d) for d in x.shape[2:]]
        n = len(spatial)
        kernel = list(attribute(node, "kernel_shape"))
        strides = list(attribute(node, "strides", None) or [1] * n)
        pads = list(attribute(node, "pads", None) or [0] * (2 * n))
        dims = [(d - 1) * int(strides[i]) - int(pads[i]) - int(pads[i + n]) + int(kernel[i])
                for i, d in enumerate(spatial)]
        return prod((*x.shape[:2], *dims)) * int(x.itemsize)

    return size


def _roi_align(node: onnx.NodeProto) -> Guard:
    cell = int(attribute(node, "output_height", 1)) * int(attribute(node, "output_width", 1))
    return lambda args: prod((args[1].shape[0], args[0].shape[1], max(cell, 0))) * int(args[0].itemsize)


def _max_roi_pool(node: onnx.NodeProto) -> Guard:
    cell = prod(attribute(node, "pooled_shape", None) or [])
    return lambda args: prod((args[1].shape[0], args[0].shape[1], cell)) * int(args[0].itemsize)


def _center_crop_pad(node: onnx.NodeProto) -> Guard:
    axes_attribute = attribute(node, "axes")

    def size(args: Sequence[Any]) -> int:
        x, shape = args[0], ints(args[1])
        axes = list(range(x.ndim)) if axes_attribute is None else [int(a) % x.ndim for a in axes_attribute]
        dims = list(x.shape)
        for axis, d in zip(axes, shape):
            dims[axis] = d
        return prod(dims) * int(x.itemsize)

    return size


def _grid_sample(args: Sequence[Any]) -> int:
    x, grid = args[0], args[1]
    return prod((x.shape[0], x.shape[1], *grid.shape[1:-1])) * int(x.itemsize)


def _gather_nd(node: onnx.NodeProto) -> Guard:
    batch_dims = int(attribute(node, "batch_dims", 0))

    def size(args: Sequence[Any]) -> int:
        data, indices = args[0], np.asarray(args[1])
        depth = int(indices.shape[-1])
        return prod((*indices.shape[:-1], *data.shape[batch_dims + depth:])) * int(data.itemsize)

    return size


BY_INPUTS: dict[str, Guard] = {"AffineGrid": _affine_grid, "Col2Im": _col2im, "GridSample": _grid_sample}
BY_NODE: dict[str, Callable[[onnx.NodeProto], Guard]] = {
    "Gemm": _gemm, "Conv": _conv(0, 1), "ConvInteger": _conv(0, 1, 4), "QLinearConv": _conv(0, 3),
    "DeformConv": _conv(0, 1), "ConvTranspose": _conv_transpose, "Attention": _attention,
    **{op: _recurrent for op in ("GRU", "LSTM", "RNN")},
    "RandomNormal": _random, "RandomUniform": _random, "Multinomial": _multinomial,
    **{op: _window for op in ("HannWindow", "HammingWindow", "BlackmanWindow")},
    "MelWeightMatrix": _mel_weights, "DFT": _dft, "STFT": _stft, "MaxUnpool": _max_unpool,
    "RoiAlign": _roi_align, "MaxRoiPool": _max_roi_pool, "CenterCropPad": _center_crop_pad,
    "GatherND": _gather_nd}
