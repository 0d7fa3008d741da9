"""Running a model in onnxruntime (an optional dependency) as a judge: the graph exactly as written."""
from __future__ import annotations

from typing import Any

import onnx

from ..model import Model


def run_onnxruntime(model: Model | onnx.ModelProto, feeds: dict[str, Any]) -> dict[str, Any]:
    """Every graph output of the model run by onnxruntime on `feeds` (ImportError when it is not installed;
    whatever onnxruntime raises when it refuses the model)."""
    import onnxruntime as ort  # type: ignore[import-untyped]

    proto = model.proto if isinstance(model, Model) else model
    options = ort.SessionOptions()
    options.log_severity_level = 4  # refusals arrive as exceptions
    # a judge runs the graph as written: onnxruntime's own rewrites (e.g. Cast fusion) could hide a difference
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    wanted = {i.name for i in session.get_inputs()}
    results = session.run(names, {k: v for k, v in feeds.items() if k in wanted})
    return dict(zip(names, results))


def short_error(exc: BaseException) -> str:
    """The first line of what a judge said when it refused (onnxruntime's messages run over many lines)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
