"""Own kernels where onnx.reference is wrong for real exported models; each reuses the reference kernel under
attributes it does handle:
- ConvTranspose with `group > 1`: the reference slices the weights by output channels and misplaces the bias,
  so each group runs with group=1 and the results are concatenated.
- BatchNormalization opsets 9-13 with one output is inference mode, but the reference switches to batch
  statistics whenever `momentum` is set (its schema default sets it always), so that case is computed here.
"""
from __future__ import annotations

import numpy as np
import onnx

from ...graph import attribute
from ..reference import reference_kernel
from .base import KernelFactory


def _copy_without(node: onnx.NodeProto, attribute_name: str) -> onnx.NodeProto:
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    kept = [att for att in copy.attribute if att.name != attribute_name]
    del copy.attribute[:]
    copy.attribute.extend(kept)
    return copy


def conv_transpose_kernel(node, program):
    group = int(attribute(node.proto, "group", 1))
    if group == 1:
        return reference_kernel(node, program)
    single = _copy_without(node.proto, "group")
    del single.input[2:]  # the bias is added once, after the groups are joined
    per_group = reference_kernel(node, program, single)

    def run(args: list) -> tuple:
        x, w = args[0], args[1]
        bias = args[2] if len(args) > 2 else None
        if x.shape[1] % group or w.shape[0] != x.shape[1]:
            raise ValueError(f"input has {x.shape[1]} channels and weights {w.shape}; they do not split into "
                             f"{group} groups along the weights' first axis")
        xs = np.split(x, group, axis=1)
        ws = np.split(w, group, axis=0)
        y = np.concatenate([per_group([xg, wg])[0] for xg, wg in zip(xs, ws)], axis=1)
        if bias is not None:
            y = y + bias.reshape((1, -1) + (1,) * (y.ndim - 2))
        return (y.astype(x.dtype, copy=False),)

    return run


def batch_normalization_kernel(node, program):
    opset = program.opsets.get("", 1)
    outputs = [name for name in node.proto.output if name]
    if not (9 <= opset < 14 and len(outputs) == 1):
        return reference_kernel(node, program)
    epsilon = float(attribute(node.proto, "epsilon", 1e-5))

    def inference(args: list) -> tuple:
        x, scale, bias, mean, var = args[:5]
        shape = (1, -1) + (1,) * (x.ndim - 2)
        y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon) * scale.reshape(shape) \
            + bias.reshape(shape)
        return (y.astype(x.dtype, copy=False),)

    return inference


KERNELS: dict[str, KernelFactory] = {
    "BatchNormalization": batch_normalization_kernel,
    "ConvTranspose": conv_transpose_kernel,
}
