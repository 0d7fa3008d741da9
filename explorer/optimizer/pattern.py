"""The Pattern contract: `match(g, node, matched) -> MatchResult | None` finds nodes around `node` that can be
rewritten without changing the graph; `apply(g, *nodes) -> new nodes` builds their replacement.

The driver removes every node given to `apply` and adds every node it returns (a node that must stay is
returned again). `match` lists all nodes the rewrite depends on, so no other rewrite of the same round touches
them, and records why it declined a candidate with `self.decline(g, node, reason)`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import onnx

if TYPE_CHECKING:
    from .state import GraphState

# Priority levels: the driver runs level 0 to a fixpoint, then enables the next level, and so on.
CLEANUP, SIMPLIFY, STRUCTURE, FUSION = 0, 1, 2, 3


@dataclass
class MatchResult:
    """A match: the pattern, the nodes it rewrites (None for an absent optional position), the function doing
    the rewrite (default: the pattern's apply) and the node near which new nodes go."""

    pattern: Pattern
    nodes: list[onnx.NodeProto | None]
    apply: Callable[..., list[onnx.NodeProto]] | None = None
    insert_at: onnx.NodeProto | None = None

    def present(self) -> list[onnx.NodeProto]:
        return [n for n in self.nodes if n is not None]


class Pattern:
    """Base class of rewrite patterns. Subclasses set `op_types` (the anchor operators, empty for any node of the
    ONNX domain), `priority`, a docstring `before -> after` with its conditions, and implement match/apply."""

    op_types: ClassVar[tuple[str, ...]] = ()
    priority: ClassVar[int] = CLEANUP
    name: ClassVar[str] = "Pattern"  # the class name without its "Pattern" suffix

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = cls.__name__.removesuffix("Pattern")

    def match(self, g: GraphState, node: onnx.NodeProto, matched: list[MatchResult]) -> MatchResult | None:
        raise NotImplementedError

    def apply(self, g: GraphState, *nodes: onnx.NodeProto | None) -> list[onnx.NodeProto]:
        raise NotImplementedError

    def result(self, nodes: list[onnx.NodeProto | None], insert_at: onnx.NodeProto | None = None) -> MatchResult:
        """A MatchResult of this pattern whose rewrite is `self.apply`."""
        present = [n for n in nodes if n is not None]
        return MatchResult(self, nodes, self.apply, insert_at if insert_at is not None else present[-1])

    def decline(self, g: GraphState, node: onnx.NodeProto, reason: str) -> None:
        """Records why `node` was not rewritten by this pattern; returns None so `match` can return it."""
        g.ctx.declined[(g.path, node.name, self.name)] = reason

    def __repr__(self) -> str:
        return f"{self.name}(priority={self.priority})"


def description(pattern: Pattern) -> str:
    """The first paragraph of a pattern's docstring (its `before -> after` line and conditions)."""
    doc = (type(pattern).__doc__ or "").strip()
    return doc.split("\n\n")[0].replace("\n", " ").strip()
