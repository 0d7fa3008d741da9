"""Col2Im and DeformConv (explorer/executor/ops/patches.py): 1-D to 3-D, strides, dilations, pads, groups, offset
groups, masks, bias, every type of their schemas."""
from __future__ import annotations

import numpy as np

from .gen import rng, schema_types, values
from .harness import Case, Cast, run_onnxruntime

ONE_D = "onnxruntime convolves 2-D only: judged by onnxruntime on the same row as a (N, C, 1, W) image"
THREE_D = "onnxruntime convolves 2-D only: the spec's sum over taps of trilinear samples (zero outside), by hand"
COL2IM_CAST = Cast(np.float32, "integers below 10 summed over a few blocks are exact in float32, float16 values too; "
                   "float64 is compared at float32's precision")
DEFORM_CAST = Cast(np.float32, "bfloat16 and float16 values are exact in float32 (float64 is compared at float32's "
                   "precision); the result is compared at the case's tolerance")


def _as_row_by_onnxruntime(inputs: list, attrs: dict, version: int) -> np.ndarray:
    """A 1-D DeformConv as onnxruntime's 2-D one over a one-row image, the taps' row offsets zero."""
    x, w, offset = inputs[:3]
    row_offsets = np.zeros_like(offset)
    offset_2d = np.stack([row_offsets, offset], axis=2).reshape(offset.shape[0], -1, 1, offset.shape[2])
    extra = [inputs[3]] if len(inputs) > 3 else []
    if len(inputs) > 4:
        extra.append(inputs[4][:, :, None])
    pads = attrs.get("pads", [0, 0])
    wide = {**attrs, "pads": [0, pads[0], 0, pads[1]], "strides": [1, *attrs.get("strides", [1])]}
    result = run_onnxruntime([Case("DeformConv", version, [x[:, :, None], w[:, :, None], offset_2d, *extra],
                                   wide)])[0]
    assert not isinstance(result, str), result
    return result[0][:, :, 0]


def _trilinear(image: np.ndarray, point: tuple[float, ...]) -> float:
    total = 0.0
    for corner in np.ndindex(2, 2, 2):
        at = [int(np.floor(p)) + c for p, c in zip(point, corner)]
        if all(0 <= a < d for a, d in zip(at, image.shape)):
            total += float(np.prod([1 - abs(p - a) for p, a in zip(point, at)])) * float(image[tuple(at)])
    return total


def _deform_3d_by_hand(inputs: list, attrs: dict) -> np.ndarray:
    """Y[n, m, o] = B[m] + sum over channels c of m's group and taps k of W[m, c, k] * mask * X[n, c] sampled at
    o * stride - pad + k * dilation + offset (one group of offsets)."""
    x, w, offset = inputs[:3]
    groups = attrs.get("group", 1)
    pads, out = attrs.get("pads", [0] * 6), offset.shape[2:]
    kernel = w.shape[2:]
    y = np.zeros((x.shape[0], w.shape[0], *out))
    per_group, out_per_group = x.shape[1] // groups, w.shape[0] // groups
    for n, m, o in ((n, m, o) for n in range(x.shape[0]) for m in range(w.shape[0]) for o in np.ndindex(*out)):
        for t, k in enumerate(np.ndindex(*kernel)):
            point = tuple(o[a] - pads[a] + k[a] + float(offset[(n, t * 3 + a, *o)]) for a in range(3))
            for c in range(per_group):
                channel = (m // out_per_group) * per_group + c
                y[(n, m, *o)] += float(w[(m, c, *k)]) * _trilinear(x[n, channel].astype(np.float64), point)
    return y.astype(x.dtype)


def _blocks(image: tuple[int, ...], block: tuple[int, ...], strides, dilations, pads) -> int:
    rank = len(image)
    return int(np.prod([(image[a] + pads[a] + pads[a + rank] - dilations[a] * (block[a] - 1) - 1) // strides[a] + 1
                        for a in range(rank)]))


COL2IM = [  # image, block, attributes
    ((5, 5), (2, 2), {}),
    ((6, 5), (3, 2), {"strides": [2, 1], "dilations": [1, 2], "pads": [1, 0, 1, 2]}),
    ((4, 5, 3), (2, 2, 2), {"strides": [1, 2, 1], "pads": [0, 1, 0, 0, 1, 1]}),
    ((7, 4), (1, 1), {"strides": [3, 2]}),
]


def _col2im() -> list[Case]:
    found = []
    for dtype in schema_types("Col2Im", 18):
        if dtype.kind in "OUSb":
            continue
        for k, (image, block, attrs) in enumerate(COL2IM):
            r = rng("Col2Im", str(dtype), k)
            rank = len(image)
            strides = attrs.get("strides", [1] * rank)
            dilations = attrs.get("dilations", [1] * rank)
            pads = attrs.get("pads", [0] * 2 * rank)
            cols = values(r, (2, 3 * int(np.prod(block)), _blocks(image, block, strides, dilations, pads)), dtype,
                          0 if dtype.kind == "u" else -9, 9)
            found.append(Case("Col2Im", 18, [cols, np.array(image, np.int64), np.array(block, np.int64)], attrs,
                              dtype_sweep=True, cast=COL2IM_CAST, tol=(1e-2, 1e-2) if dtype == np.float16 else None))
    found.append(Case("Col2Im", 18, [np.ones((1, 4, 5)), np.array([5, 5], np.int64), np.array([2, 2], np.int64)],
                      error="blocks of an image"))
    return found


DEFORM = [  # X, W, attributes
    ((2, 4, 5, 6), (6, 2, 3, 3), {"group": 2, "offset_group": 2, "pads": [1, 1, 1, 1]}),
    ((1, 3, 6, 5), (4, 3, 2, 2), {"strides": [2, 1], "dilations": [1, 2], "kernel_shape": [2, 2]}),
    ((1, 2, 7), (3, 2, 3), {"pads": [2, 0], "strides": [2]}),
    ((1, 2, 4, 4, 3), (2, 1, 2, 2, 2), {"group": 2, "pads": [0, 1, 0, 1, 0, 1]}),
]


def _out(x: tuple[int, ...], w: tuple[int, ...], attrs: dict) -> tuple[int, ...]:
    rank = len(x) - 2
    strides, dilations = attrs.get("strides", [1] * rank), attrs.get("dilations", [1] * rank)
    pads = attrs.get("pads", [0] * 2 * rank)
    return tuple((x[2 + a] + pads[a] + pads[a + rank] - dilations[a] * (w[2 + a] - 1) - 1) // strides[a] + 1
                 for a in range(rank))


def _deform_conv() -> list[Case]:
    found = []
    for version in (19, 22):
        for dtype in schema_types("DeformConv", version, exotic=True):
            for k, (x_shape, w_shape, attrs) in enumerate(DEFORM):
                r = rng("DeformConv", version, str(dtype), k)
                out = _out(x_shape, w_shape, attrs)
                taps, rank = int(np.prod(w_shape[2:])), len(x_shape) - 2
                groups = attrs.get("offset_group", 1)
                x, w = values(r, x_shape, dtype, -1, 1), values(r, w_shape, dtype, -1, 1)
                offset = values(r, (x_shape[0], groups * taps * rank, *out), dtype, -1.5, 1.5)
                bias, mask = values(r, (w_shape[0],), dtype), values(r, (x_shape[0], groups * taps, *out), dtype, 0, 1)
                tol = (1e-4, 1e-4) if dtype in (np.float32, np.float64) else (3e-2, 3e-2)
                inputs = [x, w, offset, bias, mask] if k % 2 == 0 else [x, w, offset]
                judge = {}
                if rank != 2 and dtype == np.float32:
                    judge = {"reason": ONE_D, "expected": [_as_row_by_onnxruntime(inputs, attrs, version)]} \
                        if rank == 1 else {"reason": THREE_D, "expected": [_deform_3d_by_hand(inputs, attrs)]}
                elif rank != 2:
                    continue  # other types: judged in 2-D
                found.append(Case("DeformConv", version, inputs, attrs, tol=tol, dtype_sweep=not judge,
                                  cast=None if judge else DEFORM_CAST, **judge))
        x = np.ones((1, 2, 4, 4), np.float32)
        found.append(Case("DeformConv", version, [x, np.ones((2, 2, 2, 2), np.float32), np.zeros((1, 8, 2, 2),
                          np.float32)], error="do not agree"))
    return found


def cases() -> list[Case]:
    return [*_col2im(), *_deform_conv()]
