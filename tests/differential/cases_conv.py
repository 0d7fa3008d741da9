"""Conv, ConvTranspose, ConvInteger: 1-D/2-D/3-D, groups, strides, dilations, pads, every auto_pad."""
from __future__ import annotations

import numpy as np

from .gen import narrowed, rng, schema_types, since_versions, values
from .harness import Case
from .nn_support import half_judge

CONV_ATTRS = [
    ((1, 4, 9), (6, 2, 3), {"group": 2, "strides": [2], "pads": [1, 2], "kernel_shape": [3]}),
    ((2, 3, 7, 8), (4, 3, 3, 2), {"dilations": [2, 1], "pads": [1, 0, 2, 1]}),
    ((1, 6, 6, 7), (6, 1, 3, 3), {"group": 6, "auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ((1, 3, 6, 7), (2, 3, 2, 2), {"auto_pad": "SAME_LOWER", "strides": [2, 3]}),
    ((1, 2, 5, 4, 6), (3, 2, 2, 3, 2), {"auto_pad": "VALID", "strides": [1, 2, 2]}),
    ((1, 5, 4, 4), (3, 5, 1, 1), {"auto_pad": "NOTSET"}),
    ((1, 4, 24, 24), (4, 1, 3, 3), {"group": 4, "pads": [1, 1, 1, 1], "dilations": [2, 1]}),  # a big depthwise
]

TRANSPOSE_ATTRS = [
    ((1, 4, 5), (4, 3, 3), {"group": 2, "strides": [2], "pads": [1, 0], "output_padding": [1], "kernel_shape": [3]}),
    ((2, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2], "dilations": [2, 1], "pads": [0, 1, 1, 0]}),
    ((1, 3, 4, 5), (3, 2, 3, 3), {"strides": [2, 2], "output_shape": [9, 12]}),
    ((1, 2, 4, 4), (2, 2, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 4, 4), (2, 2, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 3, 4, 3), (2, 1, 2, 2, 2), {"strides": [1, 2, 2], "auto_pad": "VALID"}),
    ((1, 6, 4, 4), (6, 1, 3, 3), {"group": 6, "auto_pad": "NOTSET", "pads": [1, 1, 1, 1]}),
    # depthwise with two output channels per input channel, batch 2, strided: an outer product per channel
    ((2, 3, 3, 5), (3, 2, 3, 2), {"group": 3, "strides": [2, 1], "pads": [1, 0, 0, 1]}),
    ((1, 4, 6), (4, 1, 5), {"group": 4, "strides": [2], "output_padding": [1], "kernel_shape": [5]}),
    # 1x1 kernels: at stride 1 without pads the product is the output; strided or padded they are scattered
    ((1, 6, 3, 5), (6, 4, 1, 1), {"group": 2}),
    ((2, 3, 4), (3, 2, 1), {"strides": [2]}),
    ((1, 4, 3, 3), (4, 2, 1, 1), {"pads": [0, 1, 0, 0]}),
]


def _conv(op: str, table) -> list[Case]:
    found = []
    for version in since_versions(op):
        for dtype in schema_types(op, version):
            r = rng(op, version, str(dtype))
            x_shape, w_shape, attrs = table[0]
            x, w = values(r, x_shape, dtype), values(r, w_shape, dtype, -1, 1)
            out_channels = w_shape[0] if op == "Conv" else w_shape[1] * attrs.get("group", 1)
            tol = (1e-2, 2e-2) if dtype == np.float16 else None
            legacy = half_judge(op, version, dtype)
            found.append(Case(op, version, [x, w, values(r, (out_channels,), dtype)], attrs=attrs, tol=tol,
                              dtype_sweep=True, **legacy, **narrowed(dtype)))
        for k, (x_shape, w_shape, attrs) in enumerate(table):
            r = rng(op, version, k)
            bias = [values(r, (w_shape[0] if op == "Conv" else w_shape[1] * attrs.get("group", 1),), np.float32)]
            found.append(Case(op, version, [values(r, x_shape, np.float32), values(r, w_shape, np.float32, -1, 1),
                                            *(bias if k % 2 == 0 else [])], attrs=attrs, tol=(1e-5, 1e-5)))
        r = rng(op, version, "empty batch")
        found.append(Case(op, version, [values(r, (0, 2, 5, 5), np.float32), values(r, (2, 2, 3, 3), np.float32)]))
    return found


def _conv_integer() -> list[Case]:
    found = []
    specs = [((1, 3, 6, 6), (4, 3, 3, 3), {"pads": [1, 1, 1, 1], "kernel_shape": [3, 3]}),
             ((1, 4, 7, 6), (4, 2, 2, 3), {"group": 2, "strides": [2, 1], "dilations": [1, 2]}),
             ((1, 2, 5), (3, 2, 2), {"auto_pad": "SAME_UPPER", "strides": [2]})]
    for k, (x_shape, w_shape, attrs) in enumerate(specs):
        for x_type, w_type in ((np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)):
            r = rng("ConvInteger", k, str(x_type), str(w_type))
            x = values(r, x_shape, x_type, -128, 255)
            w = values(r, w_shape, w_type, -128, 255)
            zeros = [values(r, (), x_type, 0, 9), values(r, (), w_type, 0, 9)] if k != 2 else []
            found.append(Case("ConvInteger", 10, [x, w, *zeros], attrs=attrs))
    r = rng("ConvInteger", "per channel")
    found.append(Case("ConvInteger", 10, [values(r, (1, 2, 4, 4), np.uint8, 0, 255),
                                          values(r, (3, 2, 2, 2), np.uint8, 0, 255), np.array(3, np.uint8),
                                          np.array([1, 2, 3], np.uint8)],
                      reason="onnxruntime takes only a scalar w_zero_point; the spec allows one per output channel",
                      expected=[_conv_integer_reference()]))
    return found


def _conv_integer_reference() -> np.ndarray:
    """Per-channel w_zero_point by hand: each output channel's weights shifted by its own zero point."""
    r = rng("ConvInteger", "per channel")
    x = values(r, (1, 2, 4, 4), np.uint8, 0, 255).astype(np.int64) - 3
    w = values(r, (3, 2, 2, 2), np.uint8, 0, 255).astype(np.int64) - np.array([1, 2, 3]).reshape(3, 1, 1, 1)
    out = np.zeros((1, 3, 3, 3), np.int64)
    for i in range(3):
        for j in range(3):
            out[0, :, i, j] = np.tensordot(w, x[0, :, i:i + 2, j:j + 2], axes=([1, 2, 3], [0, 1, 2]))
    return out.astype(np.int32)


def _refusals() -> list[Case]:
    r = rng("conv refusals")
    x, w = values(r, (1, 2, 5, 5), np.float32), values(r, (2, 2, 3, 3), np.float32)
    return [Case("Conv", 11, [x, w], attrs={"kernel_shape": [2, 2]}, error="kernel_shape [2, 2] differs"),
            Case("Conv", 11, [x, w], attrs={"group": 3}, error="do not split into 3 groups"),
            Case("ConvTranspose", 11, [x, w], attrs={"output_padding": [1]}, error="output_padding")]


def cases() -> list[Case]:
    return [*_conv("Conv", CONV_ATTRS), *_conv("ConvTranspose", TRANSPOSE_ATTRS), *_conv_integer(), *_refusals()]
