"""Operators whose result is not a function of their inputs: they draw random values (Dropout only when training),
so two runs, or explorer and onnxruntime, give different values by design."""
from __future__ import annotations

NONDETERMINISTIC = frozenset({
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli",
    "Dropout",
})
