"""The fixpoint driver: bodies first, priority levels, rounds over a work list, every applied rewrite recorded.

A round matches nodes against the enabled patterns (lowest priority first), keeps the first match of each node
whose nodes no earlier match of the round claimed (overlapping matches are dropped), then applies them one
after the other, re-checking each on the graph as it is at that moment. Level 0 (cleanups) runs until a round
changes nothing; then the next level is enabled (fusions come last), and so on. Bodies of If/Loop/Scan/
SequenceMap are optimized to their own fixpoint before each round of the graph that holds them.

The first round of a level visits every node; later rounds visit only the work list: nodes near an edit (within
NEIGHBOURHOOD steps of producer -> reader links from a node added or removed), readers of values whose shape or
known contents the propagation changed, and matches a round dropped. A match depends only on such things, so
the other nodes would match as they did before, that is, not at all. Before it ends, the driver checks that
with one more round over every node (which finds nothing unless a pattern looks further than NEIGHBOURHOOD).
"""
from __future__ import annotations

import time
from collections.abc import Iterable

import onnx

from ..budgets import OPTIMIZER_ROUNDS
from ..proto.graph import subgraph_attributes
from . import symbolic
from .context import Context
from .ir import Node
from .pattern import MatchResult, Pattern
from .record import ModelHeader, RewriteStep, free_inputs
from .result import PatternStats
from .state import GraphState
from .worklist import near_edits

CONTEXT_NODES = 12  # nodes of context kept on each side of a rewrite for drawing it


class Driver:
    """Runs a list of patterns over every graph of a model; see the module docstring."""

    def __init__(self, patterns: list[Pattern], ctx: Context, header: ModelHeader, *,
                 stop_after: int | None = None, max_rounds: int = OPTIMIZER_ROUNDS) -> None:
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
        self.found_by_check = 0  # rewrites only the closing round over every node found (0 unless a pattern
        # looks further than NEIGHBOURHOOD)
        self._dispatch: dict[tuple[int, bool, str], list[Pattern]] = {}
        # body path -> (the body proto at its fixpoint, what it knew of the outer values it reads)
        self._settled: dict[str, tuple[onnx.GraphProto, tuple]] = {}

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
        work: set[Node] | None = None  # the nodes the next round matches; None: every node
        checking = False
        unchecked = False  # a round matched only the work list since the last round over every node
        for round_no in range(self.max_rounds):
            if self.stopped:
                break
            state.refresh_facts()  # what bodies may read of this graph
            bodies_changed = state.holders > 0 and self._optimize_bodies(state)
            changed |= bodies_changed
            if self.stopped:
                break
            state.refresh_facts()
            near = near_edits(state)
            if work is not None:
                work |= near
            only_level = raised and not bodies_changed
            unchecked = work is not None or (unchecked and only_level)
            applied, work = self._round(state, self.levels[level], only_level, round_no, work)
            self.rounds += 1
            if checking:
                self.found_by_check += applied
                checking = False
            if applied:
                changed = True
                raised = False
                continue
            work = None
            if level + 1 < len(self.levels):
                level += 1
                raised = True
            elif unchecked:  # a last round over every node with every pattern (see the module docstring)
                raised = False
                checking = True
            else:
                break
        return changed

    def _optimize_bodies(self, state: GraphState) -> bool:
        """Optimizes each body of the graph's nodes, unless it is settled: already at its fixpoint with the
        same facts about the outer values its node and bodies read (constness, shapes, known contents: the
        outer facts a body rewrite can depend on, along with types, which a name keeps). A node whose bodies
        changed is replaced by a copy holding the new bodies."""
        changed = False
        for node in state.nodes():
            if not node.captures and not node.has_body() or not state.is_alive(node):
                continue
            outer = symbolic.outer_facts(state, [*filter(None, node.input), *(v.name for v in node.captures)])
            rewritten: dict[str, onnx.GraphProto] = {}
            for label, body in subgraph_attributes(node.proto):
                path = f"{state.node_path(node)}/{label}"
                known = self._settled.get(path)
                if known is not None and known[0] is body and known[1] == outer:
                    continue
                trusted = state.trust_shapes and node.op_type == "If"
                sub = GraphState(body, self.ctx, path=path, parent=state, trust_shapes=trusted, owner=node)
                if self.optimize_graph(sub):
                    rewritten[label] = sub.to_graph()
                else:
                    self._settled[path] = (body, outer)
                sub.unlink()
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

    def _round(self, state: GraphState, level: int, only_level: bool, round_no: int,
               work: set[Node] | None) -> tuple[int, set[Node]]:
        """Matches the nodes of `work` (every node when None), applies what it can; returns the rewrites applied
        and the nodes whose matches were dropped (to match again next round)."""
        state.refresh_facts()
        found: list[tuple[MatchResult, Node, int]] = []
        taken: set[Node] = set()
        stats = self.stats
        facts = self.ctx.facts
        refused = self.ctx.refused
        clock = time.perf_counter
        dropped: set[Node] = set()
        tries: dict[str, list[tuple[Pattern, PatternStats]]] = {}  # operator -> patterns to try, their stats
        nodes = state.nodes()
        for node in nodes if work is None else [n for n in nodes if n in work]:
            op = node.op_type if node.is_onnx() else ""
            candidates = tries.get(op)
            if candidates is None:
                candidates = tries[op] = [(p, stats[p.name]) for p in self._candidates(level, only_level, op)]
            key = (state.path, node.name)
            for pattern, stat in candidates:
                start = clock()
                facts.pop(key, None)
                result = pattern.match(state, node)
                stat.seconds += clock() - start
                if result is None:
                    continue
                stat.matches += 1
                matched = result.present()
                if refused and (why := refused.get((state.path, pattern.name, tuple(n.name for n in matched)))):
                    pattern.decline(state, node, why)
                    continue
                if taken.intersection(matched):
                    stat.dropped += 1
                    dropped.add(node)
                    continue
                taken.update(matched)
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
                dropped.add(anchor)
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
        return applied, dropped

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
        before = nodes + dead
        new_nodes = kept + added
        constants = {}
        types = {}
        for name in sorted(free_inputs(before) | free_inputs(new_nodes)):
            source = state.constant_source(name)
            if source is not None:
                constants[name] = source
            else:
                types[name] = state.value_type(name)
        seconds = time.perf_counter() - start
        self.steps.append(RewriteStep(
            index=len(self.steps), pattern=pattern.name, round=round_no, graph=state.path,
            removed=removed_paths, added=[state.node_path(n) for n in added], matched=tuple(n.name for n in nodes),
            before_nodes=[n.proto for n in before],
            after_nodes=[n.proto for n in new_nodes], input_types=types, constants=constants, outputs=outputs,
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


def _resolve(name: str, rewired: dict[str, str]) -> str:
    seen = set()
    while name in rewired and name not in seen:
        seen.add(name)
        name = rewired[name]
    return name
