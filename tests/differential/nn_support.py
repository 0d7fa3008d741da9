"""Helpers the conv/pool/resize/normalization/quantize/linalg/detection case tables share."""
from __future__ import annotations

from typing import Any

import numpy as np

from .gen import since_versions


def half_judge(op: str, version: int, dtype: Any) -> dict[str, Any]:
    """For float16 below opset 6, the next version of `op` judges: onnxruntime runs float16 there through a Cast
    whose opset-1 form it then rejects."""
    if np.dtype(dtype) != np.float16 or version >= 6:
        return {}
    later = [v for v in since_versions(op) if v >= 6]
    if not later:
        return {}
    return {"judge_version": later[0], "reason": f"onnxruntime cannot run float16 at opset {version} (it inserts "
                                                 f"a Cast that opset lacks); {op}-{later[0]} computes the same"}
