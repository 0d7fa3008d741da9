"""Each captured module value against the ONNX value it became: a module call's outputs are the values its
nodes compute that leave its scope (read by a node outside it, or a graph output), matched in order by shape
(layouts undone: see layouts.py); each layer of a recurrent module is the Y of its k-th GRU/LSTM/RNN operator;
the whole model's outputs are the graph outputs. What finds no value is listed with the reason."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model.model import Model
from ..proto.graph import attribute
from .captured import Captured, ModuleInfo
from .layouts import SAME, Layout, fitting_layout, recurrent_y
from .scopes import Scopes


@dataclass
class Point:
    """One framework value: output `index` of a module call (`kind` "out"), or the output of layer `index` of a
    recurrent module run alone ("layer_out"); aligned when `onnx_value` is set, else `reason` says why not."""

    module: str
    call: int
    kind: str
    index: int
    order: int  # position in the framework's execution order
    framework: np.ndarray = field(repr=False)
    onnx_value: str | None = None
    onnx_node: str | None = None
    layout: Layout = SAME
    reason: str = ""
    iteration: tuple[int, ...] = ()  # the loop iteration whose value it is (a module called in a Loop's body)
    # the framework's inputs of the call, in the ONNX layout, by the ONNX value each entered the call's nodes as
    handed: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def aligned(self) -> bool:
        return self.onnx_value is not None

    @property
    def label(self) -> str:
        """`gru`, `gcell (call 2)`, `gru layer 1`, `lstm output 1`."""
        name = self.module or "(model)"
        call = f" (call {self.call})" if self.call else ""
        what = f" layer {self.index}" if self.kind == "layer_out" else f" output {self.index}" if self.index else ""
        return f"{name}{call}{what}"


Recorded = dict[tuple[int, ...], dict[str, np.ndarray]]  # iteration tuple -> value name -> value


def recorded_values(trace: Any) -> Recorded:
    """Every tensor the run's nodes read or made, by iteration tuple (the main graph's and If branches' at ())."""
    found: Recorded = {}
    for event in trace.events:
        into = found.setdefault(event.iteration, {})
        for values in (event.inputs, event.outputs):
            for name, value in values.items():
                if isinstance(value, np.ndarray):
                    into[name] = value
    return found


def _in_loop(model: Model, nodes: list) -> bool:
    """Whether the nodes all lie in the body of one Loop or Scan of the main graph."""
    graphs = {n.graph.path for n in nodes}
    if len(graphs) != 1 or "" in graphs:
        return False
    graph = nodes[0].graph
    return graph.depth == 1 and graph.owner is not None and model.node(graph.owner).proto.op_type in ("Loop", "Scan")


def align_points(model: Model, captured: Captured, scopes: Scopes, recorded: Recorded) -> list[Point]:
    """Every captured output and layer, in the framework's order, aligned or with its reason."""
    consumers: dict[str, set[str]] = {}
    producer: dict[str, str] = {}
    for node in scopes.nodes:
        for name in node.proto.input:
            consumers.setdefault(name, set()).add(node.path)
        for name in node.proto.output:
            producer[name] = node.path
    graph_outputs = [o.name for o in model.graph.output]
    values = recorded.get((), {})
    calls = {module: scopes.calls(module) for module in captured.modules}
    points: list[Point] = []
    for order, (module, call) in enumerate(captured.order):
        info = captured.modules[module]
        base = len(points)
        for layer, value in enumerate(captured.layers(module, call)):
            points.append(Point(module, call, "layer_out", layer, order, value))
        for j, value in enumerate(captured.outputs(module, call)):
            points.append(Point(module, call, "out", j, order, value))
        mine = points[base:]
        if not module:
            _graph_outputs(mine, graph_outputs, values, producer)
            continue
        nodes = calls[module].get(call)
        iteration: tuple[int, ...] = ()
        if not nodes and list(calls[module]) == [0] and _in_loop(model, calls[module][0]) \
                and (call,) in recorded:  # a module called once per iteration of a Loop: call k, iteration k
            nodes, iteration = calls[module][0], (call,)
        elif nodes and info.calls > 1 and _in_loop(model, nodes) and (call,) in recorded:
            iteration = (call,)
        if not nodes:
            why = ("the exporter wrote no scope for its calls one by one (ambiguous)"
                   if calls[module] else "no ONNX node carries its scope (fused into another or not exported)")
            for p in mine:
                p.reason = why
            continue
        inside = {n.path for n in nodes}
        here = recorded.get(iteration, {})
        outputs = {o.name for o in nodes[0].graph.proto.output}
        leaving = [name for n in nodes for name in n.proto.output
                   if name in here and (name in outputs or consumers.get(name, set()) - inside)]
        for p in mine:
            p.iteration = iteration
        _layers([p for p in mine if p.kind == "layer_out"], info, nodes, model, here)
        _outputs([p for p in mine if p.kind == "out"], leaving, here, producer)
        handed = _inputs(captured.inputs_of(module, call), nodes, here, model)
        for p in mine:
            p.handed = handed
    return points


def _inputs(framework: list[np.ndarray], nodes: list, values: dict[str, np.ndarray],
            model: Model) -> dict[str, np.ndarray]:
    """Each framework input of a call placed on the value entering its nodes from outside (not a weight) that fits
    its shape (exact shapes first; among several, the closest), in that value's ONNX layout."""
    made = {name for n in nodes for name in n.proto.output}
    weights = set(model.initializer_names) | {t.name for n in nodes for t in n.graph.proto.initializer}
    entering = list(dict.fromkeys(name for n in nodes for name in n.proto.input
                                  if name in values and name not in made and name not in weights))
    found: dict[str, np.ndarray] = {}
    for value in framework:
        shape = tuple(value.shape)
        free = [n for n in entering if n not in found and values[n].dtype.kind == value.dtype.kind]
        exact = [n for n in free if tuple(values[n].shape) == shape]
        candidates = exact or [n for n in free if fitting_layout(tuple(values[n].shape), shape) is not None]
        if not candidates:
            continue
        name = min(candidates, key=lambda n: _distance(values[n], value))
        layout = fitting_layout(tuple(values[name].shape), shape)
        assert layout is not None
        found[name] = layout.to_onnx(value, tuple(values[name].shape)).astype(values[name].dtype)
    return found


def _graph_outputs(points: list[Point], names: list[str], values: dict[str, np.ndarray],
                   producer: dict[str, str]) -> None:
    for p in points:
        if p.index >= len(names) or names[p.index] not in values:
            p.reason = "the model has no graph output at this position"
            continue
        _place(p, names[p.index], values, producer, "the graph output")


def _place(p: Point, name: str, values: dict[str, np.ndarray], producer: dict[str, str], what: str) -> bool:
    layout = fitting_layout(tuple(values[name].shape), tuple(p.framework.shape))
    if layout is None:
        p.reason = f"{what} {name!r} has shape {list(values[name].shape)}, the framework's {list(p.framework.shape)}"
        return False
    p.onnx_value, p.onnx_node, p.layout = name, producer.get(name), layout
    return True


def _outputs(points: list[Point], leaving: list[str], values: dict[str, np.ndarray],
             producer: dict[str, str]) -> None:
    """Outputs in order, each a value leaving the scope that fits its shape (exact shapes first; among several,
    the closest to the framework's)."""
    free = list(dict.fromkeys(leaving))
    for p in points:
        shape = tuple(p.framework.shape)
        exact = [n for n in free if tuple(values[n].shape) == shape]
        other = [n for n in free if fitting_layout(tuple(values[n].shape), shape) is not None]
        candidates = exact or other
        chosen = min(candidates, key=lambda n: _distance(values[n], p.framework)) if candidates else None
        if chosen is None:
            p.reason = ("no value leaves its scope" if not leaving else
                        f"no value leaving its scope has its shape {list(shape)} (the model may not use it)")
            continue
        _place(p, chosen, values, producer, "the value")
        free.remove(chosen)


def _distance(value: np.ndarray, framework: np.ndarray) -> float:
    """How far a candidate is from the framework's value (several values of one shape leave a scope: an
    LSTMCell's h and c); the order the exporter wrote them in says nothing of which is which."""
    layout = fitting_layout(tuple(value.shape), tuple(framework.shape))
    if layout is None or value.dtype.kind not in "fiub" or framework.dtype.kind not in "fiub":
        return float("inf")
    with np.errstate(all="ignore"):
        return float(np.nanmax(np.abs(layout.to_framework(value).astype(np.float64) - framework), initial=0.0))


def _layers(points: list[Point], info: ModuleInfo, nodes: list, model: Model,
            values: dict[str, np.ndarray]) -> None:
    """Layer k of a recurrent module: the Y of the k-th operator of its kind in the call's nodes."""
    if not points or info.recurrent is None:
        return
    ops = [n for n in nodes if n.proto.op_type == info.recurrent["op"]]
    for p in points:
        if not ops and len(points) == 1:
            p.reason = (f"written as a loop or unrolled, not as a {info.recurrent['op']} operator: its one layer is "
                        "the module's output")
            continue
        if len(ops) != len(points):
            p.reason = f"{len(ops)} {info.recurrent['op']} operator(s) in its scope for {len(points)} layers"
            continue
        node = ops[p.index]
        name = node.proto.output[0] if node.proto.output else ""
        if name not in values:
            p.reason = f"{node.path!r} does not output Y"
            continue
        layout = recurrent_y(bool(info.recurrent["batch_first"]), int(attribute(node.proto, "layout", 0)),
                             tuple(values[name].shape))
        if tuple(layout.to_framework(values[name]).shape) != tuple(p.framework.shape):
            p.reason = f"Y of {node.path!r} has shape {list(values[name].shape)}"
            continue
        p.onnx_value, p.onnx_node, p.layout = name, node.path, layout
