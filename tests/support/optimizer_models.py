"""Small model builders and judges shared by the optimizer tests (no tests here)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from builders import optimizer as samples
from onnx import helper, numpy_helper
from real_models import manifest_entries, manifest_feeds

from explorer.optimizer import MatchResult, OptimizationResult, Pattern, optimize
from explorer.optimizer.pattern import CLEANUP
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


SAMPLES = {s.name: s.build for s in samples.SAMPLES}
"""The optimizer's sample models (sample_models/builders/optimizer.py) by name: each a function building it."""


def relu_chain(count: int, declared: bool) -> onnx.ModelProto:
    """x -> Relu -> ... (count unnamed nodes) -> y, value_info declared for every intermediate when `declared`."""
    nodes = [helper.make_node("Relu", [f"v{k}"], [f"v{k + 1}"]) for k in range(count)]
    model = make(nodes, [info("v0", shape=[2, 3])], [info(f"v{count}", shape=[2, 3])])
    if declared:
        model.graph.value_info.extend(info(f"v{k}", shape=[2, 3]) for k in range(1, count))
    return model


class WrongBiasPattern(Pattern):
    """Add(x, c) -> x for any constant c (wrong unless c is zero): the bug bisection must find."""

    op_types = ("Add",)
    priority = CLEANUP

    def match(self, g, node) -> MatchResult | None:
        return self.result([node]) if g.is_constant(node.input[1]) else None

    def apply(self, g, node: onnx.NodeProto) -> list[onnx.NodeProto]:
        return [g.make_node("Identity", [node.input[0]], [node.output[0]])]


def chain_model() -> onnx.ModelProto:
    """Identity, x*1 and a Transpose pair around an Add of a non-zero bias: several rewrites before the bad one."""
    nodes = [helper.make_node("Identity", ["x"], ["a"], name="copy"),
             helper.make_node("Mul", ["a", "one"], ["b"], name="times_one"),
             helper.make_node("Transpose", ["b"], ["c"], name="t1", perm=[1, 0]),
             helper.make_node("Transpose", ["c"], ["d"], name="t2", perm=[1, 0]),
             helper.make_node("Add", ["d", "bias"], ["e"], name="add_bias"),
             helper.make_node("Tanh", ["e"], ["y"], name="tanh")]
    return make(nodes, [info("x", shape=[2, 3])], [info("y", shape=[2, 3])],
                [tensor("one", 1.0), tensor("bias", [0.5, -1.0, 2.0])])
