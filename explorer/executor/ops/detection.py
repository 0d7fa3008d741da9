"""Detection: NonMaxSuppression (10, 11), RoiAlign (10, 16, 22) and MaxRoiPool (1, 22).

NonMaxSuppression selects greedily per (batch, class), the IoU of each pick against all remaining boxes computed
at once; RoiAlign samples every bin's points with vectorized bilinear interpolation (max mode takes, as
onnxruntime and the spec's reference do, the largest weighted corner of each sample); MaxRoiPool takes the maximum
of each bin of a region rounded to whole pixels (a bin with no pixel gives 0), as Caffe's ROI pooling does."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import KernelFactory, OpNode, PlainKernel
from .shared import node_attributes


def _scalar(value: np.ndarray | None, name: str, default: Any, kind: type = float) -> Any:
    if value is None or value.size == 0:
        return default
    if value.size != 1:
        raise ValueError(f"{name} must be a scalar or a 1-element tensor, got shape {value.shape}")
    return kind(value.reshape(()))


def _corners(boxes: np.ndarray, center_point_box: int) -> np.ndarray:
    """(y1, x1, y2, x2) with y1 <= y2 and x1 <= x2, from either box encoding."""
    if center_point_box:
        x, y, w, h = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
        return np.stack([y - h / 2, x - w / 2, y + h / 2, x + w / 2], axis=-1)
    y1, x1, y2, x2 = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
    return np.stack([np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)], axis=-1)


def _select(boxes: np.ndarray, scores: np.ndarray, limit: int, iou_threshold: float,
            score_threshold: float | None) -> list[int]:
    order = np.argsort(-scores, kind="stable")
    if score_threshold is not None:
        order = order[scores[order] > score_threshold]
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    picked: list[int] = []
    while order.size and len(picked) < limit:
        best, rest = order[0], order[1:]
        picked.append(int(best))
        top = np.maximum(boxes[best, :2], boxes[rest, :2])
        bottom = np.minimum(boxes[best, 2:], boxes[rest, 2:])
        overlap = np.clip(bottom - top, 0, None).prod(axis=1)
        union = areas[best] + areas[rest] - overlap
        iou = np.divide(overlap, union, out=np.zeros_like(overlap), where=union > 0)
        order = rest[iou <= iou_threshold]
    return picked


def non_max_suppression_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    center_point_box = int(attrs["center_point_box"])
    if center_point_box not in (0, 1):
        raise op.error(f"center_point_box must be 0 or 1, got {center_point_box}")

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        boxes, scores = args[0], args[1]
        limit = _scalar(args[2] if len(args) > 2 else None, "max_output_boxes_per_class", 0, int)
        iou_threshold = _scalar(args[3] if len(args) > 3 else None, "iou_threshold", 0.0)
        score_threshold = _scalar(args[4] if len(args) > 4 else None, "score_threshold", None)
        if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 or scores.shape[0] != boxes.shape[0] \
                or scores.shape[2] != boxes.shape[1]:
            raise ValueError(f"boxes {boxes.shape} must be [batch, boxes, 4] and scores {scores.shape} "
                             "[batch, classes, boxes]")
        if not 0 <= iou_threshold <= 1:
            raise ValueError(f"iou_threshold must lie in [0, 1], got {iou_threshold}")
        corners = _corners(boxes.astype(np.float64), center_point_box)
        selected = [(b, c, i) for b in range(scores.shape[0]) for c in range(scores.shape[1])
                    for i in (_select(corners[b], scores[b, c].astype(np.float64), limit, iou_threshold,
                                      score_threshold) if limit > 0 else [])]
        return (np.array(selected, dtype=np.int64).reshape(-1, 3),)

    return run


def _bilinear(feature: np.ndarray, y: np.ndarray, x: np.ndarray, use_max: bool) -> np.ndarray:
    """feature [C, H, W] at points y, x (same shape): [C, *points]; points beyond one pixel of the map are 0."""
    height, width = feature.shape[1:]
    outside = (y < -1) | (y > height) | (x < -1) | (x > width)
    y = np.clip(y, 0, None)
    x = np.clip(x, 0, None)
    y_low = np.minimum(np.floor(y).astype(np.int64), height - 1)
    x_low = np.minimum(np.floor(x).astype(np.int64), width - 1)
    y_high = np.minimum(y_low + 1, height - 1)
    x_high = np.minimum(x_low + 1, width - 1)
    y = np.where(y_low >= height - 1, y_low, y)
    x = np.where(x_low >= width - 1, x_low, x)
    ly, lx = y - y_low, x - x_low
    hy, hx = 1 - ly, 1 - lx
    parts = [feature[:, y_low, x_low] * (hy * hx), feature[:, y_low, x_high] * (hy * lx),
             feature[:, y_high, x_low] * (ly * hx), feature[:, y_high, x_high] * (ly * lx)]
    value = np.maximum.reduce(parts) if use_max else sum(parts)
    return np.where(outside, 0.0, value)


def roi_align_kernel(op: OpNode) -> PlainKernel:
    version, attrs = node_attributes(op)
    mode = attrs["mode"]
    if mode not in ("avg", "max"):
        raise op.error(f"mode must be avg or max, got {mode!r}")
    transform = attrs.get("coordinate_transformation_mode") or "output_half_pixel"
    if transform not in ("half_pixel", "output_half_pixel"):
        raise op.error(f"coordinate_transformation_mode must be half_pixel or output_half_pixel, got "
                           f"{transform!r}")
    out_h, out_w = int(attrs["output_height"]), int(attrs["output_width"])
    ratio, spatial_scale = int(attrs["sampling_ratio"]), float(attrs["spatial_scale"])
    offset = 0.5 if transform == "half_pixel" else 0.0

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, rois, batch_indices = args[:3]
        if x.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 4 or batch_indices.shape != (rois.shape[0],):
            raise ValueError(f"X {x.shape} must be [N, C, H, W], rois {rois.shape} [R, 4] and batch_indices "
                             f"{batch_indices.shape} [R]")
        data = x.astype(np.float64)
        y = np.zeros((rois.shape[0], x.shape[1], out_h, out_w))
        for r, (roi, batch) in enumerate(zip(rois.astype(np.float64), batch_indices)):
            x1, y1, x2, y2 = roi * spatial_scale - offset
            roi_w, roi_h = x2 - x1, y2 - y1
            if version < 16 or transform == "output_half_pixel":
                roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
            bin_h, bin_w = roi_h / out_h, roi_w / out_w
            grid_h = ratio if ratio > 0 else int(np.ceil(roi_h / out_h))
            grid_w = ratio if ratio > 0 else int(np.ceil(roi_w / out_w))
            count = max(grid_h * grid_w, 1)
            ys = y1 + np.arange(out_h)[:, None] * bin_h + (np.arange(grid_h)[None, :] + 0.5) * bin_h / grid_h
            xs = x1 + np.arange(out_w)[:, None] * bin_w + (np.arange(grid_w)[None, :] + 0.5) * bin_w / grid_w
            py = np.broadcast_to(ys[:, None, :, None], (out_h, out_w, grid_h, grid_w))
            px = np.broadcast_to(xs[None, :, None, :], (out_h, out_w, grid_h, grid_w))
            samples = _bilinear(data[int(batch)], py, px, mode == "max")
            y[r] = samples.max(axis=(3, 4)) if mode == "max" else samples.sum(axis=(3, 4)) / count
        return (y.astype(x.dtype),)

    return run


def _bin_edges(start: int, size: int, bins: int, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """[begin, end) of each of `bins` bins over `size` pixels from `start`, clipped to [0, limit] (in float32, as
    onnxruntime and Caffe compute them)."""
    step = np.float32(size) / np.float32(bins)
    begins = np.floor(np.arange(bins, dtype=np.float32) * step).astype(np.int64) + start
    ends = np.ceil(np.arange(1, bins + 1, dtype=np.float32) * step).astype(np.int64) + start
    return np.clip(begins, 0, limit), np.clip(ends, 0, limit)


def max_roi_pool_kernel(op: OpNode) -> PlainKernel:
    _, attrs = node_attributes(op)
    if attrs["pooled_shape"] is None or len(attrs["pooled_shape"]) != 2:
        raise op.error("pooled_shape (height, width) is required")
    out_h, out_w = (int(v) for v in attrs["pooled_shape"])
    spatial_scale = float(attrs["spatial_scale"])

    def run(args: Sequence[Any]) -> tuple[Any, ...]:
        x, rois = args
        if x.ndim != 4 or rois.ndim != 2 or rois.shape[1] != 5:
            raise ValueError(f"X {x.shape} must be [N, C, H, W] and rois {rois.shape} [R, 5]")
        height, width = x.shape[2:]
        y = np.zeros((rois.shape[0], x.shape[1], out_h, out_w), dtype=x.dtype)
        scaled = rois[:, 1:].astype(np.float32) * np.float32(spatial_scale)
        corners = (np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))).astype(np.int64)  # half away
        for r, (batch, (x1, y1, x2, y2)) in enumerate(zip(rois[:, 0].astype(np.int64), corners)):
            if not 0 <= batch < x.shape[0]:
                raise ValueError(f"roi {r} names batch {batch}; X has {x.shape[0]}")
            top, bottom = _bin_edges(y1, max(y2 - y1 + 1, 1), out_h, height)
            left, right = _bin_edges(x1, max(x2 - x1 + 1, 1), out_w, width)
            for i in range(out_h):
                for j in range(out_w):
                    if bottom[i] > top[i] and right[j] > left[j]:
                        y[r, :, i, j] = x[batch, :, top[i]:bottom[i], left[j]:right[j]].max(axis=(1, 2))
        return (y,)

    return run


KERNELS: dict[str, KernelFactory] = {
    "MaxRoiPool": max_roi_pool_kernel,
    "NonMaxSuppression": non_max_suppression_kernel,
    "RoiAlign": roi_align_kernel,
}
