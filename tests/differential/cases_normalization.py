"""BatchNormalization, InstanceNormalization, LayerNormalization, RMSNormalization, GroupNormalization, LRN, LpNormalization,
MeanVarianceNormalization, Dropout at every version."""
from __future__ import annotations

import numpy as np

from .gen import narrowed, rng, schema_types, since_versions, values
from .harness import Case, Cast
from .nn_support import half_judge


def _stats(r, channels: int, dtype) -> list[np.ndarray]:
    scale, bias, mean = (values(r, (channels,), dtype) for _ in range(3))
    var = values(r, (channels,), dtype, 0.5, 2)
    return [scale, bias, mean, var]


def batch_norm_by_hand(x, scale, bias, mean, var, epsilon, spatial=True):
    shape = (1, -1) + (1,) * (x.ndim - 2) if spatial else (1,) + x.shape[1:]
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon) * scale.reshape(shape) + bias.reshape(shape)
    return y.astype(x.dtype)


def _batch_norm() -> list[Case]:
    found = []
    for version in since_versions("BatchNormalization"):
        r = rng("BatchNormalization", version)
        x = values(r, (2, 3, 4, 5), np.float32)
        stats = _stats(r, 3, np.float32)
        if version < 7:
            attrs = {"epsilon": 1e-3, "momentum": 0.8, "is_test": 1, "spatial": 1}
            if version == 1:
                attrs["consumed_inputs"] = [0, 0, 0, 1, 1]
            found.append(Case("BatchNormalization", version, [x, *stats], attrs=attrs,
                              expected=[batch_norm_by_hand(x, *stats, 1e-3)],
                              reason="onnxruntime implements BatchNormalization from 7; is_test=1 is the spec's "
                                     "inference formula"))
            continue
        attrs = {"epsilon": 1e-3, "momentum": 0.8}
        found.append(Case("BatchNormalization", version, [x, *stats], attrs=attrs))
        found.append(Case("BatchNormalization", version, [values(r, (3, 3), np.float32), *stats]))
        if version == 7:
            per_position = [values(r, (3, 4), np.float32, 0.5, 2) for _ in range(4)]
            found.append(Case("BatchNormalization", 7, [values(r, (2, 3, 4), np.float32), *per_position],
                              attrs={"spatial": 0}))
        if version >= 14:
            found.append(Case("BatchNormalization", version, [x, *stats], attrs={"training_mode": 1}, outputs=3,
                              tol=(1e-5, 1e-5)))
            found.append(Case("BatchNormalization", version, [x, *stats], attrs={"training_mode": 0}))
        if version == 9:
            axes = (0, 2, 3)
            batch_mean, batch_var = x.mean(axis=axes), x.var(axis=axes)
            scale, bias, mean, var = stats
            y = batch_norm_by_hand(x, scale, bias, batch_mean, batch_var, 1e-5)
            found.append(Case("BatchNormalization", 9, [x, *stats], outputs=5, tol=(1e-5, 1e-5), expected=[
                y, mean * 0.9 + batch_mean * 0.1, var * 0.9 + batch_var * 0.1, batch_mean, batch_var],
                reason="onnxruntime's saved_var is the inverse standard deviation; the spec names it the saved "
                       "(batch) variance"))
        for dtype in schema_types("BatchNormalization", version):
            dr = rng("BatchNormalization", version, str(dtype))
            found.append(Case("BatchNormalization", version, [values(dr, (1, 2, 3), dtype), *_stats(dr, 2, dtype)],
                              dtype_sweep=True, tol=(1e-2, 1e-2) if dtype == np.float16 else None))
    return found


def _instance_norm() -> list[Case]:
    found = []
    for version in since_versions("InstanceNormalization"):
        for dtype in schema_types("InstanceNormalization", version):
            r = rng("InstanceNormalization", version, str(dtype))
            attrs = {"epsilon": 1e-3}
            if version == 1:
                attrs["consumed_inputs"] = [0, 0, 0]
            x = values(r, (2, 3, 4, 5), dtype)
            case = {"attrs": attrs, "dtype_sweep": True, "tol": (1e-2, 1e-2) if dtype == np.float16 else (1e-4, 1e-5),
                    **narrowed(dtype)}
            inputs = [x, values(r, (3,), dtype), values(r, (3,), dtype)]
            if version == 1:
                mean, var = x.mean(axis=(2, 3), keepdims=True), x.var(axis=(2, 3), keepdims=True)
                y = ((x - mean) / np.sqrt(var + 1e-3) * inputs[1].reshape(1, 3, 1, 1)
                     + inputs[2].reshape(1, 3, 1, 1)).astype(dtype)
                found.append(Case("InstanceNormalization", 1, inputs, expected=[y], reason="onnxruntime implements "
                                  "InstanceNormalization from 6; the spec's formula", **case))
            else:
                found.append(Case("InstanceNormalization", version, inputs, **case))
    return found


RMS_CAST = Cast(np.float32, "bfloat16 and float16 values are exact in float32 (float64 is compared at float32's "
                "precision); the result is compared at the case's tolerance", params=("T", "V"))


def _layer_and_group_norm() -> list[Case]:
    found = []
    r = rng("LayerNormalization")
    for dtype in schema_types("LayerNormalization", 17):
        tol = (1e-2, 1e-2) if dtype == np.float16 else (1e-4, 1e-5)
        for axis, stash in ((-1, 1), (1, 1), (-2, 1)):
            x = values(r, (2, 3, 4), dtype)
            normalized = x.shape[axis % 3:]
            found.append(Case("LayerNormalization", 17, [x, values(r, normalized, dtype), values(r, normalized, dtype)],
                              attrs={"axis": axis, "epsilon": 1e-3, "stash_type": stash}, outputs=3, tol=tol,
                              dtype_sweep=True))
    for dtype in schema_types("RMSNormalization", 23, exotic=True):
        r = rng("RMSNormalization", str(dtype))
        tol = (2e-2, 2e-2) if dtype.itemsize == 2 else (1e-4, 1e-5)
        for axis, stash, epsilon in ((-1, 1, 1e-5), (1, 1, 1e-3), (-2, 11, 0.5), (0, 1, 1e-5)):
            x = values(r, (2, 3, 4), dtype)
            normalized = x.shape[axis % 3:]
            scale = values(r, normalized[-1:] if axis == 1 else normalized, dtype)  # broadcast
            found.append(Case("RMSNormalization", 23, [x, scale], tol=tol, dtype_sweep=True, cast=RMS_CAST,
                              attrs={"axis": axis, "epsilon": epsilon, "stash_type": stash}))
    x = values(rng("RMSNormalization", "mixed"), (2, 5), np.float16)
    scale = values(rng("RMSNormalization", "scale"), (5,), np.float32)
    wide = x.astype(np.float32)
    normalized = (wide / np.sqrt((wide * wide).mean(axis=-1, keepdims=True) + 1e-5)).astype(np.float16)
    found.append(Case("RMSNormalization", 23, [x, scale], tol=(2e-3, 2e-3), expected=[normalized * scale],
                      reason="onnxruntime's function body multiplies float16 by float32 and fails; the spec: "
                             "normalized in X's type, times the scale, in the scale's type"))
    for version in since_versions("GroupNormalization"):
        r = rng("GroupNormalization", version)
        x = values(r, (2, 4, 3, 3), np.float32)
        per = 2 if version < 21 else 4
        attrs = {"num_groups": 2, "epsilon": 1e-3}
        if version >= 21:
            attrs["stash_type"] = 1
        scale, bias = values(r, (per,), np.float32), values(r, (per,), np.float32)
        grouped = x.reshape(2, 2, -1)
        normalized = ((grouped - grouped.mean(axis=2, keepdims=True))
                      / np.sqrt(grouped.var(axis=2, keepdims=True) + 1e-3)).reshape(x.shape)
        channel_scale = np.repeat(scale, 2) if per == 2 else scale
        channel_bias = np.repeat(bias, 2) if per == 2 else bias
        y = (normalized * channel_scale.reshape(1, 4, 1, 1) + channel_bias.reshape(1, 4, 1, 1)).astype(np.float32)
        found.append(Case("GroupNormalization", version, [x, scale, bias], attrs=attrs, tol=(1e-5, 1e-5),
                          expected=[y], reason="onnxruntime's CPU provider has no GroupNormalization; the spec's "
                                               "formula (scale and bias per group at 18, per channel at 21)"))
    return found


def lrn_by_hand(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """The spec's LRN, channel by channel: the window is [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    channels = x.shape[1]
    out = np.empty_like(x, dtype=np.float64)
    for c in range(channels):
        low, high = max(0, c - (size - 1) // 2), min(channels - 1, c + (size - 1) - (size - 1) // 2)
        square_sum = (x[:, low:high + 1].astype(np.float64) ** 2).sum(axis=1)
        out[:, c] = x[:, c] / (bias + alpha / size * square_sum) ** beta
    return out.astype(x.dtype)


def _lrn() -> list[Case]:
    found = []
    for version in since_versions("LRN"):
        for size in (1, 3, 5):
            r = rng("LRN", version, size)
            found.append(Case("LRN", version, [values(r, (2, 7, 3, 4), np.float32)],
                              attrs={"size": size, "alpha": 0.02, "beta": 0.75, "bias": 2.0}))
        for size in (2, 4):
            r = rng("LRN", version, size)
            x = values(r, (1, 6, 3), np.float32)
            found.append(Case("LRN", version, [x], attrs={"size": size}, tol=(1e-5, 1e-6),
                              expected=[lrn_by_hand(x, size, 1e-4, 0.75, 1.0)],
                              reason="onnxruntime refuses an even size; the spec's formula defines it"))
        for dtype in schema_types("LRN", version):
            r = rng("LRN", version, str(dtype))
            found.append(Case("LRN", version, [values(r, (1, 5, 2, 2), dtype)], attrs={"size": 3}, dtype_sweep=True,
                              tol=(1e-2, 1e-2) if dtype == np.float16 else None, **half_judge("LRN", version, dtype),
                              **narrowed(dtype)))
    return found


def _lp_and_mvn() -> list[Case]:
    found = []
    for version in since_versions("LpNormalization"):
        for dtype in schema_types("LpNormalization", version):
            r = rng("LpNormalization", version, str(dtype))
            for attrs in ({}, {"axis": 1, "p": 1}, {"axis": 0, "p": 2}):
                found.append(Case("LpNormalization", version, [values(r, (3, 4, 2), dtype)], attrs=attrs,
                                  dtype_sweep=True, tol=(1e-2, 1e-2) if dtype == np.float16 else None,
                                  **half_judge("LpNormalization", version, dtype)))
        found.append(Case("LpNormalization", version, [np.zeros((2, 3), np.float32)]))
    for version in since_versions("MeanVarianceNormalization"):
        for dtype in schema_types("MeanVarianceNormalization", version):
            r = rng("MeanVarianceNormalization", version, str(dtype))
            for attrs, x_shape in (({}, (2, 3, 4, 5)), ({"axes": [1]}, (2, 3, 4)), ({"axes": [0, -1]}, (3, 2, 4))):
                x = values(r, x_shape, dtype)
                tol = (2e-2, 2e-2) if dtype == np.float16 else (1e-4, 1e-5)
                if dtype == np.float32:
                    found.append(Case("MeanVarianceNormalization", version, [x], attrs=attrs, tol=tol))
                    continue
                found.append(Case("MeanVarianceNormalization", version, [x], attrs=attrs, tol=tol,
                                  expected=[mvn_by_hand(x, tuple(attrs.get("axes", (0, 2, 3))))],
                                  reason="onnxruntime's expansion of the function mixes float32 constants into "
                                         f"{np.dtype(dtype)}; the spec's function body"))
    return found


def mvn_by_hand(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The spec's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9)."""
    xf = x.astype(np.float64)
    mean = xf.mean(axis=axes, keepdims=True)
    std = np.sqrt((xf * xf).mean(axis=axes, keepdims=True) - mean * mean)
    return ((xf - mean) / (std + 1e-9)).astype(x.dtype)


def _dropout() -> list[Case]:
    found = []
    for version in since_versions("Dropout"):
        r = rng("Dropout", version)
        x = values(r, (3, 4), np.float32)
        if version < 7:
            attrs = {"is_test": 1, "ratio": 0.3}
            if version == 1:
                attrs["consumed_inputs"] = [0]
            found.append(Case("Dropout", version, [x], attrs=attrs, outputs=2, expected=[x, np.ones_like(x)],
                              reason="onnxruntime implements Dropout from 7; is_test=1 passes x through, every "
                                     "element kept"))
            continue
        if version < 12:
            found.append(Case("Dropout", version, [x], attrs={"ratio": 0.3}))
            mask = np.ones(x.shape, dtype=np.float32 if version < 10 else bool)
            found.append(Case("Dropout", version, [x], attrs={"ratio": 0.3}, outputs=2, expected=[x, mask],
                              reason="onnxruntime returns an all-zero mask in inference; the spec's reference keeps "
                                     "every element (mask of ones)"))
            continue
        found.append(Case("Dropout", version, [x, np.array(0.4, np.float32), np.array(False)], attrs={"seed": 3},
                          outputs=2))
        found.append(Case("Dropout", version, [x, np.array(0.0, np.float32), np.array(True)], outputs=2))
        found.append(Case("Dropout", version, [x], outputs=2))
        for dtype in schema_types("Dropout", version):
            found.append(Case("Dropout", version, [values(rng("Dropout", version, str(dtype)), (2, 3), dtype)],
                              dtype_sweep=True))
    return found


def cases() -> list[Case]:
    return [*_batch_norm(), *_instance_norm(), *_layer_and_group_norm(), *_lrn(), *_lp_and_mvn(), *_dropout()]
