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

import onnx

from ..graph import node_ids, subgraph_attributes
from ..model import GivenModel, Model, load, value_info_names
from ..model_inference import copy_fields, model_bytes
from .context import Context
from .ir import Node
from .pattern import MatchResult, Pattern
from .record import ModelHeader, RewriteStep, free_inputs
from .result import OptimizationResult, PatternStats
from .scope import all_names, name_nodes
from .size import fit_size, graphs, size_limit
from .state import GraphState

MAX_ROUNDS = 50
SIZE_BUDGET = 0.05  # of the original model's bytes: how much folding may grow it
MIN_SIZE_BUDGET = 64
CONTEXT_NODES = 12  # nodes of context kept on each side of a rewrite for drawing it


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
        self._dispatch: dict[tuple[int, bool, str], list[Pattern]] = {}
        # body path -> (the body proto at its fixpoint, the outer constants it saw)
        self._settled: dict[str, tuple[onnx.GraphProto, frozenset[str]]] = {}

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
            state.refresh_facts()  # what bodies may read of this graph
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
            if not node.captures and not node.has_body() or not state.is_alive(node):
                continue
            outer = frozenset(v.name for v in node.captures if state.is_constant(v.name))
            rewritten: dict[str, onnx.GraphProto] = {}
            for label, body in subgraph_attributes(node.proto):
                path = f"{state.node_path(node)}/{label}"
                known = self._settled.get(path)
                if known is not None and known[0] is body and known[1] == outer:
                    continue
                trusted = state.trust_shapes and node.op_type == "If"
                sub = GraphState(body, self.ctx, path=path, parent=state, trust_shapes=trusted)
                if self.optimize_graph(sub):
                    rewritten[label] = sub.to_graph()
                else:
                    self._settled[path] = (body, outer)
                if self.stopped:
                    break
            if rewritten:
                twin = node.copy()
                for label, body in subgraph_attributes(twin):
                    if label in rewritten:
                        body.CopyFrom(rewritten[label])
                        self._settled[f"{state.node_path(node)}/{label}"] = (body, outer)
                state.replace(node, twin)
                changed = True
            if self.stopped:
                break
        return changed

    def _round(self, state: GraphState, level: int, only_level: bool, round_no: int) -> int:
        state.refresh_facts()
        found: list[tuple[MatchResult, Node, int]] = []
        taken: set[Node] = set()
        stats = self.stats
        facts = self.ctx.facts
        clock = time.perf_counter
        for node in state.nodes():
            op = node.op_type if node.is_onnx() else ""
            key = (state.path, node.name)
            for pattern in self._candidates(level, only_level, op):
                start = clock()
                facts.pop(key, None)
                result = pattern.match(state, node)
                stat = stats[pattern.name]
                stat.seconds += clock() - start
                if result is None:
                    continue
                stat.matches += 1
                nodes = result.present()
                if taken.intersection(nodes):
                    stat.dropped += 1
                    continue
                taken.update(nodes)
                found.append((result, node, state.version))
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
                facts.pop((state.path, anchor.name), None)
                again = result.pattern.match(state, anchor)
                stat.seconds += clock() - start
                if again is None or again.present() != nodes:
                    stat.dropped += 1
                    continue
                result = again
            self._apply(state, result, anchor, round_no)
            applied += 1
        state.reorder()
        return applied

    def _apply(self, state: GraphState, result: MatchResult, anchor: Node, round_no: int) -> None:
        pattern = result.pattern
        start = time.perf_counter()
        nodes = result.present()
        own = set(nodes)
        live = [o for n in nodes for o in n.output if o and state.read_outside(o, own)]
        context_before = _context(state, nodes, live, own)
        position = nodes[-1].pos
        state.begin_rewire_log(nodes)
        built = pattern.apply(state, *result.nodes)
        rewired = state.end_rewire_log()
        kept = [n for n in built if isinstance(n, Node)]
        removed = [n for n in nodes if n not in kept]
        removed_paths = [state.node_path(n) for n in removed]
        state.remove(removed)
        added = state.insert([n for n in built if not isinstance(n, Node)], position)
        released = [v.name for n in removed for v in n.needs()]
        dead = state.dead_producers(released)
        removed_paths.extend(state.node_path(n) for n in dead)
        outputs = [(o, _resolve(o, rewired)) for o in live]
        for old, new in outputs:
            if not state.visible(new):
                raise RuntimeError(f"pattern {pattern.name} left {old!r} (now {new!r}) without a producer in graph "
                                   f"{state.path or 'main'!r}")
        before = [n.proto for n in nodes + dead]
        after = [n.proto for n in kept] + [n.proto for n in added]
        constants = {}
        types = {}
        for name in sorted(free_inputs(before) | free_inputs(after)):
            value = state.constant(name)
            if value is not None:
                constants[name] = value
            else:
                types[name] = state.value_type(name)
        seconds = time.perf_counter() - start
        new_nodes = kept + added
        self.steps.append(RewriteStep(
            index=len(self.steps), pattern=pattern.name, round=round_no, graph=state.path,
            removed=removed_paths, added=[state.node_path(n) for n in added], before_nodes=before,
            after_nodes=after, input_types=types, constants=constants, outputs=outputs,
            output_types=[state.value_type(o) for o in live], header=self.header, seconds=seconds,
            context_before=context_before,
            context_after=_context(state, new_nodes, [new for _, new in outputs], set(new_nodes)),
            facts=list(dict.fromkeys(self.ctx.facts.pop((state.path, anchor.name), []))),
        ))
        stat = self.stats[pattern.name]
        stat.applied += 1
        stat.removed += len(removed_paths)
        stat.added += len(added)
        stat.seconds += seconds


def _context(state: GraphState, nodes: list[Node], outputs: Iterable[str], own: set[Node]) -> list[onnx.NodeProto]:
    """One level of neighbours: producers of what `nodes` read, readers of what they give."""
    picked: dict[Node, None] = {}
    for node in nodes:
        for v in node.needs():
            if v.producer is not None and v.producer not in own:
                picked[v.producer] = None
    for name in outputs:
        for user in state.consumers(name):
            if user not in own:
                picked[user] = None
    return [n.proto for n in picked][:CONTEXT_NODES]


def _without_graph(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of a model's fields but its graph (which the optimizer rebuilds: its initializers are not copied
    twice)."""
    shell = onnx.ModelProto()
    copy_fields(model, shell, skip="graph")
    return shell


def _named(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model itself when every node (bodies too) is named by its static id already, as exporters name them;
    else a copy whose nodes are (copied field by field: a whole-model copy would hold the weights twice at once)."""
    if _has_ids(model.graph):
        return model
    named = _without_graph(model)
    copy_fields(model.graph, named.graph)
    name_nodes(named.graph)
    return named


def _has_ids(graph: onnx.GraphProto) -> bool:
    return all(node.name == node_id and all(_has_ids(body) for _, body in subgraph_attributes(node))
               for node, node_id in zip(graph.node, node_ids(graph)))


def _resolve(name: str, rewired: dict[str, str]) -> str:
    seen = set()
    while name in rewired and name not in seen:
        seen.add(name)
        name = rewired[name]
    return name


def optimize(model: Model | str | bytes | onnx.ModelProto, *, patterns: Iterable[str | Pattern] | None = None,
             exclude: Iterable[str] = (), stop_after: int | None = None,
             max_rounds: int = MAX_ROUNDS, lenient: bool = False) -> OptimizationResult:
    """Rewrites a model with the selected patterns (default: all) until nothing matches. `stop_after=N` applies
    only the first N rewrites (bisection); `exclude` drops patterns by name. The input is never modified.
    `lenient` loads a path, bytes or proto in lenient mode (a Model keeps the mode it was loaded in)."""
    from .patterns import select_patterns

    start = time.perf_counter()
    chosen = select_patterns(patterns, exclude)
    loaded = model if isinstance(model, Model) else load(model, lenient=lenient)
    given = loaded.given or GivenModel(model_bytes(loaded.proto), value_info_names(loaded.proto.graph))
    named = {n.name for g in graphs(loaded.proto.graph) for n in g.node if n.name}
    original = _named(loaded.proto)  # read, never changed
    opsets = {(o.domain if o.domain != "ai.onnx" else ""): o.version for o in original.opset_import}
    ctx = Context(opsets=opsets, ir_version=original.ir_version,
                  size_budget=max(MIN_SIZE_BUDGET, int(given.bytes * SIZE_BUDGET)))
    all_names(original.graph, ctx.names)
    header = ModelHeader(original.ir_version, tuple(original.opset_import), tuple(original.functions))
    driver = Driver(chosen, ctx, header, stop_after=stop_after, max_rounds=max_rounds)
    main = GraphState(original.graph, ctx)  # read, never changed: edits make new protos
    driver.optimize_graph(main)
    optimized = _without_graph(original)
    main.to_graph(optimized.graph)
    fit_size(optimized, size_limit(given.bytes), set(given.value_info), named)
    return OptimizationResult(original, optimized, driver.steps, list(driver.stats.values()), ctx.declined,
                              driver.stopped, driver.rounds, time.perf_counter() - start, chosen,
                              loaded.lenient)
