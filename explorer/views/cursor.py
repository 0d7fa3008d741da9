"""Moving a cursor over a trace's events, and where an event sits among nested loops and branches."""
from __future__ import annotations

from dataclasses import dataclass

from ..graph import NodeRef
from ..model import Model
from ..trace import Event, Trace
from .grouping import ScopeTree
from .labels import op_title

ITERATING_OPS = frozenset({"Loop", "Scan", "SequenceMap"})


@dataclass(frozen=True)
class Crumb:
    """One level of an event's location: an enclosing node (with the iteration or branch it was in), or the node
    itself (last crumb, `detail` empty)."""

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
    chain: list[tuple[NodeRef, str]] = []
    graph = model.node(path).graph
    while graph.owner is not None:
        chain.append((model.node(graph.owner), graph.attribute or ""))
        graph = model.node(graph.owner).graph
    return chain[::-1]


def breadcrumb(model: Model, event: Event) -> list[Crumb]:
    """Where an event ran, e.g. `Scan 'enc' · iteration 3 › Loop 'inner' · iteration 1 › Add`."""
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
    crumbs.append(Crumb(node.path, node.op_type, op_title(node.proto)))
    return crumbs


def breadcrumb_text(model: Model, event: Event) -> str:
    return " › ".join(c.text for c in breadcrumb(model, event))


def innermost_loop(model: Model, path: str) -> tuple[NodeRef, str] | None:
    """The closest enclosing Loop/Scan/SequenceMap of a node and the body attribute it lives in, or None."""
    for owner, attribute in reversed(ancestors(model, path)):
        if owner.op_type in ITERATING_OPS:
            return owner, attribute
    return None


def next_iteration(model: Model, trace: Trace, index: int) -> int | None:
    """The event of the same node in the next iteration of its innermost enclosing loop (or, when the node did
    not run there, that iteration's first event). None at top level or in the last iteration."""
    event = trace.events[index]
    loop = innermost_loop(model, event.node)
    if loop is None or not event.iteration:
        return None
    owner, attribute = loop
    body_prefix = f"{owner.path}/{attribute}/"
    target = event.iteration[:-1] + (event.iteration[-1] + 1,)
    depth = len(target)
    first = None
    for later in trace.events[index + 1:]:
        if later.iteration[:depth] == target and later.node.startswith(body_prefix):
            if later.node == event.node and later.iteration == target:
                return later.index
            if first is None:
                first = later.index
        elif later.node == owner.path and later.iteration == event.iteration[:-1]:
            break  # the loop's own event comes after its body's: this execution of the loop is over
    return first


def previous_iteration(model: Model, trace: Trace, index: int) -> int | None:
    """Mirror of `next_iteration`: the same node in the previous iteration of its innermost loop."""
    event = trace.events[index]
    loop = innermost_loop(model, event.node)
    if loop is None or not event.iteration or event.iteration[-1] == 0:
        return None
    owner, attribute = loop
    body_prefix = f"{owner.path}/{attribute}/"
    target = event.iteration[:-1] + (event.iteration[-1] - 1,)
    depth = len(target)
    first = None
    for earlier in reversed(trace.events[:index]):
        if earlier.iteration[:depth] == target and earlier.node.startswith(body_prefix):
            if earlier.node == event.node and earlier.iteration == target:
                return earlier.index
            first = earlier.index
        elif first is not None:
            break
    return first


def next_execution(trace: Trace, index: int, node_path: str) -> int | None:
    """The next event (after `index`) of a node, or None."""
    for event in trace.events_of(node_path):
        if event.index > index:
            return event.index
    return None


def first_nonfinite(trace: Trace) -> int | None:
    """Index of the first event producing NaN or Inf, or None."""
    event = trace.first_nonfinite()
    return None if event is None else event.index


def surroundings(model: Model, path: str) -> str:
    """The smallest part of the model to draw around a node, as a `focus` for model_to_dot: its innermost
    scope (or block of consecutive nodes) when its graph has them, else its graph's path."""
    graph = model.node(path).graph
    scope = ScopeTree(graph).scope_of.get(path)
    return scope.key if scope is not None else graph.path
