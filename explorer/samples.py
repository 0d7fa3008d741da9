"""The bundled sample models (built by sample_models/build.py) and their one-line descriptions."""
from __future__ import annotations

import json
from pathlib import Path

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "sample_models"
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
