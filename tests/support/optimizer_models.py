"""Small model builders and judges shared by the optimizer tests (no tests here)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from real_models import manifest_entries, manifest_feeds

from explorer.optimizer import OptimizationResult, optimize
from explorer.optimizer.verify import Equivalence, verify

OPSET = 18
SHARED_MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"


def real_model(suffix: str) -> tuple[Path, dict[str, Any] | None]:
    """The path and recorded feeds of the real model whose file name ends with `suffix`; skips the calling test
    when ../shared/models is not available."""
    for entry in manifest_entries(SHARED_MODELS):
        if entry["file"].endswith(suffix):
            return SHARED_MODELS / entry["file"], manifest_feeds(entry)
    pytest.skip("../shared/models is not available")


def shared_file(path: str, source: str) -> Path:
    """A real model file at `path` under ../shared/models, listed in its manifest or not; skips the calling test,
    naming where the file comes from (`source`), when it is not there."""
    found = SHARED_MODELS / path
    if not found.is_file():
        pytest.skip(f"../shared/models/{path} is not there (source: {source})")
    return found


def tensor(name: str, value: Any, dtype: Any = np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def const(name: str, value: Any, dtype: Any = np.int64) -> onnx.NodeProto:
    """A Constant node named `const_<name>` producing `name`."""
    return helper.make_node("Constant", [], [name], name=f"const_{name}", value=tensor(name, value, dtype))


def info(name: str, elem: int = onnx.TensorProto.FLOAT, shape: Iterable | None = ()) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, None if shape is None else list(shape))


def make(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
         inits: Iterable[onnx.TensorProto] = (), opset: int = OPSET) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "case", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def body(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
         name: str = "body") -> onnx.GraphProto:
    return helper.make_graph(nodes, name, inputs, outputs)


def applied(result: OptimizationResult) -> Counter:
    """pattern -> number of rewrites it applied."""
    return Counter(step.pattern for step in result.steps)


def ops(model: onnx.ModelProto) -> list[str]:
    """Operator types of the main graph, in order."""
    return [n.op_type for n in model.graph.node]


def declines(result: OptimizationResult, pattern: str) -> list[str]:
    return [d.reason for d in result.declined if d.pattern == pattern]


def proven(result: OptimizationResult, feeds: dict[str, Any] | None = None, seed: int = 0) -> Equivalence:
    """The whole-model proof, asserting both judges ran the original and found the models equivalent."""
    verdict = verify(result, feeds, seed=seed)
    assert verdict.status == "equivalent", "\n".join(verdict.lines())
    assert all(r.unavailable is None for r in verdict.reports), "\n".join(verdict.lines())
    return verdict


def run_alone(model: onnx.ModelProto, *names: str, **kwargs: Any) -> OptimizationResult:
    """Optimizes with only the named patterns plus the cleanups that finish their work."""
    return optimize(model, patterns=[*names, "IdentityRemoval", "DeadNode"], **kwargs)
