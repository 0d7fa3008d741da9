"""What a Loop or Scan body knows about its own inputs on every iteration, from the node that runs it: the
iteration number and condition are scalars; a Scan slice has its outer input's shape without the scan axis; a
carried value the body returns unchanged is its initial value (shape and contents); any other carried value is
*assumed* to keep its initial shape, an assumption the propagation keeps only when the body's result for it is
then found to have that same shape (by induction, it has it on every iteration).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

    from .state import GraphState

Dim = int | str | None
Shape = tuple[Dim, ...]


@dataclass
class Seeds:
    """Facts about a body's inputs: shapes and contents per input name, and the carried inputs whose shape is
    only assumed (body input -> the body output that must come back with that shape)."""

    shapes: dict[str, Shape] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    assumed: dict[str, str] = field(default_factory=dict)

    def drop(self, name: str) -> None:
        """Gives up the assumption about carried input `name`."""
        self.shapes.pop(name, None)
        self.assumed.pop(name, None)


def seeds(g: GraphState, shape_of: Callable[[GraphState, str], Shape | None],
          value_of: Callable[[GraphState, str], np.ndarray | None]) -> Seeds | None:
    """The facts about the inputs of `g` when it is the body of a Loop or Scan (opset >= 9), else None.
    `shape_of`/`value_of` read what the enclosing graph knows of one of its values."""
    owner, outer = g.owner, g.parent
    if owner is None or outer is None or not owner.is_onnx("Loop", "Scan"):
        return None
    inputs = [i.name for i in g.graph.input]
    outputs = [o.name for o in g.graph.output]
    found = Seeds()
    if owner.op_type == "Loop":
        for name in inputs[:2]:
            found.shapes[name] = ()
        carried = list(zip(owner.input[2:], inputs[2:], outputs[1:]))
    else:
        if g.opset() < 9:
            return None  # Scan-8 has a batch axis and sequence lengths
        count = int(outer.attribute(owner, "num_scan_inputs", 0))
        states = len(owner.input) - count
        carried = list(zip(owner.input[:states], inputs[:states], outputs[:states]))
        axes = list(outer.attribute(owner, "scan_input_axes", None) or [0] * count)
        for source, name, axis in zip(owner.input[states:], inputs[states:], axes):
            shape = shape_of(outer, source)
            if shape is not None and -len(shape) <= axis < len(shape):
                axis %= len(shape)
                found.shapes[name] = shape[:axis] + shape[axis + 1:]
    for source, name, result in carried:
        shape = shape_of(outer, source) if source else None
        if shape is None:
            continue
        found.shapes[name] = shape
        if result == name:  # returned unchanged: the initial value on every iteration
            value = value_of(outer, source)
            if value is not None:
                found.values[name] = value
        else:
            found.assumed[name] = result
    return found


def keeps(assumed: Shape, found: Shape | None) -> bool:
    """True when a carried value assumed to have shape `assumed` comes back with a shape that agrees with it on
    every dim the assumption states."""
    if found is None or len(found) != len(assumed):
        return False
    return all(a is None or a == f for a, f in zip(assumed, found))

