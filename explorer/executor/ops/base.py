"""What every kernel needs: the operator version a node runs at, its attributes typed with that version's
defaults, the error that names the node, and (for special kernels) the `Call` they are given.

A kernel factory is given its node's `OpNode` (made and checked once per node), reads what it needs from it,
and returns a plain closure:

    def leaky_relu(op):
        alpha = op.get_float("alpha")           # the node's value, or the default of the version it runs at
        def run(args): ...
        return run

Building an `OpNode` refuses attributes and input/output counts the version does not allow.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import onnx

from ...errors import ExecutionError, UnsupportedOperatorError
from ...proto.graph import attribute_value
from ...spec.schema import SchemaFacts, attribute_problem, schema_at, schema_facts

if TYPE_CHECKING:
    from ...proto.graph import NodeRef
    from ...trace.trace import EventInfo, IterationInfo, Trace
    from ..compiled import CompiledGraph

PlainKernel = Callable[[Sequence[Any]], Any]
"""fn(args) -> tuple of outputs (optional inputs that are omitted arrive as None)."""
KernelFactory = Callable[["OpNode"], Any]
"""factory(op) -> kernel, built once per node from its static facts."""
SpecialKernel = Callable[[Sequence[Any], "Call"], "tuple[list[Any], EventInfo]"]
"""fn(args, call) -> (outputs, what the execution recorded besides its values)."""


class BodyEngine(Protocol):
    """What special kernels may ask of the engine running them (executor/engine.py's Engine is the one)."""

    trace: Trace  # the recording so far (the generation operators share their steps' caches in it once done)

    def body_frame(self, graph: CompiledGraph, outer: dict[str, Any], node: str, op_type: str,
                   iteration: tuple[int, ...]) -> dict[str, Any]:
        """The part of a body's frame shared by its iterations: initializers and captures read from `outer`."""
        ...

    def run_body(self, graph: CompiledGraph, base: dict[str, Any], inputs: list[Any],
                 iteration: tuple[int, ...]) -> list[Any]:
        """Runs one body execution (recording its events) and returns its outputs."""
        ...

    def run_iteration(self, graph: CompiledGraph, base: dict[str, Any], inputs: list[Any], node: str,
                      op_type: str, iteration: tuple[int, ...], count: int,
                      info: IterationInfo | None = None) -> list[Any]:
        """Runs iteration `count` of a loop (limits checked, body run, iteration recorded); returns its outputs."""
        ...

    def record_iteration(self, node: str, index: tuple[int, ...], inputs: dict[str, Any],
                         outputs: dict[str, Any], info: IterationInfo | None = None) -> None:
        """Records one iteration of a loop."""
        ...

    def check_iterations(self, count: int, node: str, op_type: str, iteration: tuple[int, ...]) -> None:
        """Raises LimitExceeded before a loop runs more iterations than the limits allow."""
        ...

    def check_bytes(self, size: int, what: str, node: str, op_type: str, iteration: tuple[int, ...]) -> None:
        """Raises LimitExceeded before allocating more than the limits allow."""
        ...


@dataclass(slots=True)
class Call:
    """What a special kernel (control flow, recurrent cells, function calls) needs about the execution it serves:
    such kernels are `fn(args, call) -> (outputs, info)` and run bodies through the engine."""

    engine: BodyEngine  # the engine of this run
    env: dict[str, Any]  # the calling frame's values: captures for bodies are read from here
    iteration: tuple[int, ...]
    path: str
    op_type: str


def as_array(value: Any) -> np.ndarray:
    """numpy ufuncs return scalars for 0-d inputs; ONNX values are arrays."""
    return value if type(value) is np.ndarray else np.asarray(value)


def domain_of(node: NodeRef) -> str:
    """The node's domain, with the default domain's two spellings ('' and 'ai.onnx') as ''."""
    return "" if node.domain == "ai.onnx" else node.domain


def node_error(node: NodeRef, message: str) -> ExecutionError:
    """An ExecutionError naming the node and its op type."""
    return ExecutionError(f"node {node.path!r} ({node.op_type}): {message}", node=node.path, op_type=node.op_type)


class OpNode:
    """One node as its kernel sees it: `version` (the schema's since_version at the model's opset for the node's
    domain), its attributes with that version's defaults, the model's opsets and the types it declares for the
    values the node reads. Creating it checks the node against the version."""

    def __init__(self, node: NodeRef, opsets: dict[str, int],
                 types: Callable[[str], onnx.TypeProto | None]) -> None:
        """`opsets`: the model's, by domain ("" for the default one); `types`: name -> its declared type as read
        in the node's graph (None when undeclared)."""
        self.node = node
        self.path = node.path
        self.op_type = node.op_type
        self.domain = domain_of(node)
        if self.domain not in opsets:
            raise UnsupportedOperatorError(
                f"node {node.path!r} ({node.op_type}) uses domain {self.domain!r}, which the model does not import",
                node=node.path, op_type=node.op_type)
        self.opsets = opsets
        self.opset: int = opsets[self.domain]
        self._types = types
        self.schema = schema_at(node.op_type, self.opset, self.domain)
        self.version: int = self.schema.since_version if self.schema is not None else self.opset
        self._set = {att.name: att for att in node.proto.attribute}
        facts = schema_facts(self.schema) if self.schema is not None else None
        self._specs = facts.attributes if facts is not None else {}
        if self.schema is not None and facts is not None:
            self._check(self.schema, facts)

    def _check(self, schema: onnx.defs.OpSchema, facts: SchemaFacts) -> None:
        proto = self.node.proto
        problem = attribute_problem(proto, schema, self.opset)
        if problem is not None:
            raise self.error(problem)
        inputs = proto.input
        required = [name for i, name in facts.required_inputs if i >= len(inputs) or not inputs[i]]
        if required:
            raise self.error(f"the {' and '.join(required)} input is missing ({facts.name} requires it)")
        if self.input_count() > facts.max_input:
            raise self.error(f"it has {self.input_count()} inputs; {facts.name} takes at most {facts.max_input}")
        if len(proto.output) > facts.max_output:
            raise self.error(f"it has {len(proto.output)} outputs; {facts.name} makes at most {facts.max_output}")

    def value_type(self, name: str) -> onnx.TypeProto | None:
        """The type the model declares for `name` as the node's graph reads it (None when undeclared)."""
        return self._types(name)

    def error(self, message: str) -> ExecutionError:
        """An ExecutionError naming this node: raise it for what the version does not allow."""
        return node_error(self.node, message)

    def has(self, name: str) -> bool:
        """Whether the node sets the attribute itself."""
        return name in self._set

    def attr(self, name: str, default: Any = None) -> Any:
        """The node's value (ints as int, lists as list, strings as str, tensors as arrays), else the version's
        default, else `default`."""
        att = self._set.get(name)
        if att is not None:
            return attribute_value(att)
        spec = self._specs.get(name)
        if spec is not None and spec.default_value.type != onnx.AttributeProto.UNDEFINED:
            return attribute_value(spec.default_value)
        return default

    def get_int(self, name: str, default: int | None = None) -> int:
        value = self.attr(name, default)
        if value is None:
            raise self.error(f"attribute {name!r} is not set and {self.op_type}-{self.version} has no default")
        return int(value)

    def get_float(self, name: str, default: float | None = None) -> float:
        value = self.attr(name, default)
        if value is None:
            raise self.error(f"attribute {name!r} is not set and {self.op_type}-{self.version} has no default")
        return float(value)

    def get_str(self, name: str, default: str | None = None) -> str:
        value = self.attr(name, default)
        if value is None:
            raise self.error(f"attribute {name!r} is not set and {self.op_type}-{self.version} has no default")
        return str(value)

    def get_ints(self, name: str) -> list[int] | None:
        value = self.attr(name)
        return None if value is None else [int(v) for v in value]

    def input_count(self) -> int:
        """How many inputs the node passes (trailing omitted ones not counted)."""
        names = list(self.node.proto.input)
        while names and not names[-1]:
            names.pop()
        return len(names)
