"""`explorer.reduce(a, b)`: the smallest part of model A that still parts from side B the same way (the same value
departs first, beyond the same tolerance). The cone of the departing value in its own graph, cut at the values
that still agree (those computed before it, which the run recorded), is bisected: the smallest tail of the cone
whose cut still departs is kept. A divergence inside a Loop, Scan or If body gives a standalone part of that body:
its inputs are what it read at the departing iteration, its captured constants initializers, each side's own."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from ..compare import compare
from ..compare.report import Comparison, Divergence
from ..compare.sides import Side, as_model, kind_of
from ..errors import CompareError, ExplorerError
from ..limits import Limits
from ..model.cones import cone
from ..model.model import Model, load
from ..trace.trace import Trace
from .reduce_cut import Cut, cut, renamed


class Tolerance(TypedDict, total=False):
    """The tolerances given (those left out are compare's defaults)."""

    rtol: float
    atol: float


def tolerance_of(rtol: float | None, atol: float | None) -> Tolerance:
    given = Tolerance()
    if rtol is not None:
        given["rtol"] = rtol
    if atol is not None:
        given["atol"] = atol
    return given


@dataclass
class Reduction:
    """What reduce found: the cut models ("model", or "model_a" and "model_b"), their inputs, the other side's
    value of the departing output (`expected`) and A's (`actual`), the first divergence before and after, the
    nodes kept (A's paths) and the graph they were cut from."""

    models: dict[str, Any]  # file stem -> ModelProto
    inputs: dict[str, dict[str, np.ndarray]]  # file stem -> its inputs (the same for both but a float16 form's)
    output: str
    expected: np.ndarray
    actual: np.ndarray
    first: Divergence
    reduced_first: Divergence
    nodes_before: int
    nodes: list[str]
    graph: str  # the graph path the part was cut from ("" the main graph)
    other: str  # "onnxruntime", "model" or "reference"
    tolerance: Tolerance = field(default_factory=Tolerance)
    notes: list[str] = field(default_factory=list)
    cone_size: int = 0


def _other_value(comparison: Comparison, first: Divergence) -> np.ndarray:
    assert comparison.b is not None
    produced = comparison.b.produced.get((first.b_node, first.b_name))
    if produced is None or first.iteration not in produced.values:
        raise CompareError(f"side B recorded no value {first.b_name!r} at iteration {first.iteration}")
    return np.asarray(produced.values[first.iteration])


def reduce(a: Side, b: Side, feeds: dict[str, Any] | None = None, *, rtol: float | None = None,
           atol: float | None = None, limits: Limits | None = None) -> Reduction:
    """Reduces model `a` against `b` ("onnxruntime", another model, or reference values as compare takes them);
    CompareError when they agree or when no part smaller than the departing value's graph parts the same way."""
    model_a = as_model(a)
    if model_a is None:
        raise CompareError("reduce needs side A as a model")
    tolerance = tolerance_of(rtol, atol)
    comparison = compare(model_a, b, feeds, limits=limits, **tolerance)
    first = comparison.first
    if first is None:
        raise CompareError("the two sides agree: nothing to reduce" + (
            f" ({'; '.join(comparison.errors.values())})" if comparison.errors else ""))
    assert comparison.a is not None and comparison.a.trace is not None
    trace = comparison.a.trace
    kind = kind_of(b)
    model_b = as_model(b) if kind == "model" else None
    actual = np.asarray(trace.event(first.node, first.iteration).outputs[first.name])
    expected = _other_value(comparison, first)
    if model_b is not None and first.b_node not in model_b.index.nodes:
        raise CompareError(f"B has no node {first.b_node!r}: the two models are not cut the same way")
    counterparts = {(v.node, v.name): v.b_name for v in comparison.values}
    part = cone(model_a, first.node)
    b_trace = comparison.b.trace if comparison.b is not None and comparison.b.trace is not None else trace

    def attempt(k: int) -> tuple[dict[str, Cut], Divergence] | None:
        nodes = part[-k:]
        try:
            cut_a = cut(model_a, trace, nodes, first.name, first.iteration, actual)
            cuts = {"model": cut_a}
            if model_b is not None:
                cut_b = _counterpart(model_b, b_trace, nodes, cut_a, first, expected, counterparts)
                if cut_b is None:
                    return None
                cuts = {"model_a": cut_a, "model_b": cut_b}
            reduced = _reduced_compare(cuts, kind, first, expected, limits, tolerance)
        except ExplorerError:
            return None
        if reduced is None or reduced.name != first.name:
            return None
        return cuts, reduced

    found = _smallest(len(part), attempt)
    if found is None:
        raise CompareError(f"no part of the graph {model_a.index.nodes[first.node].graph.path or 'main'!r} "
                           f"computing {first.name!r} parts the same way on its own (the whole cone of "
                           f"{len(part)} nodes does not): the difference needs more than the recorded values")
    k, (cuts, reduced) = found
    cut_a = next(iter(cuts.values()))
    reduction = Reduction({name: c.proto for name, c in cuts.items()},
                          {name: c.inputs for name, c in cuts.items()}, first.name, expected, actual,
                          first, reduced, len(model_a.index.nodes), cut_a.nodes,
                          model_a.index.nodes[first.node].graph.path, kind, tolerance, cone_size=len(part))
    if k > 5:
        reduction.notes.append(f"{k} nodes: no smaller tail of the departing value's cone ({len(part)} nodes) "
                               f"parts the same way: computed from the recorded values it agrees, or it reads a "
                               f"value the other side does not compute (a rewrite fused it, a re-export renamed it)")
    return reduction


def _counterpart(model_b: Model, trace_b: Trace, nodes: list[str], cut_a: Cut, first: Divergence,
                 expected: np.ndarray, counterparts: dict[tuple[str, str], str]) -> Cut | None:
    """B cut the same way as A's cut: the same nodes where B has them, else (an optimized, quantized or re-exported
    B that renamed or fused them) B's cone of its departing node from the counterparts of A's cut inputs (the
    values compare paired), renamed as A's so both take one set of inputs; None when some input of A's cut has
    no counterpart in B."""
    if all(n in model_b.index.nodes for n in nodes):
        return cut(model_b, trace_b, nodes, first.b_name, first.iteration, expected, inputs=cut_a.inputs)
    index = cut_a.model.index
    graph_path = index.nodes[nodes[0]].graph.path
    names: dict[str, str] = {}  # A's input -> B's value
    for name in cut_a.inputs:
        definition = index.resolve(name, graph_path)
        if definition is not None and definition.node is not None:
            other = counterparts.get((definition.node, name))
            if other is None:
                return None
            names[name] = other
        else:
            names[name] = name  # a graph or body input: the same name in B
    b_nodes = cone(model_b, first.b_node, frozenset(names.values()))
    shared = {names[a]: value for a, value in cut_a.inputs.items()}
    cut_b = cut(model_b, trace_b, b_nodes, first.b_name, first.iteration, expected, inputs=shared)
    if set(cut_b.inputs) != set(shared):
        return None
    back = {b: a for a, b in names.items()}
    return Cut(renamed(cut_b.proto, back), {back[b]: v for b, v in cut_b.inputs.items()}, cut_b.output, b_nodes,
               model_b)


def _smallest(size: int, attempt: Callable[[int], Any]) -> tuple[int, Any] | None:
    """The smallest k in 1..size whose attempt succeeds, by bisection (a tail that parts stays parting when it
    grows back towards the graph's inputs, so success is taken as monotonic)."""
    result = attempt(1)
    if result is not None:
        return 1, result
    top = attempt(size) if size > 1 else None
    if top is None:
        return None
    low, high = 1, size  # attempt(low) fails, attempt(high) succeeds
    while high - low > 1:
        middle = (low + high) // 2
        got = attempt(middle)
        if got is not None:
            high, top = middle, got
        else:
            low = middle
    return high, top


def _reduced_compare(cuts: dict[str, Cut], kind: str, first: Divergence, expected: np.ndarray,
                     limits: Limits | None, tolerance: Tolerance) -> Divergence | None:
    """The first divergence of the cut models against the same kind of other side."""
    cut_a = next(iter(cuts.values()))
    side_a = load(cut_a.proto)
    if kind == "model":
        other: Any = load(cuts["model_b"].proto)
    elif kind == "onnxruntime":
        other = "onnxruntime"
    else:
        other = {first.name: expected}
    result = compare(side_a, other, dict(cut_a.inputs), limits=limits, **tolerance)
    return result.first
