"""Sample-model builders. Each topic module defines SAMPLES: a list of `Sample`s (deterministic: fixed seeds)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx


@dataclass(frozen=True)
class Sample:
    name: str  # file stem: sample_models/<name>.onnx
    description: str  # one line: what it teaches (goes into the README and the app's picker)
    build: Callable[[], onnx.ModelProto]
    # the inputs the sample is first run on (the app's default, `python -m explorer run <name>`), chosen so its
    # loops iterate a telling number of times; None: random inputs from the declared types show it well
    inputs: Callable[[], dict[str, np.ndarray]] | None = None
