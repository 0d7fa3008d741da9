"""NonMaxSuppression (scalar and 1-element limits, center_point_box, thresholds) and RoiAlign (modes, sampling
ratios, coordinate transformations)."""
from __future__ import annotations

import numpy as np

from .gen import rng, since_versions, values
from .harness import Case, run_onnxruntime


def _boxes(r: np.random.Generator, batches: int, count: int) -> np.ndarray:
    corner = r.random((batches, count, 2)) * 10
    size = r.random((batches, count, 2)) * 4 + 0.5
    return np.concatenate([corner, corner + size], axis=-1).astype(np.float32)


def _nms() -> list[Case]:
    found = []
    for version in since_versions("NonMaxSuppression"):
        r = rng("NonMaxSuppression", version)
        boxes, scores = _boxes(r, 2, 12), r.random((2, 3, 12)).astype(np.float32)
        limits = [np.array([3], np.int64), np.array([0.3], np.float32), np.array([0.2], np.float32)]
        found.append(Case("NonMaxSuppression", version, [boxes, scores, *limits]))
        found.append(Case("NonMaxSuppression", version, [boxes, scores, np.array(5, np.int64),
                                                         np.array(0.5, np.float32)]))
        found.append(Case("NonMaxSuppression", version, [boxes, scores]))
        found.append(Case("NonMaxSuppression", version, [boxes[..., [2, 3, 0, 1]], scores, np.array(4, np.int64),
                                                         np.array(0.4, np.float32)], attrs={"center_point_box": 0}))
        centers = np.concatenate([(boxes[..., :2] + boxes[..., 2:]) / 2, boxes[..., 2:] - boxes[..., :2]], -1)
        found.append(Case("NonMaxSuppression", version, [centers[..., [1, 0, 3, 2]], scores, np.array(4, np.int64),
                                                         np.array(0.4, np.float32)], attrs={"center_point_box": 1}))
        found.append(Case("NonMaxSuppression", version, [np.zeros((1, 0, 4), np.float32),
                                                         np.zeros((1, 2, 0), np.float32), np.array(3, np.int64)]))
    return found


def _roi_align() -> list[Case]:
    found = []
    rois = np.array([[0, 0, 9, 9], [1.5, 2.2, 7.3, 8.1], [3, 3, 3.4, 3.2], [-2, -1, 14, 12]], np.float32)
    batch = np.array([0, 1, 1, 0], np.int64)
    for version in since_versions("RoiAlign"):
        r = rng("RoiAlign", version)
        x = values(r, (2, 3, 10, 12), np.float32)
        transforms = [None] if version < 16 else ["half_pixel", "output_half_pixel"]
        judge = {"judge_version": 16, "reason": "onnxruntime implements RoiAlign up to 16; 22 adds only types"} \
            if version > 16 else {}
        for mode in ("avg", "max"):
            for ratio in (0, 2):
                for transform in transforms:
                    attrs = {"mode": mode, "sampling_ratio": ratio, "output_height": 3, "output_width": 4,
                             "spatial_scale": 0.8}
                    if transform:
                        attrs["coordinate_transformation_mode"] = transform
                    found.append(Case("RoiAlign", version, [x, rois, batch], attrs=attrs, tol=(1e-5, 1e-5), **judge))
        found.append(Case("RoiAlign", version, [values(r, (1, 2, 5, 5), np.float64), rois[:2].astype(np.float64),
                                                np.zeros(2, np.int64)], **judge))
    return found


NO_DOUBLE = "onnxruntime implements MaxRoiPool for float only: judged on the float32 values, which are exact here"


def _max_roi_pool() -> list[Case]:
    found = []
    rois = np.array([[0, 0, 0, 9, 9], [1, 1.5, 2.2, 7.3, 8.1], [1, 3, 3, 3.4, 3.2], [0, -2, -1, 14, 12],
                     [1, 6, 2, 2, 5]], np.float32)  # the last one inverted: its bins are one pixel
    for version in since_versions("MaxRoiPool"):
        judge = {"judge_version": 1, "reason": "onnxruntime implements MaxRoiPool 1; 22 adds only bfloat16"} \
            if version > 1 else {}
        for k, (shape, scale) in enumerate((((2, 2), 1.0), ((3, 4), 0.5), ((1, 1), 0.8), ((4, 2), 1.3))):
            x = values(rng("MaxRoiPool", version, k), (2, 3, 10, 12), np.float32)
            found.append(Case("MaxRoiPool", version, [x, rois], {"pooled_shape": list(shape), "spatial_scale": scale},
                              **judge))
        x = values(rng("MaxRoiPool", version, "double"), (1, 2, 6, 6), np.float32)
        as_float = run_onnxruntime([Case("MaxRoiPool", 1, [x, rois[:1]], {"pooled_shape": [2, 3]})])[0]
        assert not isinstance(as_float, str), as_float
        found.append(Case("MaxRoiPool", version, [x.astype(np.float64), rois[:1].astype(np.float64)],
                          {"pooled_shape": [2, 3]}, expected=[as_float[0].astype(np.float64)], reason=NO_DOUBLE))
        negative = -np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
        found.append(Case("MaxRoiPool", version, [negative, np.array([[0, 0, 0, 3, 1]], np.float32)],
                          {"pooled_shape": [1, 2]}, expected=[np.array([[[[-1, -3]]]], np.float32)],
                          reason="onnxruntime starts each bin's maximum at the smallest positive float, so bins of "
                                 "negative values give 1e-38; the spec: their maximum (pixels 0-1, 2-3 of rows 0-1)"))
    return found


def cases() -> list[Case]:
    return [*_nms(), *_roi_align(), *_max_roi_pool()]
