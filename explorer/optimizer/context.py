"""What all graphs of one optimization share."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..proto.weights import WeightSource

RewriteKey = tuple[str, str, tuple[str, ...]]  # (graph path, pattern, names of the nodes a match holds)


@dataclass
class Context:
    """What all graphs of one optimization share: every name in use, opsets, and why candidates were declined."""

    opsets: dict[str, int]
    ir_version: int
    names: set[str] = field(default_factory=set)
    size_budget: int = 0  # bytes rewrites may still add to the model (constant folding spends it)
    declined: dict[tuple[str, str, str], str] = field(default_factory=dict)
    facts: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (graph, node) -> facts a match used
    # (graph, condition) -> its value and why, for rank checks decided by a branch (a value never changes)
    conditions: dict[tuple[str, str], tuple[bool, str] | None] = field(default_factory=dict)
    # rewrites not to apply, each with why: (graph, pattern, names of the nodes it matched) -> the reason
    refused: dict[RewriteKey, str] = field(default_factory=dict)
    # the sources of big weights rewrites computed, which the optimized model's tensors point into (held here and
    # by the result: a mapped tensor reads its source while it lives)
    weights: list[WeightSource] = field(default_factory=list)
    _counters: dict[str, itertools.count] = field(default_factory=dict)

    def fresh(self, prefix: str) -> str:
        """A name used nowhere in the model (values and nodes of every graph), starting with `prefix`."""
        prefix = prefix or "v"
        counter = self._counters.setdefault(prefix, itertools.count())
        while True:
            name = f"{prefix}__{next(counter)}"
            if name not in self.names:
                self.names.add(name)
                return name
