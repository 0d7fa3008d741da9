"""Turning what the user gives as a side of a comparison into a Recording: a Model (run by explorer), a Trace,
the word "onnxruntime" (the other side's model run by onnxruntime), reference values (an .npz or a dict keyed by
ONNX value names), or a path or sample name of a model."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from ..errors import ExecutionError, FeedError
from ..executor import run
from ..inputs.input_files import feeds_from_npz
from ..inputs.samples import list_samples, sample_path
from ..limits import Limits
from ..model.model import Model, load
from ..trace.trace import Trace
from .recording import Recording, from_trace

ONNXRUNTIME = "onnxruntime"
PYTORCH = "pytorch"
Side = Model | Trace | str | os.PathLike | bytes | onnx.ModelProto | dict


def is_onnxruntime(side: Any) -> bool:
    return isinstance(side, str) and side.lower() == ONNXRUNTIME


def is_pytorch(side: Any) -> bool:
    return isinstance(side, str) and side.lower() == PYTORCH


def kind_of(side: Any) -> str:
    """'model', 'trace', 'onnxruntime', 'pytorch' or 'reference'."""
    if isinstance(side, Trace):
        return "trace"
    if is_onnxruntime(side):
        return ONNXRUNTIME
    if is_pytorch(side):
        return PYTORCH
    return "reference" if is_reference(side) else "model"


def is_reference(side: Any) -> bool:
    return isinstance(side, dict) or (isinstance(side, (str, os.PathLike)) and str(side).endswith(".npz"))


def reference_values(side: Any, limits: Limits | None = None) -> dict[str, Any]:
    """Reference values from a dict or an .npz keyed by ONNX value names (an .npz checked against `limits`
    before it is inflated)."""
    if isinstance(side, dict):
        return dict(side)
    return feeds_from_npz(Path(side).read_bytes(), limits)


def as_model(side: Any) -> Model | None:
    """The model a side names (a path, a bundled sample's name, bytes, a proto), or None for a trace."""
    if isinstance(side, Model):
        return side
    if isinstance(side, Trace):
        return None
    if isinstance(side, (str, os.PathLike)) and not Path(side).exists() and str(side) in list_samples():
        return load(sample_path(str(side)))
    return load(side)


def feeds_for(model: Model, feeds: dict[str, Any]) -> dict[str, Any]:
    """`feeds` for another model of the same function: by name, else by position (a re-export that renamed its
    inputs); floats cast to the model's declared type (an fp16 variant)."""
    names = [spec.name for spec in model.inputs]
    given = list(feeds.items())
    out: dict[str, Any] = {}
    for position, spec in enumerate(model.inputs):
        if spec.name in feeds:
            value = feeds[spec.name]
        elif len(given) == len(names):
            value = given[position][1]
        else:
            raise FeedError(f"input {spec.name!r} of {model.source} is not among the feeds "
                            f"({', '.join(feeds)}) and the inputs cannot be matched by position")
        if isinstance(value, np.ndarray) and spec.dtype is not None and value.dtype != spec.dtype \
                and value.dtype.kind == "f" and spec.dtype.kind in "fV":
            value = value.astype(spec.dtype)
        out[spec.name] = value
    return out


def explorer_recording(model: Model, feeds: dict[str, Any], label: str, limits: Limits | None) -> Recording:
    """explorer's run of a model; a run that fails gives its partial trace with the error noted."""
    try:
        trace = run(model, feeds_for(model, feeds), limits=limits)
    except ExecutionError as exc:
        if exc.trace is None:
            raise
        return from_trace(exc.trace, label, model)
    return from_trace(trace, label, model)


def label_of(side: Any, model: Model | None) -> str:
    if isinstance(side, Trace):
        return f"trace of {side.model_source}"
    if is_onnxruntime(side) or is_pytorch(side):
        return str(side).lower()
    if is_reference(side):
        return f"reference values {side}" if not isinstance(side, dict) else "reference values"
    return model.source if model is not None else str(side)
