"""Normalizations: BatchNormalization (1, 6, 7, 9, 14, 15), InstanceNormalization (1, 6, 22), LayerNormalization
(17, and onnxruntime's own 1 before it), onnxruntime's SimplifiedLayerNormalization (1), RMSNormalization (23), GroupNormalization (18, 21), LRN (1, 13), LpNormalization (1, 22), MeanVarianceNormalization (9, 13) and
Dropout (1, 6, 7, 10, 12, 13, 22), whose training mask is drawn from the node's random stream (ops/streams.py). Half
precision is computed in float32."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx

from .base import KernelFactory, OpNode, PlainKernel
from .shared import compute_dtype, node_attributes
from .streams import stream


def _work(x: np.ndarray) -> np.ndarray:
    return x.astype(compute_dtype(x.dtype), copy=False)


def _channel_shape(x: np.ndarray) -> tuple[int, ...]:
    return (1, -1) + (1,) * (x.ndim - 2)


def _outputs(op: OpNode) -> int:
    return sum(1 for name in op.node.proto.output if name)


def batch_normalization_kernel(op: OpNode) -> PlainKernel:
    version, attrs = node_attributes(op)
    epsilon, momentum = float(attrs["epsilon"]), float(attrs["momentum"])
    spatial = bool(attrs.get("spatial") if attrs.get("spatial") is not None else 1)
    if version >= 14:
        training = bool(attrs["training_mode"])
    elif version < 7 and attrs.get("is_test"):
        training = False
    else:
        training = _outputs(op) > 1
    if version >= 14 and not training and _outputs(op) > 1:
        raise op.error("running_mean and running_var are outputs only when training_mode=1")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, scale, bias, mean, var = args[:5]
        xw = _work(x)
        shape = (1,) + x.shape[1:] if not spatial else _channel_shape(x)
        axes = (0,) if not spatial else (0, *range(2, x.ndim))
        if training:
            batch_mean = xw.mean(axis=axes)
            batch_var = xw.var(axis=axes)
            use_mean, use_var = batch_mean, batch_var
        else:
            use_mean, use_var = mean, var
        # per channel first, as onnxruntime computes it: y = x·a + b, two passes over x instead of four
        a = scale.reshape(shape) / np.sqrt(use_var.reshape(shape) + epsilon)
        b = bias.reshape(shape) - use_mean.reshape(shape) * a
        y = xw * a
        y += b
        y = y.astype(x.dtype, copy=False)
        if not training:
            return (y,)
        running_mean = (mean * momentum + batch_mean * (1 - momentum)).astype(mean.dtype)
        running_var = (var * momentum + batch_var * (1 - momentum)).astype(var.dtype)
        if version >= 14:
            return y, running_mean, running_var
        return y, running_mean, running_var, batch_mean.astype(mean.dtype), batch_var.astype(var.dtype)

    return run


def instance_normalization_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    epsilon = float(attrs["epsilon"])

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, scale, bias = args[:3]
        if x.ndim < 3:
            raise ValueError(f"input of rank {x.ndim} has no spatial axes (expected N, C, D1, ...)")
        xw = _work(x)
        axes = tuple(range(2, x.ndim))
        mean = xw.mean(axis=axes, keepdims=True)
        var = xw.var(axis=axes, keepdims=True)
        shape = _channel_shape(x)
        y = (xw - mean) / np.sqrt(var + epsilon) * scale.reshape(shape) + bias.reshape(shape)
        return (y.astype(x.dtype, copy=False),)

    return run


def _over_trailing_axes(op: OpNode) -> tuple[int, float, np.dtype]:
    """LayerNormalization's and RMSNormalization's attributes: the first normalized axis (the rest follow it),
    epsilon, and the stash type they compute in."""
    _, attrs = node_attributes(op)
    stash = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(attrs["stash_type"])))
    return int(attrs["axis"]), float(attrs["epsilon"]), stash


def _trailing_axes(axis: int, x: np.ndarray) -> tuple[int, ...]:
    """The axes from `axis` (in [-r, r-1]) to the last."""
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for an input of rank {x.ndim}")
    return tuple(range(axis % x.ndim, x.ndim))


def layer_normalization_kernel(op: OpNode) -> PlainKernel:
    axis, epsilon, stash = _over_trailing_axes(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, scale = args[0], args[1]
        bias = args[2] if len(args) > 2 else None
        axes = _trailing_axes(axis, x)
        xw = x.astype(np.promote_types(stash, compute_dtype(x.dtype)))  # double stays double, as in onnxruntime
        mean = xw.mean(axis=axes, keepdims=True)
        inv_std = 1.0 / np.sqrt(((xw - mean) ** 2).mean(axis=axes, keepdims=True) + epsilon)
        y = (xw - mean) * inv_std * scale
        if bias is not None:
            y = y + bias
        return y.astype(x.dtype, copy=False), mean.astype(stash), inv_std.astype(stash)

    return run


def rms_normalization_kernel(op: OpNode) -> PlainKernel:
    axis, epsilon, stash = _over_trailing_axes(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, scale = args
        xw = x.astype(stash)
        mean_square = np.mean(xw * xw, axis=_trailing_axes(axis, x), keepdims=True)
        normalized = (xw / np.sqrt(mean_square + epsilon)).astype(x.dtype)  # stage one ends in X's type
        work = compute_dtype(scale.dtype)
        return ((normalized.astype(work) * scale.astype(work)).astype(scale.dtype),)

    return run


def simplified_layer_normalization_kernel(op: OpNode) -> PlainKernel:
    """onnxruntime's RMS normalization over the axes from `axis`, in float32 (float64 for double), with inv_std_var
    in the stash type."""
    axis, epsilon, stash = _over_trailing_axes(op)

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, scale = args[:2]
        xw = x.astype(np.promote_types(stash, compute_dtype(x.dtype)))
        inv_std = 1.0 / np.sqrt(np.mean(xw * xw, axis=_trailing_axes(axis, x), keepdims=True) + epsilon)
        y = xw * inv_std * scale.astype(xw.dtype)
        return y.astype(scale.dtype, copy=False), inv_std.astype(stash)

    return run


def group_normalization_kernel(op: OpNode) -> PlainKernel:
    version, attrs = node_attributes(op)
    epsilon = float(attrs["epsilon"])
    if attrs.get("num_groups") is None:
        raise op.error("num_groups is required")
    groups = int(attrs["num_groups"])

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, scale, bias = args[:3]
        n, c = x.shape[:2]
        if groups < 1 or c % groups:
            raise ValueError(f"{c} channels do not split into num_groups={groups}")
        xw = _work(x).reshape(n, groups, -1)
        mean = xw.mean(axis=2, keepdims=True)
        var = xw.var(axis=2, keepdims=True)
        normalized = ((xw - mean) / np.sqrt(var + epsilon)).reshape(x.shape)
        wanted = groups if version < 21 else c
        if scale.shape != (wanted,) or bias.shape != (wanted,):
            raise ValueError(f"GroupNormalization-{version} takes scale and bias of shape ({wanted},), got "
                             f"{scale.shape} and {bias.shape}")
        if version < 21:
            scale, bias = np.repeat(scale, c // groups), np.repeat(bias, c // groups)
        y = normalized * scale.reshape(_channel_shape(x)) + bias.reshape(_channel_shape(x))
        return (y.astype(x.dtype, copy=False),)

    return run


def lrn_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    if attrs.get("size") is None:
        raise op.error("size is required")
    size = int(attrs["size"])
    alpha, beta, bias = float(attrs["alpha"]), float(attrs["beta"]), float(attrs["bias"])
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        xw = _work(x)
        squares = np.pad(xw * xw, [(0, 0), (before + 1, after)] + [(0, 0)] * (x.ndim - 2))
        cumulative = np.cumsum(squares, axis=1)
        channels = x.shape[1]
        square_sum = cumulative[:, size:size + channels] - cumulative[:, :channels]
        y = xw / (bias + alpha / size * square_sum) ** beta
        return (y.astype(x.dtype, copy=False),)

    return run


def lp_normalization_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    axis, p = int(attrs["axis"]), int(attrs["p"])
    if p not in (1, 2):
        raise op.error(f"p must be 1 or 2, got {p}")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        xw = _work(x)
        norm = np.abs(xw).sum(axis=axis, keepdims=True) if p == 1 else np.sqrt((xw * xw).sum(axis=axis,
                                                                                             keepdims=True))
        y = np.divide(xw, norm, out=np.zeros_like(xw), where=norm != 0)
        return (y.astype(x.dtype, copy=False),)

    return run


def mean_variance_normalization_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    axes = tuple(int(a) for a in attrs["axes"])

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        xw = _work(x)
        mean = xw.mean(axis=axes, keepdims=True)
        variance = (xw * xw).mean(axis=axes, keepdims=True) - mean * mean
        y = (xw - mean) / (np.sqrt(variance) + np.asarray(1e-9, xw.dtype))
        return (y.astype(x.dtype, copy=False),)

    return run


def dropout_kernel(op: OpNode) -> PlainKernel:
    version, attrs = node_attributes(op)
    seed, path = attrs.get("seed"), op.path
    wants_mask = _outputs(op) > 1

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x = args[0]
        if version >= 12:
            ratio = float(np.asarray(args[1])) if len(args) > 1 and args[1] is not None else 0.5
            training = bool(np.asarray(args[2])) if len(args) > 2 and args[2] is not None else False
        else:
            ratio = float(attrs["ratio"])
            training = version < 7 and not attrs.get("is_test")
        if not 0 <= ratio < 1:
            raise ValueError(f"ratio must lie in [0, 1), got {ratio}")
        if training and ratio > 0:
            keep = stream(path, seed).random_sample(x.shape) >= ratio
            y = (x * keep / np.asarray(1 - ratio, dtype=x.dtype)).astype(x.dtype, copy=False)
        else:
            if not wants_mask:
                return (x,)
            keep, y = np.ones(x.shape, dtype=bool), x
        return y, (keep if version >= 10 else keep.astype(x.dtype))

    return run


KERNELS: dict[str, KernelFactory] = {
    "BatchNormalization": batch_normalization_kernel,
    "Dropout": dropout_kernel,
    "GroupNormalization": group_normalization_kernel,
    "InstanceNormalization": instance_normalization_kernel,
    "LayerNormalization": layer_normalization_kernel,
    "LpNormalization": lp_normalization_kernel,
    "LRN": lrn_kernel,
    "MeanVarianceNormalization": mean_variance_normalization_kernel,
    "RMSNormalization": rms_normalization_kernel,
    "SimplifiedLayerNormalization": simplified_layer_normalization_kernel,
}
