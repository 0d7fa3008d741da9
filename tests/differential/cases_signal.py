"""HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix (explorer/executor/ops/signal.py): sizes,
periodic and symmetric, every output type."""
from __future__ import annotations

import numpy as np
from onnx import helper

from .gen import schema_types
from .harness import Case, Cast

HALF_WEIGHTS = Cast(np.float32, "the float32 weights (in [0, 1]) rounded to float16, compared at float16's precision",
                   tied=("T3",), attr="output_datatype")
WINDOWS = ("HannWindow", "HammingWindow", "BlackmanWindow")


def _windows() -> list[Case]:
    found = []
    for op in WINDOWS:
        for dtype in schema_types(op, 17, "T2"):
            code = helper.np_dtype_to_tensor_dtype(dtype)
            tol = (2e-3, 2e-3) if dtype == np.float16 else (1e-6, 1e-6)  # float64: the spec's float constants
            shapes = ((10, 1, np.int64), (7, 0, np.int32)) if dtype != np.float32 else \
                ((10, 1, np.int64), (10, 0, np.int32), (1, 1, np.int32), (7, 0, np.int64), (0, 1, np.int64))
            for size, periodic, size_type in shapes:
                found.append(Case(op, 17, [np.array(size, size_type)], {"periodic": periodic, "output_datatype": code},
                                  tol=tol, dtype_sweep=True))
    return found


def _mel() -> list[Case]:
    found = []
    for dtype in schema_types("MelWeightMatrix", 17, "T3"):
        code = helper.np_dtype_to_tensor_dtype(dtype)
        for bins, length, rate, low, high in ((8, 64, 16000, 20.0, 8000.0), (3, 16, 8000, 0.0, 4000.0),
                                              (20, 512, 22050, 100.0, 6000.0)):
            found.append(Case("MelWeightMatrix", 17, [np.array(bins, np.int64), np.array(length, np.int64),
                                                      np.array(rate, np.int64), np.array(low, np.float32),
                                                      np.array(high, np.float32)],
                              {"output_datatype": code}, dtype_sweep=True,
                              tol=(2e-3, 2e-3) if dtype == np.float16 else (1e-6, 1e-6),
                              **({"cast": HALF_WEIGHTS} if dtype == np.float16 else {})))
    return found


def cases() -> list[Case]:
    return [*_windows(), *_mel()]
