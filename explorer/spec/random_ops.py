"""Operators whose result is not a function of their inputs: they draw random values (Dropout only when training),
so two runs, or explorer and onnxruntime, give different values by design."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

NONDETERMINISTIC = frozenset({
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli",
    "Dropout",
})


def draws(op_type: str, inputs: Mapping[str, Any], proto: Any = None) -> bool:
    """Whether one execution of a node drew random values: a random operator always, a Dropout only in training
    (its `training_mode` input true, and a `ratio` above 0; Dropout before opset 12 has no training mode).
    `inputs` are the execution's input values by name, `proto` its NodeProto (a Dropout without it: none drawn)."""
    if op_type not in NONDETERMINISTIC:
        return False
    if op_type != "Dropout":
        return True
    if proto is None or len(proto.input) < 3 or not proto.input[2]:
        return False
    training = inputs.get(proto.input[2])
    ratio = inputs.get(proto.input[1]) if proto.input[1] else 0.5
    try:
        return bool(np.asarray(training).item()) and float(np.asarray(ratio).item()) > 0
    except (ValueError, TypeError):
        return True
