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
from ..model import load
from .dataflow import cone
from .reduce_cut import Cut, cut


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
    part = cone(model_a, first.node)
    b_trace = comparison.b.trace if comparison.b is not None and comparison.b.trace is not None else trace

    def attempt(k: int) -> tuple[dict[str, Cut], Divergence] | None:
        nodes = part[-k:]
        try:
            cut_a = cut(model_a, trace, nodes, first.name, first.iteration, actual)
            cuts = {"model": cut_a}
            if model_b is not None:
                b_nodes = [n for n in nodes if n in model_b.index.nodes]
                if len(b_nodes) != len(nodes):
                    return None
                cuts = {"model_a": cut_a, "model_b": cut(model_b, b_trace, b_nodes, first.b_name, first.iteration,
                                                         expected, inputs=cut_a.inputs)}
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
        reduction.notes.append(f"{k} nodes: every smaller tail of the departing value's cone ({len(part)} nodes) "
                               f"computed from the recorded values agrees, so these nodes together make the "
                               f"difference")
    return reduction


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
