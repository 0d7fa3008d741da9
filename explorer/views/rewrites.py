"""What the Optimizer page draws of an optimization: the patterns with their one-line rules, statistics rows,
and the overlays marking removed and added nodes on whole models and on one rewrite's neighbourhood."""
from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..model.model import Model
from ..optimizer import OptimizationResult, RewriteStep, default_patterns
from .builder import Drawing
from .dot import model_to_dot
from .draw_facts import ModelFacts
from .draw_plan import default_max_boxes
from .overlays import RewriteOverlay


def pattern_rules() -> dict[str, str]:
    """pattern name -> the first line of its docstring (its `before -> after` rule)."""
    return {p.name: (type(p).__doc__ or "").strip().splitlines()[0] for p in default_patterns()}


def stats_rows(result: OptimizationResult, all_patterns: bool = False) -> list[dict[str, Any]]:
    """One row per pattern that matched (or every selected pattern), milliseconds instead of seconds."""
    rows = []
    for stats in result.stats:
        if all_patterns or stats.matches or stats.applied:
            row = asdict(stats)
            row["ms"] = round(row.pop("seconds") * 1e3, 2)
            rows.append(row)
    return rows


def step_rows(result: OptimizationResult) -> list[dict[str, Any]]:
    """One row per applied rewrite: index, pattern, round, graph, removed and added nodes, and why it was valid
    (the shape facts it used)."""
    return [{"#": step.index, "pattern": step.pattern, "round": step.round, "graph": step.graph or "main",
             "removed": ", ".join(step.removed), "added": ", ".join(step.added), "why": "; ".join(step.facts)}
            for step in result.steps]


def decline_rows(result: OptimizationResult) -> list[dict[str, Any]]:
    """One row per pattern and common reason it declined nodes of the optimized model: what blocked a
    simplification, most frequent first."""
    return [{"pattern": pattern, "nodes declined": total, "reason": reason, "times": count}
            for pattern, total, reasons in result.decline_reasons() for reason, count in reasons]


def result_overlays(result: OptimizationResult) -> tuple[RewriteOverlay, RewriteOverlay]:
    """(before, after): removed nodes marked on the original, added nodes on the optimized model. Kept apart
    because a rewrite may replace a node under its own name (hoisting rebuilds a Loop/Scan)."""
    return (RewriteOverlay(removed=frozenset(result.removed_paths())),
            RewriteOverlay(added=frozenset(result.added_paths())))


def step_overlays(step: RewriteStep) -> tuple[RewriteOverlay, RewriteOverlay]:
    """The same for one rewrite drawn from `step.neighbourhood()`: a flat model whose node paths are the node
    names, so the graph prefix of the step's paths is dropped."""
    prefix = f"{step.graph}/" if step.graph else ""
    return (RewriteOverlay(removed=frozenset(p[len(prefix):] for p in step.removed)),
            RewriteOverlay(added=frozenset(p[len(prefix):] for p in step.added)))


# nodes: a model of up to this many is drawn whole, before and after, when the Optimizer page opens (gtcrn's 1,786
# nodes drawn twice cost its first opening graphviz's two layouts and the browser two large drawings, about a second)
WHOLE_MODEL_LIMIT = 1000


def whole_models(result: OptimizationResult, original: Model) -> tuple[Drawing, Drawing]:
    """The original model (`original`, loaded) with the nodes `result` removed marked, and the optimized one with
    those it added marked, at the same expansion (side_by_side)."""
    removed, added = result_overlays(result)
    return side_by_side(original, result.optimized_model(), removed, added, edge_labels=None,
                        max_boxes=default_max_boxes(len(original.index.nodes)))


def side_by_side(before: Model, after: Model, removed: RewriteOverlay, added: RewriteOverlay,
                 **options: Any) -> tuple[Drawing, Drawing]:
    """The original (removed nodes marked) and the optimized model (added ones marked) drawn at the same
    expansion: a body or layer open on either side (by the default rule, or to show a mark) is open on both where
    both have it, so that a body the rewrites shrank is not drawn collapsed before and open after."""
    first = model_to_dot(before, overlay=removed, **options)
    second = model_to_dot(after, overlay=added, **options)
    bodies = first.bodies | second.bodies
    scopes = first.scopes | second.scopes
    if (bodies, scopes) == (first.bodies, first.scopes) == (second.bodies, second.scopes):
        return first, second

    def rules(model: Model) -> dict[str, Any]:
        facts = ModelFacts.of(model)
        known = {key for graph in model.index.graphs.values() for key in facts.tree(graph).scopes}
        return {"expand": {path: path in bodies for path in model.index.graphs if path},
                "scopes": {key: key in scopes for key in known}}

    return (model_to_dot(before, overlay=removed, **{**options, **rules(before)}),
            model_to_dot(after, overlay=added, **{**options, **rules(after)}))
