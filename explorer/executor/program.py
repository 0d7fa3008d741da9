"""A model compiled for execution: per graph, its nodes in a valid order with their kernels built once."""
from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx

from ..budgets import MEMO_CONSTANT_BYTES
from ..errors import ExecutionError, ModelError
from ..proto.graph import GraphRef, NodeRef, free_names, node_ids
from ..proto.graph_index import GraphIndex
from ..proto.weights import tensor_value
from ..spec.random_ops import NONDETERMINISTIC
from ..trace.trace import EventSite
from .compiled import CompiledGraph, Step
from .guards import guard_for, quick_guard_for
from .kernels import build_kernel, calls_blas
from .memo import Budget, ComputedOnce, computed_once, remembered, worth_remembering
from .ops.constant import sparse_to_dense

if TYPE_CHECKING:
    from ..model.model import Model


class Program:
    """Compiled graphs of one model, built lazily (a body is compiled the first time it runs) and cached."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.opsets = dict(model.opsets)
        self.opsets.setdefault("", 1)
        self.functions = model.functions
        self._graphs: dict[str, CompiledGraph] = {}
        self.remembered = Budget()  # what the nodes' remembered shape arithmetic may take (memo.py)
        self.constants = Budget(MEMO_CONSTANT_BYTES)  # what the results of constant nodes may take (memo.py)
        self._constant_names: dict[str, set[str]] = {}  # per compiled graph: the names that hold constants
        self.calls_blas = calls_blas(model)  # else a run leaves BLAS's thread count as it is (executor/blas.py)

    def graph(self, path: str = "") -> CompiledGraph:
        compiled = self._graphs.get(path)
        if compiled is None:
            compiled = self._graphs[path] = self._compile(self.model.index.graphs[path])
        return compiled

    def value_type(self, graph_path: str, name: str) -> onnx.TypeProto | None:
        """The declared type of `name` as read in the graph at `graph_path` (the model's scope resolver)."""
        return self.model.index.value_type(name, graph_path)

    def _compile(self, graph: GraphRef) -> CompiledGraph:
        proto = graph.proto
        initializers: dict[str, Any] = {}
        for tensor in proto.initializer:
            initializers[tensor.name] = _to_array(tensor, graph.path)
        for sparse in proto.sparse_initializer:
            dense = initializers[sparse.values.name] = sparse_to_dense(sparse)
            dense.flags.writeable = False  # as every other initializer: a constant (memo.computed_once)
        captures = free_names(proto) if graph.path else []
        available = {i.name for i in proto.input} | set(initializers) | set(captures) | {""}
        index = self.model.index
        ordered = _topological(graph, available, index)
        constants = self._constant_names[graph.path] = self._given_constants(graph, initializers, captures)
        steps = []
        for ref in ordered:
            fn, special = build_kernel(ref, self)
            default_domain = not special and ref.proto.domain in ("", "ai.onnx")
            if default_domain and _deterministic(ref.op_type) and all(
                    not name or name in constants for name in ref.proto.input):
                fn = computed_once(fn, self.constants)
                constants.update(name for name in ref.proto.output if name)
            else:
                constants.difference_update(ref.proto.output)
                if default_domain and worth_remembering(
                        ref.op_type, [self.value_type(graph.path, name) if name else None for name in ref.proto.input]):
                    fn = remembered(ref.op_type, fn, self.remembered)
            steps.append(step_of(ref, fn, special))
        return CompiledGraph(
            path=graph.path,
            input_names=[i.name for i in proto.input],
            output_names=[o.name for o in proto.output],
            initializers=initializers,
            captures=captures,
            steps=steps,
        )

    def _given_constants(self, graph: GraphRef, initializers: dict[str, Any], captures: list[str]) -> set[str]:
        """The names that hold the same value in every execution of `graph` before its nodes run: its
        initializers that no input replaces (a feed, or a body's formal input), and the values it captures that
        are constants of the graph around it (compiled before it)."""
        formal = {i.name for i in graph.proto.input}
        constants = {name for name in initializers if name not in formal}
        parent = self.model.index.parent(graph) if graph.path else None
        outer = self._constant_names.get(parent.path) if parent is not None else None
        if outer is not None:
            constants.update(name for name in captures if name in outer)
        return constants


def _deterministic(op_type: str) -> bool:
    """Whether a default-domain operator's result is a function of its inputs and attributes: all but those that
    draw random values (a Dropout draws when training)."""
    return op_type not in NONDETERMINISTIC


def step_of(ref: NodeRef, fn: Callable[..., Any], special: bool) -> Step:
    """The node compiled for the engine's loop around its kernel `fn`, its guards chosen."""
    inputs, outputs = tuple(ref.proto.input), tuple(ref.proto.output)
    recorded = _distinct_named(inputs)
    site = EventSite(ref.path, ref.op_type, tuple(inputs[k] for k in recorded), tuple(o for o in outputs if o))
    required = max((k + 1 for k, name in enumerate(outputs) if name), default=0)
    single = outputs[0] if len(outputs) == 1 and outputs[0] else None
    pick = None if recorded == list(range(len(inputs))) else _picker(recorded)
    fetch = itemgetter(*inputs) if len(inputs) > 1 else None
    guard, quick = guard_for(ref.proto), quick_guard_for(ref.proto)
    if quick is not None:
        guard, exact = quick, guard
    else:
        exact = None
    return Step(ref.path, ref.op_type, inputs, outputs, fn, special, guard, site, required, single, pick, fetch,
                exact, fn if isinstance(fn, ComputedOnce) else None)


def _distinct_named(names: tuple[str, ...]) -> list[int]:
    """Positions of the first occurrence of each non-empty name."""
    seen: set[str] = set()
    kept = []
    for k, name in enumerate(names):
        if name and name not in seen:
            seen.add(name)
            kept.append(k)
    return kept


def _picker(positions: list[int]) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    def pick(args: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple([args[k] for k in positions])

    return pick


def _to_array(tensor: onnx.TensorProto, where: str) -> np.ndarray:
    """An initializer's value (a mapped one read where it lies, copied only when it is not aligned)."""
    try:
        return tensor_value(tensor, aligned=True)
    except ModelError:
        raise
    except Exception as exc:  # noqa: BLE001 - a malformed tensor is a model error, whatever onnx raises
        raise ModelError(f"initializer {tensor.name!r} in graph {where or 'main'!r} cannot be read: {exc}") from None


def _topological(graph: GraphRef, available: set[str], index: GraphIndex) -> list[NodeRef]:
    """Nodes in document order when that is valid (the common case), else a stable topological order."""
    nodes = [index.nodes[graph.prefix + nid] for nid in node_ids(graph.proto)]
    needs = []
    for ref in nodes:
        wanted = {n for n in ref.proto.input if n}
        for body in ref.subgraphs:
            wanted.update(free_names(body.proto))
        needs.append(wanted)
    known = set(available)
    in_order = True
    for ref, wanted in zip(nodes, needs):
        if not wanted <= known:
            in_order = False
            break
        known.update(o for o in ref.proto.output if o)
    if in_order:
        return nodes
    known = set(available)
    pending = list(range(len(nodes)))
    ordered = []
    while pending:
        progressed = [i for i in pending if needs[i] <= known]
        if not progressed:
            ref = nodes[pending[0]]
            missing = sorted(needs[pending[0]] - known)
            producible = {o for i in pending for o in nodes[i].proto.output}
            why = "a cycle" if set(missing) <= producible else "nothing defines it"
            raise ExecutionError(
                f"node {ref.path!r} ({ref.op_type}) reads {missing}, which cannot be computed ({why})",
                node=ref.path, op_type=ref.op_type,
            )
        for i in progressed:
            ordered.append(nodes[i])
            known.update(o for o in nodes[i].proto.output if o)
        done = set(progressed)
        pending = [i for i in pending if i not in done]
    return ordered
