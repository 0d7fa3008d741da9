"""What several commands share: a model named by path or sample, feeds from files, --dim sizes, warnings."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..model import Model, load


def model_path(text: str) -> str:
    """A path as given, or a bundled sample's path when `text` names one and is not a file."""
    from ..samples import list_samples, sample_path

    return str(sample_path(text)) if not Path(text).exists() and text in list_samples() else text


def load_model(text: str, lenient: bool) -> Model:
    """The model a command names (a path or a sample), its load warnings printed (lenient mode's among them)."""
    model = load(model_path(text), lenient=lenient)
    for warning in model.warnings:
        print(f"warning: {warning}")
    return model


def load_feeds(path: str | None, model: Any = None) -> dict[str, Any] | None:
    """Feeds from an .npz, or from an ONNX test data set folder (input_0.pb, ...) of `model`."""
    if not path:
        return None
    from ..inputs import feeds_from_npz, feeds_from_test_data

    if Path(path).is_dir():
        return feeds_from_test_data(model if isinstance(model, Model) else load(model), path)
    return feeds_from_npz(Path(path).read_bytes())


def parse_dim(text: str) -> tuple[str, int]:
    """NAME=SIZE of a --dim argument."""
    name, _, size = text.partition("=")
    if not name or not size.isdigit():
        raise argparse.ArgumentTypeError(f"expected NAME=SIZE, e.g. T=8, got {text!r}")
    return name, int(size)
