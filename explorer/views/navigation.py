"""Where a drawing is: titles of graphs (`Loop 'loop' · body`) and the breadcrumb from the top to a focus."""
from __future__ import annotations

from ..model.model import Model
from .draw_facts import ModelFacts
from .grouping import find_scope
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
    graph, scope = find_scope(model.index.graphs.values(), target, ModelFacts.of(model).tree)
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
        _, scope = find_scope([model.index.graphs[graph_path]], scope_key, ModelFacts.of(model).tree)
        crumbs.extend((s.key, s.label) for s in scope.lineage())
    return crumbs


def contains(model: Model, target: str, node_path: str) -> bool:
    """Whether a drawing focused on `target` (a graph path or a scope key; "" the main graph) covers the node."""
    if node_path not in model.index.nodes:
        return False
    graph_path, scope_key = resolve_target(model, target)
    if scope_key is not None:
        _, scope = find_scope([model.index.graphs[graph_path]], scope_key, ModelFacts.of(model).tree)
        inside = set(scope.nodes())
    else:
        inside = None
    graph = model.node(node_path).graph
    path = node_path
    while graph.path != graph_path:
        if graph.owner is None:
            return False
        path = graph.owner
        graph = model.node(graph.owner).graph
    return inside is None or path in inside


def parts(model: Model, target: str) -> list[tuple[str, str, int]]:
    """The next level down from `target` (a graph path or a scope key): (focus, title, node count) for each scope
    or block directly inside it and each body of its nodes, in graph order; each one a valid `focus`."""
    graph_path, scope_key = resolve_target(model, target)
    graph = model.index.graphs[graph_path]
    facts = ModelFacts.of(model)
    tree = facts.tree(graph)
    members = tree.scopes[scope_key].members if scope_key else tree.members
    sizes = facts.sizes
    out: list[tuple[str, str, int]] = []
    for member in members:
        if isinstance(member, str):
            out.extend((body.path, graph_title(model, body.path), sizes.get(body.path, 0))
                       for body in model.node(member).subgraphs)
        else:
            out.append((member.key, member.label, member.size))
    return out



def layer_keys(model: Model, name: str) -> list[str]:
    """The scope keys of the layers a module path names: the whole path (`transformer/h.0`), its end (`h.0`), or
    a scope key itself (`/transformer/h.0`); in every graph. [] when none does."""
    facts = ModelFacts.of(model)
    wanted = name.strip("/")
    found = []
    for graph in model.index.graphs.values():
        for key in facts.tree(graph).scopes:
            module = key[len(graph.prefix):].strip("/")
            if key == name or (wanted and "#" not in key and (module == wanted or module.endswith("/" + wanted))):
                found.append(key)
    return found


def expansion(model: Model, items: list[str]) -> tuple[str | list[str] | None, list[str] | None]:
    """model_to_dot's `expand` and `scopes` rules for what a command line asks to open: "all", "none", body graph
    paths and layers (module paths, see layer_keys). Opening layers opens exactly those (with the layers around
    them), the others drawn collapsed. ValueError names an item that is neither."""
    if items in (["all"], ["none"]):
        return items[0], None
    bodies: list[str] = []
    scopes: list[str] = []
    for item in items:
        if item in model.index.graphs:
            bodies.append(item)
            continue
        keys = layer_keys(model, item)
        if not keys:
            raise ValueError(f"{item!r} is neither a body graph path nor a layer of the model (layers: "
                             f"{', '.join(sorted(_modules(model))[:8]) or 'none'})")
        scopes.extend(keys)
    return (bodies or None), (scopes or None)


def _modules(model: Model) -> set[str]:
    facts = ModelFacts.of(model)
    return {key[len(g.prefix):].strip("/") for g in model.index.graphs.values() for key in facts.tree(g).scopes
            if "#" not in key}
