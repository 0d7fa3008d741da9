"""Where a drawing is: titles of graphs (`Loop 'loop' · body`) and the breadcrumb from the top to a focus."""
from __future__ import annotations

from ..model import Model
from .grouping import ScopeTree, find_scope
from .labels import op_title


def graph_title(model: Model, graph_path: str) -> str:
    """`main graph`, or `<owner op title> · <attribute>` for a body, e.g. `Loop 'loop' · body`."""
    graph = model.index.graphs[graph_path]
    if graph.owner is None:
        return "main graph"
    return f"{op_title(model.index.nodes[graph.owner].proto)} · {graph.attribute}"


def resolve_target(model: Model, target: str) -> tuple[str, str | None]:
    """(graph path, scope key or None) for a focus target: a graph path or a scope key."""
    if target in model.index.graphs:
        return target, None
    graph, scope = find_scope(model.index.graphs.values(), target, ScopeTree)
    return graph.path, scope.key


def breadcrumb(model: Model, target: str, *, top: str = "") -> list[tuple[str, str]]:
    """(graph path or scope key, title) pairs from `top` down to `target` (a graph path or a scope key), each
    one a valid `focus` for model_to_dot. ValueError when `target` is not below `top`."""
    graph_path, scope_key = resolve_target(model, target)
    crumbs: list[tuple[str, str]] = []
    for graph in model.index.enclosing(graph_path):
        crumbs.append((graph.path, graph_title(model, graph.path)))
        if graph.path == top:
            break
    else:
        raise ValueError(f"{target!r} is not inside graph {top!r}")
    crumbs.reverse()
    if scope_key is not None:
        _, scope = find_scope([model.index.graphs[graph_path]], scope_key, ScopeTree)
        crumbs.extend((s.key, s.label) for s in scope.lineage())
    return crumbs
