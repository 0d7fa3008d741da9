"""The Pattern contract: `match(g, node) -> MatchResult | None` finds nodes around `node` that can be rewritten
without changing the graph; `apply(g, *nodes) -> new nodes` builds their replacement.

The driver removes every node given to `apply` and adds every node it returns (a node that must stay is
returned again). `match` lists all nodes the rewrite depends on, so no other rewrite of the same round touches
them, and records why it declined a candidate with `self.decline(g, node, reason)`; a rewrite that rests on
facts worth showing (a dim proven equal, a rank known) states them with `self.because(g, node, fact)`.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .ir import Built, Node
    from .state import GraphState

# Priority levels: the driver runs level 0 to a fixpoint, then enables the next level, and so on.
CLEANUP, SIMPLIFY, STRUCTURE, FUSION = 0, 1, 2, 3


@dataclass
class MatchResult:
    """A match: the pattern and the nodes it rewrites (None for an absent optional position). New nodes go
    where the last of them was."""

    pattern: Pattern
    nodes: list[Node | None]

    def present(self) -> list[Node]:
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

    def match(self, g: GraphState, node: Node) -> MatchResult | None:
        raise NotImplementedError

    def apply(self, g: GraphState, *nodes: Any) -> Sequence[Built]:
        raise NotImplementedError

    def result(self, nodes: list[Node | None]) -> MatchResult:
        """A MatchResult of this pattern."""
        return MatchResult(self, nodes)

    def decline(self, g: GraphState, node: Node, reason: str) -> MatchResult | None:
        """Records why `node` was not rewritten by this pattern; returns None so `match` can return it."""
        g.ctx.declined[(g.path, node.name, self.name)] = reason
        return None

    def because(self, g: GraphState, node: Node, fact: str) -> None:
        """Records a fact the rewrite of `node` rests on (shown with the rewrite)."""
        g.ctx.facts.setdefault((g.path, node.name), []).append(fact)

    def __repr__(self) -> str:
        return f"{self.name}(priority={self.priority})"


def description(pattern: Pattern) -> str:
    """The first paragraph of a pattern's docstring (its `before -> after` line and conditions)."""
    doc = (type(pattern).__doc__ or "").strip()
    return doc.split("\n\n")[0].replace("\n", " ").strip()
