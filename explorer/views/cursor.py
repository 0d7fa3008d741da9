"""Moving a cursor over a trace's events, and where an event sits among nested loops and branches."""
from __future__ import annotations

import weakref
from dataclasses import dataclass

from ..model.model import Model
from ..proto.graph import GENERATION_OPS, NodeRef
from ..trace.trace import Event, Trace
from .draw_facts import ModelFacts
from .labels import op_title

ITERATING_OPS = frozenset({"Loop", "Scan", "SequenceMap"}) | GENERATION_OPS


@dataclass(frozen=True)
class Crumb:
    """One level of an event's location: an enclosing node (with the iteration or branch it was in), a module of the
    layer the node belongs to (op_type "module", its path the module path), or the node itself (last crumb; its
    `detail` says which branch an If took, else it is empty)."""

    path: str
    op_type: str
    label: str  # e.g. "Scan 'enc'"
    detail: str = ""  # e.g. "iteration 3", "then_branch"

    @property
    def text(self) -> str:
        return f"{self.label} · {self.detail}" if self.detail else self.label


def node_label(node: NodeRef) -> str:
    """`Op 'name'` for a named node, else `Op 'id'` (the last segment of its path)."""
    return op_title(node.proto, node.name or node.path.rsplit("/", 1)[-1])


def ancestors(model: Model, path: str) -> list[tuple[NodeRef, str]]:
    """(enclosing node, body attribute) pairs of a node, outermost first."""
    chain = [(model.node(g.owner), g.attribute or "") for g in model.index.enclosing(model.node(path).graph.path)
             if g.owner is not None]
    return chain[::-1]


def breadcrumb(model: Model, event: Event) -> list[Crumb]:
    """Where an event ran, e.g. `Scan 'enc' · iteration 3 › Loop 'inner' · iteration 1 › Add`, or
    `transformer › h.0 › attn › MatMul` in a layer."""
    crumbs: list[Crumb] = []
    depth = 0
    for owner, attribute in ancestors(model, event.node):
        if owner.op_type in ITERATING_OPS and depth < len(event.iteration):
            detail = f"iteration {event.iteration[depth]}"
            depth += 1
        else:
            detail = attribute
        crumbs.append(Crumb(owner.path, owner.op_type, node_label(owner), detail))
    node = model.node(event.node)
    module = ModelFacts.of(model).module_of(node.path)
    for depth, part in enumerate(module.split("/") if module else ()):  # the layer it belongs to, level by level
        crumbs.append(Crumb("/".join(module.split("/")[:depth + 1]), "module", part))
    taken = event.info.get("branch")
    crumbs.append(Crumb(node.path, node.op_type, op_title(node.proto), f"took {taken}" if taken else ""))
    return crumbs


def breadcrumb_text(model: Model, event: Event) -> str:
    return " › ".join(c.text for c in breadcrumb(model, event))


def loop_levels(model: Model, path: str) -> list[tuple[NodeRef, str]]:
    """The Loop/Scan/SequenceMap nodes enclosing a node with the body attribute it lives in, outermost first:
    level k is iteration index k of the node's events."""
    return [(owner, attribute) for owner, attribute in ancestors(model, path) if owner.op_type in ITERATING_OPS]


def move_iteration(model: Model, trace: Trace, index: int, level: int, step: int) -> int | None:
    """The event `step` iterations away (+1 next, -1 previous) in the loop at `level` (0 the outermost) around
    event `index`: the same node at the same inner iterations, else the same node's first run in that
    iteration, else that iteration's first event. None when there is no such iteration."""
    event = trace.events[index]
    levels = loop_levels(model, event.node)
    if not 0 <= level < min(len(levels), len(event.iteration)):
        return None
    here = event.iteration
    target = here[:level] + (here[level] + step,)
    if target[-1] < 0:
        return None
    depth = level + 1
    same = [e for e in trace.events_of(event.node) if e.iteration[:depth] == target]
    exact = next((e for e in same if e.iteration[depth:] == here[depth:]), None)
    if exact is not None or same:
        return (exact or same[0]).index
    owner, attribute = levels[level]
    inside = f"{owner.path}/{attribute}/"
    found = None
    events = trace.events[index + 1:] if step > 0 else trace.events[index - 1::-1] if index else []
    for other in events:
        if other.iteration[:depth] == target and other.node.startswith(inside):
            if step > 0:
                return other.index
            found = other.index
        elif found is not None or (other.node == owner.path and other.iteration == here[:level]):
            break  # left the iteration, or this execution of the loop is over
    return found


def next_iteration(model: Model, trace: Trace, index: int) -> int | None:
    """The event of the same node in the next iteration of its innermost enclosing loop (or, when the node did
    not run there, that iteration's first event). None at top level or in the last iteration."""
    return move_iteration(model, trace, index, len(trace.events[index].iteration) - 1, +1)


def previous_iteration(model: Model, trace: Trace, index: int) -> int | None:
    """Mirror of `next_iteration`: the same node in the previous iteration of its innermost loop."""
    return move_iteration(model, trace, index, len(trace.events[index].iteration) - 1, -1)


def next_execution(trace: Trace, index: int, node_path: str) -> int | None:
    """The next event (after `index`) of a node, or None."""
    for event in trace.events_of(node_path):
        if event.index > index:
            return event.index
    return None


_FIRST_NONFINITE: weakref.WeakKeyDictionary[Trace, tuple[int, int | None]] = weakref.WeakKeyDictionary()


def first_nonfinite(trace: Trace) -> int | None:
    """Index of the first event producing NaN or Inf, or None. Looked for once per trace (and length): every
    step's moves, and those of the steps around it, ask for it, and it reads every value recorded before it."""
    known = _FIRST_NONFINITE.get(trace)
    if known is None or known[0] != len(trace.events):
        event = trace.first_nonfinite()
        known = _FIRST_NONFINITE[trace] = (len(trace.events), None if event is None else event.index)
    return known[1]


def surroundings(model: Model, path: str) -> str:
    """The smallest part of the model to draw around a node, as a `focus` for model_to_dot: its innermost
    scope (or block of consecutive nodes) when its graph has them, else its graph's path."""
    graph = model.node(path).graph
    scope = ModelFacts.of(model).tree(graph).scope_of.get(path)
    return scope.key if scope is not None else graph.path
