"""The fixpoint driver: bodies first, priority levels, one round at a time, every applied rewrite recorded.

A round matches every node against the enabled patterns (lowest priority first), keeps the first match of each
node whose nodes no earlier match of the round claimed (overlapping matches are dropped), then applies them one
after the other, re-checking each on the graph as it is at that moment. Level 0 (cleanups) runs until a round
changes nothing; then the next level is enabled (fusions come last), and so on. Bodies of If/Loop/Scan/
SequenceMap are optimized to their own fixpoint before each round of the graph that holds them.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import onnx

from ..graph import GraphIndex, node_ids, subgraph_attributes
from ..model import Model, load
from .pattern import MatchResult, Pattern
from .record import ModelHeader, RewriteStep, free_inputs
from .state import Context, GraphState

MAX_ROUNDS = 50
CONTEXT_NODES = 12  # nodes of context kept on each side of a rewrite for drawing it


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


@dataclass
class OptimizationResult:
    """The original (nodes named by their paths) and optimized models, every rewrite, statistics, declines."""

    original: onnx.ModelProto
    optimized: onnx.ModelProto
    steps: list[RewriteStep]
    stats: list[PatternStats]
    reasons: dict[tuple[str, str, str], str]  # (graph path, node name, pattern) -> why it was declined
    stopped: bool
    rounds: int
    seconds: float
    selected: list[Pattern] = field(default_factory=list, repr=False)

    @property
    def patterns(self) -> list[str]:
        return [p.name for p in self.selected]

    @property
    def declined(self) -> list[Decline]:
        """Why patterns left nodes of the optimized model alone (the last reason each gave for each node)."""
        final = GraphIndex(self.optimized.graph).nodes
        found = []
        for (graph, node, pattern), reason in self.reasons.items():
            path = f"{graph}/{node}" if graph else node
            if path in final:
                found.append(Decline(pattern, path, reason))
        return found

    def removed_paths(self) -> set[str]:
        """Nodes of the original model the optimized one no longer has as they were (for highlighting)."""
        before = set(GraphIndex(self.original.graph).nodes)
        after = set(GraphIndex(self.optimized.graph).nodes)
        touched = {p for s in self.steps for p in s.removed}
        return {p for p in before if p in touched or p not in after}

    def added_paths(self) -> set[str]:
        """Nodes of the optimized model the original did not have as they are (for highlighting)."""
        before = set(GraphIndex(self.original.graph).nodes)
        after = set(GraphIndex(self.optimized.graph).nodes)
        touched = {p for s in self.steps for p in s.added}
        return {p for p in after if p in touched or p not in before}

    def node_counts(self) -> tuple[int, int]:
        """(nodes before, nodes after), bodies included."""
        return len(GraphIndex(self.original.graph).nodes), len(GraphIndex(self.optimized.graph).nodes)

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
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        before, after = self.node_counts()
        return {
            "patterns": self.patterns, "stopped": self.stopped, "rounds": self.rounds, "seconds": self.seconds,
            "nodes_before": before, "nodes_after": after,
            "stats": [asdict(s) for s in self.stats],
            "steps": [s.to_dict() for s in self.steps],
            "declined": [asdict(d) for d in self.declined],
        }


def name_nodes(graph: onnx.GraphProto) -> None:
    """Gives every node (bodies too) its static id as name, so node paths survive the rewrites."""
    for node, node_id in zip(graph.node, node_ids(graph)):
        node.name = node_id
        for _, body in subgraph_attributes(node):
            name_nodes(body)


def _all_names(graph: onnx.GraphProto, names: set[str]) -> None:
    names.update(i.name for i in graph.input)
    names.update(o.name for o in graph.output)
    names.update(v.name for v in graph.value_info)
    names.update(t.name for t in graph.initializer)
    for node in graph.node:
        names.add(node.name)
        names.update(node.input)
        names.update(node.output)
        for _, body in subgraph_attributes(node):
            _all_names(body, names)


def _copy(node: onnx.NodeProto) -> onnx.NodeProto:
    twin = onnx.NodeProto()
    twin.CopyFrom(node)
    return twin


class Driver:
    """Runs a list of patterns over every graph of a model; see the module docstring."""

    def __init__(self, patterns: list[Pattern], ctx: Context, header: ModelHeader, *,
                 stop_after: int | None = None, max_rounds: int = MAX_ROUNDS) -> None:
        self.patterns = patterns
        self.ctx = ctx
        self.header = header
        self.stop_after = stop_after
        self.max_rounds = max_rounds
        self.levels = sorted({p.priority for p in patterns}) or [0]
        self.stats = {p.name: PatternStats(p.name, p.priority) for p in patterns}
        self.steps: list[RewriteStep] = []
        self.stopped = False
        self.rounds = 0
        self._dispatch: dict[tuple[int, str], list[Pattern]] = {}
        self._settled: dict[int, tuple[onnx.GraphProto, frozenset[str]]] = {}

    def _candidates(self, level: int, only_level: bool, op_type: str) -> list[Pattern]:
        """Patterns to try on a node, lowest priority first: those up to `level`, or only those of `level`."""
        key = (level, only_level, op_type)
        found = self._dispatch.get(key)
        if found is None:
            found = [p for p in self.patterns if (p.priority == level if only_level else p.priority <= level)
                     and (not p.op_types or op_type in p.op_types)]
            found.sort(key=lambda p: p.priority)
            self._dispatch[key] = found
        return found

    def optimize_graph(self, state: GraphState) -> bool:
        """Optimizes one graph (bodies first) to its fixpoint; True when anything changed."""
        changed = False
        level = 0
        raised = False  # the level was just raised: lower ones found nothing on this very graph
        for round_no in range(self.max_rounds):
            if self.stopped:
                break
            bodies_changed = self._optimize_bodies(state)
            changed |= bodies_changed
            if self.stopped:
                break
            applied = self._round(state, self.levels[level], raised and not bodies_changed, round_no)
            self.rounds += 1
            if applied:
                changed = True
                raised = False
                continue
            if level + 1 == len(self.levels):
                break
            level += 1
            raised = True
        return changed

    def _optimize_bodies(self, state: GraphState) -> bool:
        """Optimizes each body of the graph's nodes, unless it is settled: already at its fixpoint with the
        same outer constants (the only outer facts that can enable a body rewrite, along with outer types).
        A node whose bodies changed is replaced by a copy holding the new bodies."""
        changed = False
        for node in state.nodes():
            if not len(node.attribute) or not state.is_alive(node):
                continue
            outer = frozenset(n for n in state.captures_of(node) if state.is_constant(n))
            rewritten: dict[str, onnx.GraphProto] = {}
            for label, body in subgraph_attributes(node):
                known = self._settled.get(id(body))
                if known is not None and known[1] == outer:
                    continue
                trusted = state.trust_shapes and node.op_type == "If"
                sub = GraphState(body, self.ctx, path=f"{state.node_path(node)}/{label}", parent=state,
                                 trust_shapes=trusted)
                if self.optimize_graph(sub):
                    rewritten[label] = sub.to_graph()
                else:
                    self._settled[id(body)] = (body, outer)  # the reference keeps the id from being reused
                if self.stopped:
                    break
            if rewritten:
                twin = _copy(node)
                for label, body in subgraph_attributes(twin):
                    if label in rewritten:
                        body.CopyFrom(rewritten[label])
                        self._settled[id(body)] = (body, outer)
                state.replace(node, twin)
                changed = True
            if self.stopped:
                break
        return changed

    def _round(self, state: GraphState, level: int, only_level: bool, round_no: int) -> int:
        found: list[tuple[MatchResult, onnx.NodeProto, int]] = []
        matched: list[MatchResult] = []
        taken: set[int] = set()
        stats = self.stats
        clock = time.perf_counter
        for node in state.nodes():
            op = node.op_type if node.domain in ("", "ai.onnx") else ""
            for pattern in self._candidates(level, only_level, op):
                start = clock()
                result = pattern.match(state, node, matched)
                stat = stats[pattern.name]
                stat.seconds += clock() - start
                if result is None:
                    continue
                stat.matches += 1
                ids = {id(n) for n in result.present()}
                if ids & taken:
                    stat.dropped += 1
                    continue
                taken |= ids
                found.append((result, node, state.version))
                matched.append(result)
                break
        applied = 0
        for result, anchor, version in found:
            if self.stop_after is not None and len(self.steps) >= self.stop_after:
                self.stopped = True
                break
            stat = stats[result.pattern.name]
            nodes = result.present()
            if version != state.version:  # something changed since the match: check it again
                if not all(state.is_alive(n) for n in nodes):
                    stat.dropped += 1
                    continue
                start = clock()
                again = result.pattern.match(state, anchor, [])
                stat.seconds += clock() - start
                if again is None or [id(n) for n in again.present()] != [id(n) for n in nodes]:
                    stat.dropped += 1
                    continue
                result = again
            self._apply(state, result, round_no)
            applied += 1
        state.reorder()
        return applied

    def _apply(self, state: GraphState, result: MatchResult, round_no: int) -> None:
        pattern = result.pattern
        start = time.perf_counter()
        nodes = result.present()
        ids = {id(n) for n in nodes}
        live = [o for n in nodes for o in n.output if o and state.read_outside(o, ids)]
        context_before = _context(state, nodes, live, ids)
        at = result.insert_at if result.insert_at is not None and state.is_alive(result.insert_at) else nodes[-1]
        position = state.position(at)
        state.begin_rewire_log(nodes)
        new_nodes = (result.apply or pattern.apply)(state, *result.nodes)
        rewired = state.end_rewire_log()
        new_ids = {id(n) for n in new_nodes}
        removed = [n for n in nodes if id(n) not in new_ids]
        added = [n for n in new_nodes if id(n) not in ids]
        removed_paths = [state.node_path(n) for n in removed]
        state.remove(removed)
        state.insert(added, position)
        released = [i for n in removed for i in n.input if i]
        released.extend(c for n in removed for c in state.captures_of(n))
        dead = state.dead_producers(released)
        removed_paths.extend(state.node_path(n) for n in dead)
        outputs = [(o, _resolve(o, rewired)) for o in live]
        for old, new in outputs:
            if not state.visible(new):
                raise RuntimeError(f"pattern {pattern.name} left {old!r} (now {new!r}) without a producer in graph "
                                   f"{state.path or 'main'!r}")
        before = nodes + dead
        constants = {}
        types = {}
        for name in sorted(free_inputs(before) | free_inputs(new_nodes)):
            value = state.constant(name)
            if value is not None:
                constants[name] = value
            else:
                types[name] = state.value_type(name)
        seconds = time.perf_counter() - start
        self.steps.append(RewriteStep(
            index=len(self.steps), pattern=pattern.name, round=round_no, graph=state.path,
            removed=removed_paths, added=[state.node_path(n) for n in added], before_nodes=before,
            after_nodes=list(new_nodes), input_types=types, constants=constants, outputs=outputs,
            output_types=[state.value_type(o) for o in live], header=self.header, seconds=seconds,
            context_before=context_before,
            context_after=_context(state, new_nodes, [new for _, new in outputs], new_ids),
        ))
        stat = self.stats[pattern.name]
        stat.applied += 1
        stat.removed += len(removed_paths)
        stat.added += len(added)
        stat.seconds += seconds


def _context(state: GraphState, nodes: list[onnx.NodeProto], outputs: Iterable[str],
             own: set[int]) -> list[onnx.NodeProto]:
    """One level of neighbours: producers of what `nodes` read, readers of what they give."""
    picked: dict[int, onnx.NodeProto] = {}
    for name in free_inputs(nodes):
        p = state.producer(name)
        if p is not None and id(p) not in own:
            picked[id(p)] = p
    for name in outputs:
        for user in state.consumers(name):
            if id(user) not in own:
                picked[id(user)] = user
    return list(picked.values())[:CONTEXT_NODES]


def _resolve(name: str, rewired: dict[str, str]) -> str:
    seen = set()
    while name in rewired and name not in seen:
        seen.add(name)
        name = rewired[name]
    return name


def optimize(model: Model | str | bytes | onnx.ModelProto, *, patterns: Iterable[str | Pattern] | None = None,
             exclude: Iterable[str] = (), stop_after: int | None = None,
             max_rounds: int = MAX_ROUNDS) -> OptimizationResult:
    """Rewrites a model with the selected patterns (default: all) until nothing matches. `stop_after=N` applies
    only the first N rewrites (bisection); `exclude` drops patterns by name. The input is never modified."""
    from .patterns import select_patterns

    start = time.perf_counter()
    chosen = select_patterns(patterns, exclude)
    loaded = model if isinstance(model, Model) else load(model)
    work = onnx.ModelProto()
    work.CopyFrom(loaded.proto)
    name_nodes(work.graph)
    original = onnx.ModelProto()
    original.CopyFrom(work)
    opsets = {(o.domain if o.domain != "ai.onnx" else ""): o.version for o in work.opset_import}
    ctx = Context(opsets=opsets, ir_version=work.ir_version)
    _all_names(work.graph, ctx.names)
    header = ModelHeader(work.ir_version, tuple(work.opset_import), tuple(work.functions))
    driver = Driver(chosen, ctx, header, stop_after=stop_after, max_rounds=max_rounds)
    main = GraphState(work.graph, ctx)
    driver.optimize_graph(main)
    optimized = onnx.ModelProto()
    optimized.CopyFrom(work)
    optimized.graph.CopyFrom(main.to_graph())
    return OptimizationResult(original, optimized, driver.steps, list(driver.stats.values()), ctx.declined,
                              driver.stopped, driver.rounds, time.perf_counter() - start, chosen)
