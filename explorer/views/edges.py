"""The edges of a drawing: data edges between drawn boxes (values from outside the drawn part come from `↑`
stubs), captures, body bindings, loop-carried back edges, and invisible hints that keep bodies in their frame."""
from __future__ import annotations

import onnx

from ..proto.graph import GraphRef, node_ids
from . import styles
from .boxes import SMALL, BoxDrawer
from .canvas import Canvas, Source
from .dot_escape import html, svg_id, tooltip
from .draw_plan import AUTO_EDGE_LABELS, Plan
from .grouping import Scope
from .scene import Attrs, Box, DrawnEdge, Edge, Html


class EdgeWirer:
    """Connects the boxes a BoxDrawer put on the canvas."""

    def __init__(self, plan: Plan, canvas: Canvas, boxes: BoxDrawer) -> None:
        self.plan = plan
        self.facts = plan.facts
        self.o = plan.o
        self.canvas = canvas
        self.box_drawer = boxes

    def wire(self) -> list[Edge]:
        self._connect()
        return self._edges() + self._layout_hints()

    def drawn(self) -> tuple[DrawnEdge, ...]:
        """The data, capture and carried edges written (by their `id`), with the values they carry."""
        return tuple(DrawnEdge(svg_id("edge", str(i)), tail, head, tuple(name for name in pending.names if name))
                     for i, ((tail, head, _), pending) in enumerate(self.canvas.pending.items()))

    # ---- sources -------------------------------------------------------------------------------------------
    def source(self, name: str, graph: GraphRef) -> Source:
        """The box a value seen from `graph` comes from (a stub when it is defined outside the drawing)."""
        found = self.facts.lookup(name, graph)
        if found is None:
            stub = self._stub("missing", name, f"? {name}", f"{name!r} is defined nowhere")
            return Source(stub, graph.path)
        where = found.graph
        canvas = self.canvas
        drawn = where.path in canvas.containers
        if found.tensor is not None:
            if self.o.fold_initializers:
                return Source(None, where.path)
            if drawn:
                return Source(self._initializer_box(name, found.tensor, where), where.path)
        elif drawn and found.node is not None and found.node in canvas.exit:
            return Source(canvas.exit[found.node], where.path, producer=found.node)
        elif drawn and found.kind == "input" and (where.path, found.index) in canvas.formal_in:
            return Source(canvas.formal_in[(where.path, found.index)], where.path)
        typ = self.facts.value_type(name, where)
        label = f"↑ {name}" + (f" ⟨{typ}⟩" if typ else "")
        return Source(self._stub("outer", name, label, f"{name}: defined outside this view"), where.path)

    def _stub(self, kind: str, value: str, label: str, tip: str) -> str:
        canvas = self.canvas
        name = svg_id(kind, value)
        if name not in canvas.stubs:
            canvas.stubs[name] = Box(name, {**styles.VALUE_STYLES["missing" if kind == "missing" else "outer"],
                                            "id": name, "label": Html(SMALL.format(html(label, 48))),
                                            "tooltip": tooltip(tip)})
            canvas.boxes[name] = canvas.stubs[name]
            canvas.home[name] = canvas.root_path
        return name

    def _initializer_box(self, value: str, tensor: onnx.TensorProto, graph: GraphRef) -> str:
        name = svg_id("init", graph.path, value)
        if name not in self.canvas.boxes:
            self.canvas.add_box(self.canvas.containers[graph.path], name, {
                **styles.VALUE_STYLES["initializer"], "id": name,
                "label": Html(SMALL.format(self.box_drawer.initializer_html(value, tensor))),
                "tooltip": tooltip(f"initializer {value}")}, graph.path)
        return name

    # ---- connections ---------------------------------------------------------------------------------------
    def _connect(self) -> None:
        canvas, cursor = self.canvas, self.o.cursor
        index = self.facts.index
        for graph in canvas.drawn:
            summarized: set[str] = set()  # collapsed scope boxes wired from their summary
            for path in canvas.members[graph.path]:
                head = canvas.entry[path]
                scope = canvas.scope_boxes.get(head)
                if scope is not None and (cursor is None or cursor.current not in canvas.entry
                                          or canvas.entry[cursor.current] != head):
                    if head not in summarized:
                        summarized.add(head)
                        self._connect_scope_box(head, scope, graph)
                    continue
                ref = index.nodes[path]
                reads_current = cursor is not None and cursor.current == path
                for name in dict.fromkeys(n for n in ref.proto.input if n):
                    src = self.source(name, graph)
                    reads = reads_current and cursor is not None and name in cursor.inputs
                    state = "input" if reads else self._out_state(src, name)
                    canvas.add_edge(src, head, name, "data" if src.graph == graph.path else "capture", state)
                for body in ref.subgraphs:
                    if body.path in canvas.containers:
                        continue
                    for name in index.captures(body.path):
                        src = self.source(name, graph)
                        canvas.add_edge(src, head, name, "capture", self._out_state(src, name))
            self._connect_outputs(graph)
        for path in canvas.expanded_nodes:
            self._connect_bodies(path)
        if self.plan.focus_scope is not None:
            self._connect_outside()
        elif self.plan.root.path:
            self._connect_carried(self.plan.root)

    def _connect_scope_box(self, head: str, scope: Scope, graph: GraphRef) -> None:
        """The edges into a collapsed scope box: what its nodes read from outside it."""
        for name, captured in self.facts.scope_reads(scope):
            src = self.source(name, graph)
            kind = "capture" if captured or src.graph != graph.path else "data"
            self.canvas.add_edge(src, head, name, kind, self._out_state(src, name))

    def _out_state(self, src: Source, name: str) -> str | None:
        cursor = self.o.cursor
        if cursor is not None and src.producer is not None and src.producer == cursor.current \
                and name in cursor.outputs:
            return "output"
        return None

    def _connect_outputs(self, graph: GraphRef) -> None:
        for box, value in zip(self.canvas.formal_out.get(graph.path, []), graph.proto.output):
            if value.name:
                src = self.source(value.name, graph)
                self.canvas.add_edge(src, box, value.name, "data" if src.graph == graph.path else "capture",
                                     self._out_state(src, value.name))

    def _connect_bodies(self, path: str) -> None:
        canvas = self.canvas
        header, exit_box = canvas.entry[path], canvas.exit[path]
        for body in self.facts.index.nodes[path].subgraphs:
            if body.path not in canvas.containers:
                continue
            for i in range(len(body.proto.input)):
                box = canvas.formal_in.get((body.path, i))
                if box:
                    canvas.add_edge(Source(header, body.path), box, "", "binding")
            for box in canvas.formal_out.get(body.path, []):
                canvas.add_edge(Source(box, body.path), exit_box, "", "binding")
            self._connect_carried(body)

    def _connect_carried(self, body: GraphRef) -> None:
        """Back edges from each loop-carried formal output to the formal input it feeds next iteration."""
        outputs = self.canvas.formal_out.get(body.path, [])
        roles = self.facts.roles(body)
        for out_index, in_index in roles.carried if roles is not None else ():
            box = self.canvas.formal_in.get((body.path, in_index))
            if out_index < len(outputs) and box:
                self.canvas.add_edge(Source(outputs[out_index], body.path), box, "⟲", "carried")

    def _connect_outside(self) -> None:
        """In a scope focus, values used outside the scope leave through `↓ name` stubs."""
        root, canvas = self.plan.root, self.canvas
        inside = set(canvas.members[root.path])
        used_outside: set[str] = {o.name for o in root.proto.output}
        for node_id, node in zip(node_ids(root.proto), root.proto.node):
            if root.prefix + node_id not in inside:
                used_outside.update(node.input)
        for path in inside:
            for name in self.facts.index.nodes[path].proto.output:
                if name and name in used_outside:
                    stub = self._stub("outside", name, f"↓ {name}", f"{name}: used outside this scope")
                    canvas.add_edge(Source(canvas.exit[path], root.path, producer=path), stub, name, "data",
                                    self._out_state(Source(None, "", producer=path), name))

    # ---- writing -------------------------------------------------------------------------------------------
    def _edges(self) -> list[Edge]:
        edges = []
        labelled = self.o.edge_labels if self.o.edge_labels is not None else len(self.canvas.boxes) <= AUTO_EDGE_LABELS
        for n, ((tail, head, _), pending) in enumerate(self.canvas.pending.items()):
            attrs: Attrs = {**styles.EDGE_STYLES[pending.kind], "id": svg_id("edge", str(n))}
            names = [n for n in pending.names if n]
            if pending.kind in ("data", "capture") and names:
                text = names[0] if len(names) == 1 else f"{len(names)} values"
                attrs["tooltip"] = tooltip(", ".join(names))
                if labelled:
                    typ = self._edge_type(tail, names) if len(names) == 1 else ""
                    label = html(text, 28) + (f"<BR/>{html(typ, 28)}" if typ else "")
                    attrs["label"] = Html(SMALL.format(label))
            elif pending.kind == "carried":
                attrs["label"] = Html(SMALL.format("⟲ next"))
            if pending.state is not None:
                attrs.update(styles.EDGE_STATES[pending.state])
            edges.append(Edge(tail, head, attrs))
        return edges

    def _edge_type(self, tail: str, names: list[str]) -> str:
        home = self.canvas.home.get(tail, self.plan.root.path)
        return self.facts.value_type(names[0], self.facts.index.graphs[home])

    def _layout_hints(self) -> list[Edge]:
        """Invisible edges keeping each expanded body between its header and exit boxes."""
        canvas = self.canvas
        tails: dict[str, set[str]] = {}
        heads: dict[str, set[str]] = {}
        for tail, head, _ in canvas.pending:
            heads.setdefault(head, set()).add(tail)
            tails.setdefault(tail, set()).add(head)
        by_home: dict[str, list[str]] = {}
        for box, home in canvas.home.items():
            by_home.setdefault(home, []).append(box)
        hints = []
        for path in canvas.expanded_nodes:
            header, exit_box = canvas.entry[path], canvas.exit[path]
            for body in self.facts.index.nodes[path].subgraphs:
                if body.path not in canvas.containers:
                    continue
                inside = body.path + "/"
                for box in by_home.get(body.path, ()):
                    if not any(t == header or self._inside(t, body.path, inside) for t in heads.get(box, ())):
                        hints.append(Edge(header, box, {**styles.EDGE_STYLES["order"]}))
                    if not any(h == exit_box or self._inside(h, body.path, inside) for h in tails.get(box, ())):
                        hints.append(Edge(box, exit_box, {**styles.EDGE_STYLES["order"]}))
        return hints

    def _inside(self, box: str, body: str, prefix: str) -> bool:
        home = self.canvas.home.get(box, "")
        return home == body or home.startswith(prefix)
