"""Boolean rules: a double negation removed."""
from __future__ import annotations

from collections.abc import Sequence

from ..ir import Built, Node
from ..pattern import CLEANUP
from ..state import GraphState
from .common import ChainPattern, identity


class NotNotPattern(ChainPattern):
    """Not(Not(x)) -> x (as PyTorch's TorchScript exporter writes `not bool(t.all())` in a loop condition). The
    inner Not stays when something else reads it."""

    op_types = inner_ops = ("Not",)
    priority = CLEANUP

    def rewrite(self, g: GraphState, inner: Node, node: Node) -> Sequence[Built]:
        return [identity(g, inner.input[0], node.output[0])]
