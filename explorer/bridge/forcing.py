"""Teacher forcing: a module's own error, apart from the error it was handed. The ONNX nodes between an aligned
point and the aligned points before it (its ancestors in its graph back to them) are run again by explorer with
the framework's values in place of those points' ONNX values (put back in the ONNX layout); everything else they
read (weights, graph inputs, a loop's counter and carried values, outer values) is what the run read at that
iteration. What comes out, held against the framework's value, is the error the point makes itself; inside a
Loop's body this is done per iteration, and what the body is handed (the state carried from the step before) is
the framework's own value at that step, read off the inputs of the module calls of that iteration: a cell
departing at step 17 only because its state departed at step 16 carries that error, it makes none."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import ExplorerError
from ..executor import run
from ..model.model import Model, load
from ..proto.graph import free_names, subgraph_attributes
from .align import Point, Recorded


@dataclass
class Forced:
    """The point's value computed from exact inputs (`value`, framework layout; None when the nodes could not run
    alone), the points it started from, and the largest abs error of the values it was handed."""

    value: np.ndarray | None
    frontier: list[Point] = field(default_factory=list)
    handed: float = 0.0
    nodes: int = 0
    note: str = ""


def _reads(node: onnx.NodeProto) -> list[str]:
    names = [n for n in node.input if n]
    for _, graph in subgraph_attributes(node):
        names += free_names(graph)
    return names


def _path(model: Model, node: onnx.NodeProto) -> str:
    found = next((ref.path for ref in model.nodes() if ref.proto is node or (
        ref.proto.name == node.name and node.name and list(ref.proto.output) == list(node.output))), "")
    return found


def _framework_value(p: Point, like: np.ndarray) -> np.ndarray:
    return p.layout.to_onnx(p.framework, like.shape).astype(like.dtype)


def force(model: Model, point: Point, before: list[Point], recorded: Recorded, errors: dict[int, float],
          replace: dict[str, np.ndarray] | None = None) -> Forced:
    """Reruns the nodes computing `point` from the framework's values of the aligned points in `before` (of its
    iteration, or outside loops; the latest point holding a value wins); `errors` holds each earlier point's abs
    error by id(); `replace` gives other values to weights (initializers) by name."""
    assert point.onnx_value is not None
    here = recorded.get(point.iteration, {})
    frontier: dict[str, Point] = {}
    for p in before:
        if p.onnx_value is not None and p.iteration in (point.iteration, ()):
            frontier[p.onnx_value] = p
    if point.onnx_value in frontier:  # the same value as an earlier point: nothing runs between them
        source = frontier[point.onnx_value]
        value = point.layout.to_framework(_framework_value(source, here[point.onnx_value]))
        return Forced(value, [source], errors.get(id(source), 0.0), 0)
    if point.onnx_node is None:
        return Forced(None, note="no node computes it")
    graph = model.node(point.onnx_node).graph.proto
    cone = _cone(model, graph, point.onnx_value, frontier, here, recorded.get((), {}))
    if isinstance(cone, str):
        return Forced(None, note=cone)
    needed, given, used = cone
    carried = _carried_state(graph, model, given, [*before, point], point.iteration, set(frontier))
    inner = [p.onnx_node for p in before if p.onnx_node is not None and p.onnx_node != point.onnx_node]
    if any(subgraph_attributes(node) and any(n.startswith(f"{_path(model, node)}/") for n in inner)
           for node in needed):
        return Forced(None, note="the modules before it run inside a body (a loop's, a branch's) its nodes "
                                 "hold: its own error cannot be told apart")
    proto = _forced_model(model, graph, needed, given, point.onnx_value, here[point.onnx_value], replace)
    handed = max([errors.get(id(p), 0.0) for p in used] + list(carried.values()), default=0.0)
    try:
        trace = run(load(proto), given)
    except ExplorerError as exc:
        return Forced(None, used, handed, len(needed), f"the nodes could not run alone: {exc}")
    return Forced(point.layout.to_framework(trace.outputs[point.onnx_value]), used, handed, len(needed))


def _carried_state(graph: onnx.GraphProto, model: Model, given: dict[str, Any], points: list[Point],
                   iteration: tuple[int, ...], frontier: set[str]) -> dict[str, float]:
    """Inside a loop's body, what the body is handed each iteration (the carried state, the step's slice) is put
    back as the framework had it at that iteration: the input of a module call of that iteration that reads it.
    Each value replaced in `given`, with the error the run's value carried (by name)."""
    if graph is model.graph or not iteration:
        return {}
    inputs = {i.name for i in graph.input}
    errors: dict[str, float] = {}
    for name in [n for n in given if n in inputs and n not in frontier]:
        framework = next((p.handed[name] for p in reversed(points)
                          if p.iteration == iteration and name in p.handed), None)
        if framework is None or np.shape(framework) != np.shape(given[name]):
            continue
        with np.errstate(all="ignore"):
            ran = np.asarray(given[name]).astype(np.float64)
            errors[name] = float(np.nanmax(np.abs(ran - framework), initial=0.0))
        given[name] = framework
    return errors


def _cone(model: Model, graph: onnx.GraphProto, target: str, frontier: dict[str, Point], here: dict[str, Any],
          outer: dict[str, Any]) -> tuple[list[onnx.NodeProto], dict[str, Any], list[Point]] | str:
    """The nodes of `graph` computing `target` back to the frontier (in graph order), the values they are given
    (the framework's at the frontier, the run's for graph inputs, counters and outer values) and the frontier
    points used; a note saying why not when the run lacks a value."""
    producer = {name: node for node in graph.node for name in node.output}
    initializers = {t.name for t in graph.initializer}
    needed: dict[int, onnx.NodeProto] = {}
    given: dict[str, Any] = {}
    used: dict[str, Point] = {}
    seen: set[str] = set()
    stack = [target]
    while stack:
        name = stack.pop()
        if name in seen or not name:
            continue
        seen.add(name)
        if name in frontier:
            used[name] = frontier[name]
            like = here.get(name, outer.get(name))
            if like is None:
                return f"the run holds no value {name!r}"
            given[name] = _framework_value(frontier[name], like)
        elif name in initializers:
            continue
        elif name in producer:
            node = producer[name]
            if id(node) not in needed:
                needed[id(node)] = node
                stack.extend(_reads(node))
        elif name in model.initializer_names:  # a main-graph weight a body reads: stored with the nodes
            continue
        elif name in here or name in outer:  # a graph input, a loop's counter or carried value, an outer value
            given[name] = here.get(name, outer.get(name))
        elif name not in model.initializer_names:
            return f"the run holds no value {name!r}"
    order = {id(node): k for k, node in enumerate(graph.node)}
    return sorted(needed.values(), key=lambda node: order[id(node)]), given, list(used.values())


def _forced_model(model: Model, graph: onnx.GraphProto, nodes: list[onnx.NodeProto], given: dict[str, Any],
                  target: str, out: np.ndarray, replace: dict[str, np.ndarray] | None) -> onnx.ModelProto:
    """A model of `nodes` alone: the given values as inputs, the weights they read (`replace`d where asked) and
    `target` as its output."""
    initializers = {t.name for t in graph.initializer}
    reads = {n for node in nodes for n in _reads(node)}
    stored = [t for t in graph.initializer if t.name in reads]
    if graph is not model.graph:  # a body reads the main graph's weights from outside
        stored += [t for t in model.graph.initializer if t.name in reads and t.name not in initializers]
    if replace:
        stored = [numpy_helper.from_array(replace[t.name].astype(numpy_helper.to_array(t).dtype), t.name)
                  if t.name in replace else t for t in stored]
    inputs = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype),
                                            list(np.shape(v))) for name, v in given.items()]
    outputs = [helper.make_tensor_value_info(target, helper.np_dtype_to_tensor_dtype(out.dtype), None)]
    proto = helper.make_model(helper.make_graph(nodes, "forced", inputs, outputs, stored),
                              opset_imports=list(model.proto.opset_import), ir_version=model.proto.ir_version)
    proto.functions.extend(model.proto.functions)
    return proto
