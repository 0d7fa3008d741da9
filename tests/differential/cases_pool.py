"""MaxPool, AveragePool, LpPool, the global pools and MaxUnpool at every version: pads, strides, dilations,
auto_pad, ceil_mode, count_include_pad, storage_order, the Indices output."""
from __future__ import annotations

import numpy as np

from .gen import narrowed, rng, schema_types, since_versions, values
from .harness import Case
from .nn_support import half_judge

# (input shape, attributes, first version that defines every attribute used)
WINDOWS = [
    ((2, 3, 7, 8), {"kernel_shape": [3, 2], "pads": [1, 0, 1, 1], "strides": [2, 2]}, 1),
    ((1, 2, 9), {"kernel_shape": [3], "auto_pad": "SAME_UPPER", "strides": [2]}, 1),
    ((1, 2, 9), {"kernel_shape": [2], "auto_pad": "SAME_LOWER", "strides": [2]}, 1),
    ((1, 2, 5, 6, 4), {"kernel_shape": [2, 3, 2], "auto_pad": "VALID"}, 1),
    ((1, 2, 6, 6), {"kernel_shape": [2, 2], "auto_pad": "NOTSET", "pads": [1, 1, 1, 1]}, 1),
    ((2, 2, 9, 8), {"kernel_shape": [3, 2], "pads": [1, 0, 1, 1], "strides": [2, 2], "ceil_mode": 1}, 10),
    ((1, 2, 10, 8), {"kernel_shape": [3, 2], "strides": [3, 3], "ceil_mode": 1, "dilations": [2, 1]}, 10),
    ((1, 2, 10, 8), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 1, 2, 2]}, 10),
    # a kernel of 1 along an axis (MaxPool folds that axis by a strided view), and along every axis
    ((1, 2, 6, 7), {"kernel_shape": [1, 3], "strides": [2, 1]}, 1),
    ((1, 2, 5, 5), {"kernel_shape": [1, 1], "strides": [2, 2]}, 1),
]

LEGACY = "onnxruntime does not implement {op}-{version}; version {judge} computes the same for these attributes"


def _pool(op: str, extra_versions: dict[str, int], first_ort: int) -> list[Case]:
    """Every window of the table at every version that defines its attributes; `extra_versions` maps an
    op-specific attribute to the version that brought it."""
    found = []
    dilation_from = {"MaxPool": 10, "AveragePool": 19, "LpPool": 18}[op]
    ceil_from = {"MaxPool": 10, "AveragePool": 10, "LpPool": 18}[op]
    for version in since_versions(op):
        judge = {} if version >= first_ort else {"judge_version": first_ort,
                                                 "reason": LEGACY.format(op=op, version=version, judge=first_ort)}
        for k, (x_shape, attrs, _since) in enumerate(WINDOWS):
            attrs = dict(attrs)
            if ("dilations" in attrs and version < dilation_from) or ("ceil_mode" in attrs and version < ceil_from):
                continue
            if op == "LpPool" and version < 11 and ("auto_pad" in attrs and attrs["auto_pad"] != "NOTSET"):
                continue
            for name, since_attr in extra_versions.items():
                if version >= since_attr and k % 2 == 0:
                    attrs[name] = {"count_include_pad": 1, "storage_order": 1, "p": 3}[name]
            if op == "LpPool" and version == 1 and "p" in attrs:
                attrs["p"] = 3.0
            r = rng(op, version, k)
            x = values(r, x_shape, np.float32)
            if op == "LpPool" and version == 1:
                found.append(Case(op, version, [x], attrs=attrs, expected=[lp_pool_by_hand(x, attrs)],
                                  reason="onnxruntime reads LpPool-1's float p as LpPool-2's int; the spec's "
                                         "(sum |x|^p)^(1/p) over each zero-padded window"))
                continue
            found.append(Case(op, version, [x], attrs=attrs, **judge))
            if op == "MaxPool" and version >= 8:
                found.append(Case(op, version, [values(r, x_shape, np.float32)], attrs=attrs, outputs=2))
        for dtype in schema_types(op, version):
            r = rng(op, version, str(dtype))
            attrs = {"kernel_shape": [2, 2], "strides": [2, 1], "pads": [1, 0, 0, 1]}
            tol = (5e-3, 5e-3) if dtype == np.float16 else None
            found.append(Case(op, version, [values(r, (1, 2, 5, 5), dtype, -100, 100)], attrs=attrs, tol=tol,
                              dtype_sweep=True, **(half_judge(op, version, dtype) or judge), **narrowed(dtype)))
    return found


def lp_pool_by_hand(x: np.ndarray, attrs: dict) -> np.ndarray:
    """LpPool of explicit pads or VALID windows, window by window."""
    kernel, rank = attrs["kernel_shape"], len(attrs["kernel_shape"])
    strides = attrs.get("strides", [1] * rank)
    pads = attrs.get("pads", [0] * 2 * rank) if attrs.get("auto_pad", "NOTSET") == "NOTSET" else [0] * 2 * rank
    p = float(attrs.get("p", 2))
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[i], pads[i + rank]) for i in range(rank)])
    windows = np.lib.stride_tricks.sliding_window_view(padded, kernel, axis=tuple(range(2, 2 + rank)))
    windows = windows[(slice(None), slice(None), *(slice(None, None, s) for s in strides))]
    return (np.sum(np.abs(windows) ** p, axis=tuple(range(-rank, 0))) ** (1 / p)).astype(x.dtype)


def _global(op: str, first_ort: int | None) -> list[Case]:
    found = []
    for version in since_versions(op):
        for dtype in schema_types(op, version):
            for k, x_shape in enumerate([(2, 3, 4), (1, 2, 3, 4), (1, 2, 2, 3, 2)]):
                r = rng(op, version, str(dtype), k)
                attrs = {}
                if op == "GlobalLpPool" and k != 1:
                    attrs = {"p": 3.0 if version == 1 else 3}
                x = values(r, x_shape, dtype)
                tol = (5e-3, 5e-3) if dtype == np.float16 else None
                if op == "GlobalLpPool":
                    p = float(attrs.get("p", 2))
                    want = (np.sum(np.abs(x.astype(np.float64)) ** p, axis=tuple(range(2, x.ndim)),
                                   keepdims=True) ** (1 / p)).astype(dtype)
                    found.append(Case(op, version, [x], attrs=attrs, tol=tol, expected=[want],
                                      reason="onnxruntime does not implement GlobalLpPool; the spec's formula "
                                             "(sum |x|^p)^(1/p) over the spatial axes"))
                else:
                    found.append(Case(op, version, [x], attrs=attrs, tol=tol, dtype_sweep=True,
                                      **half_judge(op, version, dtype), **narrowed(dtype)))
    return found


def _unpool() -> list[Case]:
    found = []
    for version in since_versions("MaxUnpool"):
        for k, (x_shape, attrs, shape) in enumerate([
                ((1, 2, 8, 8), {"kernel_shape": [2, 2], "strides": [2, 2]}, None),
                ((1, 2, 9, 9), {"kernel_shape": [2, 2], "strides": [2, 2]}, [1, 2, 9, 9]),
                ((1, 1, 7, 6), {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 0]}, None)]):
            r = rng("MaxUnpool", version, k)
            x = values(r, x_shape, np.float32)
            pooled = [c for c in _pool_for_unpool(x, attrs)]
            inputs = [*pooled, np.array(shape, np.int64)] if shape else pooled
            found.append(Case("MaxUnpool", version, inputs, attrs=attrs))
    return found


def _pool_for_unpool(x: np.ndarray, attrs: dict) -> list[np.ndarray]:
    """MaxPool's values and indices for x, computed by onnxruntime."""
    from .harness import run_onnxruntime

    values_and_indices = run_onnxruntime([Case("MaxPool", 12, [x], attrs=attrs, outputs=2)])[0]
    assert not isinstance(values_and_indices, str), values_and_indices
    return list(values_and_indices)


def cases() -> list[Case]:
    return [
        *_pool("MaxPool", {"storage_order": 8}, 1),
        *_pool("AveragePool", {"count_include_pad": 7}, 7),
        *_pool("LpPool", {"p": 1}, 2),
        *_global("GlobalMaxPool", 1),
        *_global("GlobalAveragePool", 1),
        *_global("GlobalLpPool", None),
        *_unpool(),
        Case("MaxPool", 12, [np.zeros((1, 1, 4, 4), np.float32)], attrs={"kernel_shape": [5, 5]},
             error="larger than the padded input"),
        Case("MaxPool", 1, [np.zeros((1, 1, 4, 4), np.float32)], attrs={"kernel_shape": [2, 2]}, outputs=2,
             error="MaxPool-1 makes at most 1"),
    ]
