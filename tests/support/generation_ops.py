"""onnxruntime's generation operators as its tools write them (tests/models/generation_ops): the folder, the
stored cases and their feeds."""
from __future__ import annotations

from pathlib import Path

import numpy as np

MODELS = Path(__file__).resolve().parents[1] / "models" / "generation_ops"
EXPECTED = np.load(MODELS / "expected.npz")


def feeds(case: str) -> dict[str, np.ndarray]:
    """The feeds of one of the recipe's cases."""
    return {key.split("/", 1)[1]: EXPECTED[key] for key in EXPECTED.files if key.startswith(f"{case}/")}
