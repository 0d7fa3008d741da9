"""A diagram as data (boxes, nested clusters, edges), then written out as DOT: collect first, draw second."""
from __future__ import annotations

from dataclasses import dataclass, field

from .dot_escape import quote


@dataclass(frozen=True)
class Html:
    """An HTML-like label whose text is already escaped (see dot_escape.html)."""

    text: str


Attrs = dict[str, "str | Html"]


@dataclass
class Box:
    """One DOT node: `name` is its DOT id (already safe), `attrs` its attributes."""

    name: str
    attrs: Attrs


@dataclass
class Cluster:
    """A DOT cluster (or, for the root, the whole graph): its `id`, attributes, boxes and sub-clusters."""

    id: str
    attrs: Attrs = field(default_factory=dict)
    boxes: list[Box] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    same_rank: list[list[str]] = field(default_factory=list)


@dataclass
class Edge:
    tail: str
    head: str
    attrs: Attrs = field(default_factory=dict)


@dataclass(frozen=True)
class DrawnEdge:
    """An edge as the drawing reports it: its SVG id, the boxes it joins and the value names it carries."""

    id: str
    tail: str
    head: str
    names: tuple[str, ...]


def _attr_list(attrs: Attrs) -> str:
    parts = []
    for key, value in attrs.items():
        parts.append(f"{key}=<{value.text}>" if isinstance(value, Html) else f"{key}={quote(value)}")
    return ", ".join(parts)


def write_dot(root: Cluster, edges: list[Edge], defaults: dict[str, Attrs]) -> str:
    """DOT text for a scene: `defaults` holds the `graph`, `node` and `edge` default attributes."""
    lines = ["digraph explorer {"]
    for kind in ("graph", "node", "edge"):
        if defaults.get(kind):
            lines.append(f"  {kind} [{_attr_list(defaults[kind])}];")
    for key, value in root.attrs.items():
        lines.append(f"  {key}=<{value.text}>;" if isinstance(value, Html) else f"  {key}={quote(value)};")
    _write_body(root, lines, "  ")
    for edge in edges:
        attrs = f" [{_attr_list(edge.attrs)}]" if edge.attrs else ""
        lines.append(f"  {quote(edge.tail)} -> {quote(edge.head)}{attrs};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _write_body(cluster: Cluster, lines: list[str], indent: str) -> None:
    for box in cluster.boxes:
        lines.append(f"{indent}{quote(box.name)} [{_attr_list(box.attrs)}];")
    for rank in cluster.same_rank:
        lines.append(f"{indent}{{ rank=same; {' '.join(quote(n) for n in rank)} }}")
    for child in cluster.clusters:
        lines.append(f"{indent}subgraph {quote('cluster:' + child.id)} {{")
        inner = indent + "  "
        lines.append(f"{inner}id={quote(child.id)};")
        for key, value in child.attrs.items():
            text = f"<{value.text}>" if isinstance(value, Html) else quote(value)
            lines.append(f"{inner}{key}={text};")
        _write_body(child, lines, inner)
        lines.append(f"{indent}}}")
