"""Helpers several pattern families share: axes of Squeeze/Unsqueeze, broadcasting checks, Identity nodes."""
from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import onnx

from ..ir import Built, Node
from ..pattern import MatchResult, Pattern
from ..state import GraphState


def identity(g: GraphState, source: str, target: str) -> onnx.NodeProto:
    """`target = Identity(source)`: how a rewrite says "this output is that value" (IdentityRemoval then rewires)."""
    return g.make_node("Identity", [source], [target])


def rewired(node: Node, data: str) -> onnx.NodeProto:
    """A copy of `node` (attributes, outputs) reading `data` as its first input: the usual shape of a rewrite
    that skips an intermediate node."""
    new = node.copy()
    new.name = ""
    new.input[0] = data
    return new


def int_constant(g: GraphState, name: str) -> np.ndarray | None:
    """The value of an integer constant, else None."""
    value = g.constant(name)
    if value is None or value.dtype.kind not in "iu":
        return None
    return value.astype(np.int64)


def axes(g: GraphState, node: Node) -> list[int] | None:
    """The `axes` of a Squeeze/Unsqueeze/Reduce-like node: attribute (old opsets) or constant input; None when
    absent or not constant."""
    if len(node.input) > 1 and node.input[1]:
        value = int_constant(g, node.input[1])
        return None if value is None else [int(a) for a in value.reshape(-1)]
    found = g.attribute(node, "axes")
    return None if found is None else [int(a) for a in found]


def normalize(axes_: list[int], rank: int | None) -> list[int] | None:
    """Axes made non-negative for a tensor of `rank`; None when a negative axis meets an unknown rank."""
    if any(a < 0 for a in axes_):
        if rank is None:
            return None
        axes_ = [a + rank if a < 0 else a for a in axes_]
    return axes_


def axes_input(g: GraphState, values: list[int], prefix: str) -> tuple[list[onnx.NodeProto], list[str], dict]:
    """How to give axes to a new Squeeze/Unsqueeze: (constant nodes, extra inputs, attributes) for the opset."""
    if g.opset() >= 13:
        node, name = g.make_constant(np.array(values, dtype=np.int64), prefix)
        return [node], [name], {}
    return [], [], {"axes": values}


def broadcast_keeps_shape(g: GraphState, x: str, other: np.ndarray) -> str | None:
    """None when broadcasting `x` with an array of `other`'s shape yields `x`'s shape; else the reason why not."""
    rank = g.rank(x)
    if other.ndim == 0 or (all(d == 1 for d in other.shape) and rank is not None and other.ndim <= rank):
        return None
    shape = g.shape(x)
    if shape is None:
        return f"rank of {x!r} unknown"
    if other.ndim > len(shape):
        return f"the constant has more dims than {x!r}"
    for want, got in zip(shape[len(shape) - other.ndim:], other.shape):
        if got != 1 and want != got:
            return f"the constant {other.shape} may broadcast {x!r} {shape} to a larger shape"
    return None


def dims_text(dims: tuple | list) -> str:
    """Dims as a user reads them: [batch, 3, ?]."""
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def shape_fact(g: GraphState, name: str) -> str:
    """The fact "<name> has shape [...]" a rewrite rests on (recorded with it, shown in the app)."""
    shape = g.shape(name)
    return f"{name} has shape {dims_text(shape) if shape is not None else 'of unknown rank'}"


def same_dim(a: int | str | None, b: int | str | None) -> bool:
    """True when two dims are known to be equal (same int, or same symbolic name)."""
    return a is not None and a == b


class ChainPattern(Pattern):
    """Base of `outer(inner(x, ...), ...)` rewrites anchored on the outer node. `inner_ops` are the operators the
    producer of the outer node's first input may have; `check` says why a pair is declined (a reason), that it
    simply does not match (""), or None when it matches; `rewrite` builds what replaces the outer node. The inner
    node stays when something else reads its output."""

    inner_ops: ClassVar[tuple[str, ...]] = ()

    def check(self, g: GraphState, inner: Node, node: Node) -> str | None:
        return None

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        raise NotImplementedError

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        inner = g.producer_op(node.input[0], *self.inner_ops)
        if inner is None:
            return None
        why = self.check(g, inner, node)
        if why is not None:
            return self.decline(g, node, why) if why else None
        return self.result([inner, node])

    def apply(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        kept: list[Built] = [inner] if g.is_used_more_than_once(inner.output[0]) else []
        return kept + list(self.rewrite(g, inner, node))
