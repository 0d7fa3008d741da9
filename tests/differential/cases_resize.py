"""Resize (10, 11, 13, 18, 19) and Upsample (1, 7, 9, 10): every mode, coordinate transformation and nearest
mode, scales and sizes, cubic coefficient, exclude_outside, extrapolation, antialias, axes, aspect-ratio
policies, integer inputs."""
from __future__ import annotations

import numpy as np

from .gen import narrowed, rng, since_versions, values
from .harness import Case, run_onnxruntime

TRANSFORMS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
              "tf_crop_and_resize", "half_pixel_symmetric"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
EMPTY = np.array([], np.float32)


def _scales(*v: float) -> np.ndarray:
    return np.array(v, np.float32)


def _allowed(transform: str, mode: str, version: int) -> bool:
    if transform == "tf_half_pixel_for_nn":
        return version == 11 and mode == "nearest"
    if transform == "half_pixel_symmetric":
        return version >= 19
    return True


def _transformed(version: int, x: np.ndarray, mode: str, t: int, transform: str, nearest: str) -> list[Case]:
    """The cases of one mode, coordinate transformation and nearest mode: by scales and by sizes, or a crop."""
    found = []
    omitted = EMPTY if version < 13 else None
    roi = _scales(0, 0, 0.2, 0.1, 1, 1, 0.9, 0.8)
    attrs = {"mode": mode, "coordinate_transformation_mode": transform, "nearest_mode": nearest}
    tol = None if mode == "nearest" else (1e-4, 1e-5)  # onnxruntime weighs in float32
    if mode == "cubic" and t % 2:
        attrs.update(exclude_outside=1, cubic_coeff_a=-0.5)
    if transform == "tf_crop_and_resize":
        attrs["extrapolation_value"] = 7.0
        found.append(Case("Resize", version, [x, roi, omitted, np.array([1, 2, 7, 3], np.int64)],
                          attrs=attrs, tol=tol))
        found.append(_crop_with_scales(version, x, roi, attrs))
        return found
    for scales in (_scales(1, 1, 2.3, 1.7), _scales(1, 1, 0.6, 0.5)):
        found.append(Case("Resize", version, [x, EMPTY if version < 13 else None, scales], attrs=attrs, tol=tol))
    if transform != "half_pixel_symmetric":
        found.append(Case("Resize", version, [x, omitted, omitted, np.array([1, 2, 7, 3], np.int64)],
                          attrs=attrs, tol=tol))
    return found


def _resize(version: int) -> list[Case]:
    found = []
    r = rng("Resize", version)
    x = values(r, (1, 2, 4, 5), np.float32)
    if version == 10:
        for mode in ("nearest", "linear"):
            for scales in (_scales(1, 1, 2, 3), _scales(1, 1, 0.5, 0.6), _scales(1, 1, 1.5, 0.8)):
                found.append(Case("Resize", 10, [x, scales], attrs={"mode": mode}))
        return found
    omitted = EMPTY if version < 13 else None
    for mode in ("nearest", "linear", "cubic"):
        for t, transform in enumerate(TRANSFORMS):
            if _allowed(transform, mode, version):
                for nearest in NEAREST if mode == "nearest" else NEAREST[:1]:
                    found += _transformed(version, x, mode, t, transform, nearest)
    for dtype, mode in ((np.uint8, "linear"), (np.int8, "nearest"), (np.float64, "cubic")):
        xi = values(r, (1, 1, 4, 5), dtype, -100, 200)
        found.append(Case("Resize", version, [xi, omitted, _scales(1, 1, 2, 2)], attrs={"mode": mode},
                          tol=(1e-9, 1e-9) if dtype == np.float64 else None, dtype_sweep=True, **narrowed(dtype)))
    found.append(Case("Resize", version, [values(r, (2, 3, 4), np.float32), omitted, _scales(1, 2, 0.5)]))
    if version >= 18:
        for mode in ("linear", "cubic"):
            found.append(Case("Resize", version, [x, None, _scales(1, 1, 0.5, 0.4)],
                              attrs={"mode": mode, "antialias": 1}, tol=(1e-5, 1e-5)))
            found.append(Case("Resize", version, [values(r, (1, 1, 9, 13), np.float32), None,
                                                  _scales(1, 1, 0.3, 0.7)], attrs={"mode": mode, "antialias": 1},
                              tol=(1e-5, 1e-5)))
        found.append(Case("Resize", version, [x, None, _scales(2, 3)], attrs={"mode": "linear", "axes": [2, -1]}))
        for policy in ("stretch", "not_larger", "not_smaller"):
            found.append(Case("Resize", version, [x, None, None, np.array([8, 7], np.int64)],
                              attrs={"mode": "nearest", "axes": [2, 3], "keep_aspect_ratio_policy": policy}))
    return found


def _crop_with_scales(version: int, x: np.ndarray, roi: np.ndarray, attrs: dict) -> Case:
    """tf_crop_and_resize with scales: the spec sizes the output floor(length x (roi end - start) x scale)
    (onnxruntime ignores the roi there); with that size given as `sizes`, onnxruntime computes the values."""
    scales = _scales(1, 1, 2.3, 2.0)  # no resized axis keeps its length: onnxruntime skips those, roi or not
    sizes = np.array([1, 2, int(4 * 0.7 * 2.3), int(5 * 0.7 * 2.0)], np.int64)
    omitted = EMPTY if version < 13 else None
    want = run_onnxruntime([Case("Resize", version, [x, roi, omitted, sizes], attrs=attrs)])[0]
    assert not isinstance(want, str), want
    return Case("Resize", version, [x, roi, scales], attrs=attrs, expected=want, tol=(1e-4, 1e-5),
                reason="onnxruntime sizes a tf_crop_and_resize output without the roi; the spec's "
                       "floor(length x (end - start) x scale), values as onnxruntime computes them for that size")


def _upsample() -> list[Case]:
    found = []
    for version in since_versions("Upsample"):
        r = rng("Upsample", version)
        x = values(r, (1, 2, 3, 4), np.float32)
        for mode in ("nearest", "linear" if version > 1 else "bilinear"):
            if version == 1:
                attrs = {"mode": mode, "height_scale": 2.0, "width_scale": 3.0}
                want = np.repeat(np.repeat(x, 2, axis=2), 3, axis=3) if mode == "nearest" else \
                    _upsample_judged(x, 9)
                found.append(Case("Upsample", 1, [x], attrs=attrs, expected=[want],
                                  reason="onnxruntime implements Upsample from 7; height_scale and width_scale are "
                                         "its scales [1, 1, h, w]"))
                continue
            scales = [1.0, 1.0, 2.0, 3.0] if mode == "nearest" else [1.0, 1.0, 1.5, 2.5]
            judge = {"judge_version": 9, "reason": "onnxruntime implements Upsample up to 9; Upsample-10 is "
                                                   "Upsample-9, deprecated"} if version == 10 else {}
            if version == 7:
                found.append(Case("Upsample", 7, [x], attrs={"mode": mode, "scales": scales}))
            else:
                found.append(Case("Upsample", version, [x, np.array(scales, np.float32)], attrs={"mode": mode},
                                  **judge))
    return found


def _upsample_judged(x: np.ndarray, version: int) -> np.ndarray:
    want = run_onnxruntime([Case("Upsample", version, [x, _scales(1, 1, 2, 3)], attrs={"mode": "linear"})])[0]
    assert not isinstance(want, str), want
    return want[0]


def cases() -> list[Case]:
    found = _upsample()
    for version in since_versions("Resize"):
        found += _resize(version)
    return found
