"""The scikit-learn models skl2onnx converted (tests/models/skl2onnx) and the inputs listed for each (inputs.json)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

FOLDER = Path(__file__).parents[1] / "models" / "skl2onnx"
LISTED = json.loads((FOLDER / "inputs.json").read_text())


def feeds_of(name: str) -> dict[str, Any]:
    """A model's inputs: tensors from `value` and `dtype`, a map as the dict itself (float values)."""
    return {key: spec["map"] if "map" in spec else np.array(spec["value"], dtype=np.dtype(spec["dtype"]))
            for key, spec in LISTED[name].items()}
