"""Running ONNX backend node cases through explorer.run (shared by the conformance test and its report)."""
from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx
from onnx.backend.test.case.node import collect_testcases
from onnx.backend.test.runner import Runner

import explorer
from explorer.executor import ops

KNOWN_FAILURES_FILE = Path(__file__).with_name("conformance_known_failures.txt")


@lru_cache(maxsize=1)
def all_cases() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {case.name: case for case in collect_testcases(None)}


@dataclass(frozen=True)
class KnownFailure:
    """A listed case: why it is listed and, unless it samples random values, how it fails (the exception's type
    and parts of its message)."""

    reason: str
    error: str = ""
    parts: tuple[str, ...] = ()

    @property
    def random(self) -> bool:
        return self.reason.startswith("random")

    def matches(self, exc: BaseException) -> bool:
        return type(exc).__name__ == self.error and all(part in str(exc) for part in self.parts)


def known_failures() -> dict[str, KnownFailure]:
    """case name -> its listing, from the checked-in list (`name  # reason  => Error: part | part`)."""
    listed = {}
    for line in KNOWN_FAILURES_FILE.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, rest = line.partition("#")
            reason, _, raises = rest.partition("=>")
            error, _, message = raises.partition(":")
            parts = tuple(part.strip() for part in message.split(" | ") if part.strip())
            listed[name.strip()] = KnownFailure(reason.strip(), error.strip(), parts)
    return listed


def _nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            for body in [attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else attribute.graphs:
                yield from _nodes(body)


def fallback_operators(name: str) -> set[str]:
    """The operators of a case's model (its bodies and local functions included) that explorer runs through the
    onnx.reference fallback (ops.REFERENCE_FALLBACK, read now: it shrinks as kernels are written)."""
    model = all_cases()[name].model
    nodes = [*_nodes(model.graph), *(node for function in model.functions for node in function.node)]
    used = {("" if n.domain == "ai.onnx" else n.domain, n.op_type) for n in nodes}
    return {f"{domain + '.' if domain else ''}{op}" for domain, op in used & ops.REFERENCE_FALLBACK}


def run_case(name: str, values: bool = True) -> None:
    """Raises (AssertionError or the executor's error) unless every data set of the case matches.
    With values=False only kinds, shapes and dtypes are compared (for random operators)."""
    case = all_cases()[name]
    model = explorer.load(case.model)
    input_names = [i.name for i in model.graph.input]
    for inputs, expected in case.data_sets:
        feeds = {name: value for name, value in zip(input_names, inputs)}
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            trace = explorer.run(model, feeds)
        outputs = [trace.outputs[o.name] for o in model.graph.output]
        assert len(outputs) == len(expected), f"{len(outputs)} outputs, expected {len(expected)}"
        for want, got in zip(expected, outputs):
            if values:
                assert_similar(want, got, case.rtol, case.atol)
            else:
                want = onnx.numpy_helper.to_array(want) if isinstance(want, onnx.TensorProto) else want
                assert (got.shape, got.dtype) == (want.shape, want.dtype), f"{got.dtype}{got.shape} vs {want.dtype}{want.shape}"


def assert_similar(expected, actual, rtol: float, atol: float) -> None:
    """Like the backend runner's comparison, but sequences (of 0-d tensors too) and optionals compare element-wise."""
    if isinstance(expected, onnx.TensorProto):
        expected = onnx.numpy_helper.to_array(expected)
    if isinstance(expected, list):
        assert isinstance(actual, list), f"expected a sequence, got {type(actual).__name__}"
        assert len(actual) == len(expected), f"sequence of {len(actual)} elements, expected {len(expected)}"
        for want, got in zip(expected, actual):
            assert_similar(want, got, rtol, atol)
    elif expected is None:
        assert actual is None, f"expected an empty optional, got {type(actual).__name__}"
    else:
        assert isinstance(actual, np.ndarray), f"expected a tensor, got {type(actual).__name__}"
        Runner.assert_similar_outputs([expected], [actual], rtol=rtol, atol=atol)
