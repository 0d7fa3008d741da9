"""The bundled sample models (built by sample_models/build.py), their one-line descriptions and the inputs some
of them are first run on."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "sample_models"
DEFAULT_SAMPLE = "nested_loops"


def list_samples() -> dict[str, str]:
    """name -> description of every bundled sample, in name order."""
    index = SAMPLES_DIR / "samples.json"
    if not index.exists():
        return {}
    return dict(sorted(json.loads(index.read_text()).items()))


def sample_path(name: str) -> Path:
    """Path of a bundled sample; KeyError naming the known samples when there is none."""
    samples = list_samples()
    if name not in samples:
        raise KeyError(f"no sample {name!r}; known: {', '.join(samples)}")
    return SAMPLES_DIR / f"{name}.onnx"


def sample_inputs(name: str) -> dict[str, np.ndarray] | None:
    """The inputs a sample is first run on (chosen so its loops iterate a telling number of times), or None when
    random inputs from its declared types show it as well."""
    index = SAMPLES_DIR / "sample_inputs.json"
    entry = json.loads(index.read_text()).get(name) if index.exists() else None
    if entry is None:
        return None
    return {key: np.array(spec["values"], dtype=spec["dtype"]).reshape(spec["shape"]) for key, spec in entry.items()}
