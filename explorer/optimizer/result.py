"""What one optimization returns: the original and optimized models, every rewrite, statistics and declines."""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import onnx

from ..model.model import Model, load
from ..model.model_files import save_model
from ..proto.graph_index import GraphIndex
from ..proto.weights import WeightSource
from .context import RewriteKey
from .pattern import Pattern
from .record import RewriteStep

_QUOTED = re.compile(r"'[^']*'")


@dataclass
class PatternStats:
    """Per pattern: matches found, rewrites applied, matches dropped (overlap/stale), nodes removed/added, time."""

    pattern: str
    priority: int
    matches: int = 0
    applied: int = 0
    dropped: int = 0
    removed: int = 0
    added: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Decline:
    """Why a pattern left a node of the optimized model alone."""

    pattern: str
    node: str
    reason: str


@dataclass(frozen=True)
class OnnxruntimeCheck:
    """Whether onnxruntime loads the optimized model as a user loads it (its own type and shape inference in
    every body): status 'loads', 'refused' (the original loads: the optimization failed), 'original refused'
    (onnxruntime refuses the original too) or 'not checked' (the detail says why). `refused` lists the rewrites
    left out because onnxruntime refused their result, `value_info_dropped` whether the types the optimizer
    inferred were left out for the same reason."""

    status: str
    detail: str = ""
    refused: tuple[str, ...] = ()  # each rewrite left out, described with onnxruntime's reason
    value_info_dropped: bool = False
    seconds: float = 0.0

    def lines(self) -> list[str]:
        head = {"loads": "onnxruntime loads the optimized model",
                "refused": "onnxruntime refuses the optimized model (the original loads): the optimization failed",
                "original refused": "onnxruntime refuses the original model too: the optimized one is not checked",
                "not checked": "onnxruntime was not asked whether it loads the optimized model"}[self.status]
        out = [head + (f": {self.detail}" if self.detail else "") + f" ({self.seconds:.2f} s)"]
        out += [f"  not applied, onnxruntime refuses its result: {r}" for r in self.refused]
        if self.value_info_dropped:
            out.append("  the value types the optimizer inferred are left out: onnxruntime refused them")
        return out


@dataclass
class OptimizationResult:
    """The original (as given: its node paths are GraphIndex's, which the rewrites' paths use) and optimized
    models, every rewrite, statistics, declines."""

    original: onnx.ModelProto
    optimized: onnx.ModelProto
    steps: list[RewriteStep]
    stats: list[PatternStats]
    reasons: dict[tuple[str, str, str], str]  # (graph path, node name, pattern) -> why it was declined
    stopped: bool
    rounds: int
    seconds: float
    selected: list[Pattern] = field(default_factory=list, repr=False)
    lenient: bool = False  # the original was loaded in lenient mode: the proofs load both models that way
    # node path in the rewrites -> its GraphIndex path in `optimized`, where they differ (the names the optimizer
    # gave were dropped to keep the file small, so GraphIndex names those nodes by position)
    moved: dict[str, str] = field(default_factory=dict)
    model: Model | None = field(default=None, repr=False)  # the loaded original (as_given: the user's file)
    refused: dict[RewriteKey, str] = field(default_factory=dict)  # rewrites not applied, each with why
    onnxruntime: OnnxruntimeCheck | None = None  # whether onnxruntime loads `optimized` (None: not asked yet)
    inferred_value_info_dropped: bool = False  # value_info the original did not declare were left out of optimized
    # the sources of the big weights rewrites computed, which `optimized` points into (see Knowledge.make_weight)
    weights: list[WeightSource] = field(default_factory=list, repr=False)
    # what pages ask of the result again and again, made once (neither model's nodes change once it is made)
    _optimized_model: Model | None = field(default=None, init=False, repr=False, compare=False)
    _paths: tuple[frozenset[str], dict[str, str]] | None = field(default=None, init=False, repr=False, compare=False)

    def optimized_model(self) -> Model:
        """The optimized model loaded (as the original was: lenient or not), once."""
        if self._optimized_model is None:
            self._optimized_model = load(self.optimized, lenient=self.lenient)
        return self._optimized_model

    def original_as_given(self) -> onnx.ModelProto:
        """The original exactly as the user's file has it (what onnxruntime judges), without loading's types."""
        return self.model.as_given() if self.model is not None else self.original

    def declared_value_info(self) -> set[str]:
        """Names the original itself gives value_info entries (the optimizer's other entries are inferred)."""
        given = self.model.given if self.model is not None else None
        return set(given.value_info) if given is not None else set()

    @property
    def external(self) -> bool:
        """Whether the original kept its weights in external data files (the result is written that way too)."""
        given = self.model.given if self.model is not None else None
        return given is not None and given.external

    def save(self, path: str | os.PathLike) -> list[Path]:
        """Writes the optimized model to `path`, with its weights in an external data file beside it when the
        original had external data or the result is over 2 GiB; the files written."""
        return save_model(self.optimized, path, external=True if self.external else None)

    @property
    def patterns(self) -> list[str]:
        return [p.name for p in self.selected]

    @property
    def declined(self) -> list[Decline]:
        """Why patterns left nodes of the optimized model alone (the last reason each gave for each node)."""
        final = self._final_paths()
        found = []
        for (graph, node, pattern), reason in self.reasons.items():
            path = f"{graph}/{node}" if graph else node
            if path in final:
                found.append(Decline(pattern, final[path], reason))
        return found

    def _final_paths(self) -> dict[str, str]:
        """Each node of the optimized model: its path in the rewrites -> its GraphIndex path there."""
        return self._node_paths()[1]

    def _node_paths(self) -> tuple[frozenset[str], dict[str, str]]:
        """(the original's node paths, _final_paths), made once."""
        if self._paths is None:
            back = {after: path for path, after in self.moved.items()}
            self._paths = (frozenset(GraphIndex(self.original.graph).nodes),
                           {back.get(p, p): p for p in GraphIndex(self.optimized.graph).nodes})
        return self._paths

    def decline_reasons(self, top: int = 3) -> list[tuple[str, int, list[tuple[str, int]]]]:
        """Per pattern that left nodes of the optimized model alone: (pattern, nodes declined, its `top` most
        common reasons with their counts), most declines first. Quoted value names in reasons are elided, so
        declines for the same cause on different values count together."""
        reasons: dict[str, Counter[str]] = {}
        for decline in self.declined:
            reasons.setdefault(decline.pattern, Counter())[_QUOTED.sub("'…'", decline.reason)] += 1
        rows = [(pattern, sum(c.values()), c.most_common(top)) for pattern, c in reasons.items()]
        return sorted(rows, key=lambda row: (-row[1], row[0]))

    def removed_paths(self) -> set[str]:
        """Nodes of the original model the optimized one no longer has as they were (for highlighting)."""
        before, after = self._node_paths()
        touched = {p for s in self.steps for p in s.removed}
        return {p for p in before if p in touched or p not in after}

    def added_paths(self) -> set[str]:
        """Nodes of the optimized model the original did not have as they are (for highlighting), by their
        GraphIndex paths in the optimized model."""
        before, after = self._node_paths()
        touched = {p for s in self.steps for p in s.added}
        return {drawn for p, drawn in after.items() if p in touched or p not in before}

    def node_counts(self) -> tuple[int, int]:
        """(nodes before, nodes after), bodies included."""
        before, after = self._node_paths()
        return len(before), len(after)

    def stats_table(self, all_patterns: bool = False) -> str:
        """A text table: per pattern, matches, applied, dropped, nodes removed/added, milliseconds."""
        head = f"{'pattern':24s} {'prio':>4s} {'matches':>7s} {'applied':>7s} {'dropped':>7s} " \
               f"{'removed':>7s} {'added':>6s} {'ms':>8s}"
        lines = [head, "-" * len(head)]
        rows = [s for s in self.stats if all_patterns or s.matches or s.applied]
        for s in rows:
            lines.append(f"{s.pattern:24s} {s.priority:4d} {s.matches:7d} {s.applied:7d} {s.dropped:7d} "
                         f"{s.removed:7d} {s.added:6d} {s.seconds * 1000:8.1f}")
        before, after = self.node_counts()
        lines.append("-" * len(head))
        lines.append(f"{len(self.steps)} rewrites in {self.rounds} rounds, {self.seconds:.3f} s; "
                     f"nodes {before} -> {after}{' (stopped early)' if self.stopped else ''}")
        if self.onnxruntime is not None:
            lines.extend(self.onnxruntime.lines())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        before, after = self.node_counts()
        return {
            "patterns": self.patterns, "stopped": self.stopped, "rounds": self.rounds, "seconds": self.seconds,
            "nodes_before": before, "nodes_after": after,
            "stats": [asdict(s) for s in self.stats],
            "steps": [s.to_dict() for s in self.steps],
            "declined": [asdict(d) for d in self.declined],
            "onnxruntime": None if self.onnxruntime is None else asdict(self.onnxruntime),
        }
