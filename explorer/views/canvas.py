"""The scene being drawn: boxes by name, where each node's edges enter and leave, the graphs and bodies drawn,
and the edges collected before they are written (same pairs touching a collapsed scope are merged)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..proto.graph import GraphRef
from .grouping import Scope
from .scene import Attrs, Box, Cluster


@dataclass
class PendingEdge:
    """An edge collected before writing: the value names it carries, its kind and its trace state."""

    names: list[str] = field(default_factory=list)
    kind: str = "data"
    state: str | None = None


@dataclass
class Source:
    """Where a value seen from some graph comes from: a box (or None for a folded initializer)."""

    box: str | None
    graph: str
    producer: str | None = None


@dataclass
class Canvas:
    """Everything drawn so far. Node paths map to the box their incoming edges go to (`entry`) and the box
    their outgoing edges leave from (`exit`); they differ only for a control-flow node drawn with its bodies."""

    root_path: str
    boxes: dict[str, Box] = field(default_factory=dict)
    entry: dict[str, str] = field(default_factory=dict)
    exit: dict[str, str] = field(default_factory=dict)
    drawn: list[GraphRef] = field(default_factory=list)  # graphs drawn, parents first
    members: dict[str, list[str]] = field(default_factory=dict)  # graph path -> node paths drawn or hidden
    expanded_nodes: list[str] = field(default_factory=list)  # control-flow nodes drawn with their bodies
    home: dict[str, str] = field(default_factory=dict)  # box -> innermost drawn graph path
    scope_boxes: dict[str, Scope] = field(default_factory=dict)
    open_scopes: list[str] = field(default_factory=list)  # scope keys drawn as clusters
    formal_in: dict[tuple[str, int], str] = field(default_factory=dict)
    formal_out: dict[str, list[str]] = field(default_factory=dict)
    containers: dict[str, Cluster] = field(default_factory=dict)
    stubs: dict[str, Box] = field(default_factory=dict)
    pending: dict[tuple[str, str, str], PendingEdge] = field(default_factory=dict)

    def add_box(self, container: Cluster, name: str, attrs: Attrs, home: str) -> Box:
        box = Box(name, attrs)
        container.boxes.append(box)
        self.boxes[name] = box
        self.home[name] = home
        return box

    def add_edge(self, source: Source, head: str, value: str, kind: str, state: str | None = None) -> None:
        """Collects an edge; edges to or from a collapsed scope box merge whatever values they carry."""
        if source.box is None or source.box == head:
            return
        if source.box in self.scope_boxes or head in self.scope_boxes:
            key = (source.box, head, "")
        else:
            key = (source.box, head, value)
        pending = self.pending.setdefault(key, PendingEdge(kind=kind))
        if value not in pending.names:
            pending.names.append(value)
        if state is not None:
            pending.state = state
        if kind == "data":
            pending.kind = "data"
