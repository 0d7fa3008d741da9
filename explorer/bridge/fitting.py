"""The exporter's mistakes in a recurrent operator, fitted against the framework: the node is rerun alone on
the framework's input to that layer with each variant of its weights and attributes an exporter gets wrong (the
gate blocks of W, R and B in another order, together or one tensor alone; linear_before_reset flipped; the two
directions swapped; the input and recurrent bias halves swapped; each recurrent block transposed), and the
variant that gives the framework's output of the layer at every step is the fix."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from onnx import helper

from ..compare.stats import ATOL, RTOL, compare_values
from ..errors import ExplorerError
from ..executor import run
from ..model.model import Model, load
from ..proto.graph import attribute
from ..spec.rnn import CELLS
from ..trace.trace import Trace
from .align import Point
from .captured import Captured

Tensors = dict[str, np.ndarray]  # "W", "R", "B" of the node


@dataclass(frozen=True)
class Variant:
    """A change to a recurrent node: `apply` returns its new W, R, B; `attributes` are set on it."""

    name: str  # what the export got wrong, in words
    fix: str  # what applying it does, in words
    apply: Callable[[Tensors], Tensors]
    attributes: tuple[tuple[str, Any], ...] = ()


@dataclass
class Fit:
    """The variant that reproduces the framework's layer (`error`: its largest abs error at every step)."""

    node: str
    op_type: str
    variant: Variant
    error: float
    finding: str


def _blocks(value: np.ndarray, gates: int, order: tuple[int, ...], axis: int) -> np.ndarray:
    parts = np.split(value, gates, axis=axis)
    return np.concatenate([parts[k] for k in order], axis=axis)


def _permuted(order: tuple[int, ...], gates: int, which: str) -> Callable[[Tensors], Tensors]:
    def apply(t: Tensors) -> Tensors:
        out = dict(t)
        for name in which:
            if name == "B":
                if "B" in t:
                    out["B"] = np.concatenate([_blocks(h, gates, order, 1) for h in np.split(t["B"], 2, axis=1)],
                                              axis=1)
            else:
                out[name] = _blocks(t[name], gates, order, 1)
        return out
    return apply


def _swap_directions(t: Tensors) -> Tensors:
    return {k: v[::-1].copy() for k, v in t.items()}


def _swap_halves(t: Tensors) -> Tensors:
    if "B" not in t:
        return dict(t)
    return {**t, "B": np.concatenate(np.split(t["B"], 2, axis=1)[::-1], axis=1)}


def _transpose_recurrent(gates: int) -> Callable[[Tensors], Tensors]:
    def apply(t: Tensors) -> Tensors:
        parts = np.split(t["R"], gates, axis=1)
        return {**t, "R": np.concatenate([p.transpose(0, 2, 1) for p in parts], axis=1)}
    return apply


def variants(op: str, directions: int, lbr: int) -> Iterator[Variant]:
    """Every variant tried, simplest first."""
    cell = CELLS[op]
    letters = cell.gates
    gates = len(letters)
    if op == "GRU":
        yield Variant(f"the framework applies the reset gate {'after' if not lbr else 'before'} the recurrent "
                      f"product; the export has linear_before_reset={lbr}", f"set linear_before_reset={1 - lbr}",
                      dict, (("linear_before_reset", 1 - lbr),))
    if directions == 2:
        yield Variant("the forward and reverse directions' weights are swapped",
                      "swap the two directions of W, R and B", _swap_directions)
    yield Variant("the input and recurrent bias halves of B are swapped", "swap the two halves of B (Wb, Rb)",
                  _swap_halves)
    for order in itertools.permutations(range(gates)):
        if order == tuple(range(gates)):
            continue
        shown = "".join(letters[k] for k in order)
        yield Variant(f"the gate blocks of W, R and B are in the wrong order (the spec's {''.join(letters)} "
                      f"holds the framework's {shown})", f"reorder the gate blocks of W, R and B as {shown}",
                      _permuted(order, gates, "WRB"))
    for which in "WRB":
        for order in itertools.permutations(range(gates)):
            if order == tuple(range(gates)):
                continue
            shown = "".join(letters[k] for k in order)
            yield Variant(f"the gate blocks of {which} alone are in the wrong order",
                          f"reorder the gate blocks of {which} as {shown}", _permuted(order, gates, which))
    yield Variant("each gate block of R is transposed", "transpose each gate block of R",
                  _transpose_recurrent(gates))
    if op == "GRU":
        for order in itertools.permutations(range(gates)):
            if order != tuple(range(gates)):
                shown = "".join(letters[k] for k in order)
                yield Variant(f"linear_before_reset={lbr} and the gate blocks in the wrong order",
                              f"set linear_before_reset={1 - lbr} and reorder the gate blocks as {shown}",
                              _permuted(order, gates, "WRB"), (("linear_before_reset", 1 - lbr),))


def _node_model(node: Any, tensors: dict[str, np.ndarray], opsets: list[Any],
                attributes: tuple[tuple[str, Any], ...]) -> tuple[Any, dict[str, np.ndarray]]:
    proto = helper.make_node(node.op_type, [], [], name="fit")
    proto.CopyFrom(node)
    names = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
    del proto.input[:]
    feeds = {}
    for k, name in enumerate(names):
        if name in tensors:
            while len(proto.input) < k:
                proto.input.append("")
            proto.input.append(name)
            feeds[name] = tensors[name]
    del proto.output[:]
    proto.output.append("Y")
    for key, value in attributes:
        for a in list(proto.attribute):
            if a.name == key:
                proto.attribute.remove(a)
        proto.attribute.append(helper.make_attribute(key, value))
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
              for n, v in feeds.items()]
    graph = helper.make_graph([proto], "fit", inputs, [helper.make_tensor_value_info("Y", 1, None)])
    return helper.make_model(graph, opset_imports=opsets), feeds


def node_tensors(model: Model, trace: Trace, path: str) -> dict[str, np.ndarray]:
    """The recorded inputs of a recurrent node by the spec's names (X, W, R, B, ...)."""
    node = model.node(path).proto
    event = trace.event(path)
    names = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
    return {names[k]: np.asarray(event.inputs[n]) for k, n in enumerate(node.input)
            if n and k < len(names) and isinstance(event.inputs.get(n), np.ndarray)}


def fit(model: Model, trace: Trace, captured: Captured, point: Point, rtol: float = RTOL,
        atol: float = ATOL) -> Fit | None:
    """The first variant of the point's recurrent node that reproduces the framework's layer, None when none does
    (or the point is not a layer of a recurrent module)."""
    if point.kind != "layer_out" or point.onnx_node is None:
        return None
    node = model.node(point.onnx_node).proto
    if node.op_type not in CELLS:
        return None
    tensors = node_tensors(model, trace, point.onnx_node)
    x = captured.values.get(("layer_in", point.module, point.call, point.index))
    if x is None or "W" not in tensors:
        return None
    info = captured.modules[point.module]
    batch_first = bool(info.recurrent and info.recurrent["batch_first"])
    layout = int(attribute(node, "layout", 0))
    if batch_first != bool(layout):
        x = x.transpose(1, 0, 2)
    tensors["X"] = x.astype(tensors["X"].dtype)
    directions = tensors["W"].shape[0]
    lbr = int(attribute(node, "linear_before_reset", 0))
    opsets = list(model.proto.opset_import)
    y_shape = np.asarray(trace.event(point.onnx_node).outputs[node.output[0]]).shape
    for variant in variants(node.op_type, directions, lbr):
        changed = variant.apply({k: tensors[k] for k in ("W", "R", "B") if k in tensors})
        proto, feeds = _node_model(node, {**tensors, **changed}, opsets, variant.attributes)
        try:
            y = run(load(proto), feeds).outputs["Y"]
        except (ExplorerError, ValueError):
            continue
        if np.shape(y) != y_shape:
            continue
        diff = compare_values("Y", point.layout.to_framework(y), point.framework, rtol, atol)
        if diff.ok:
            finding = (f"{node.op_type} {point.onnx_node!r}: {variant.name}. Fixed ({variant.fix}), it matches "
                       f"the framework's layer to {diff.max_abs:.1g} at every step")
            return Fit(point.onnx_node, node.op_type, variant, diff.max_abs, finding)
    return None
