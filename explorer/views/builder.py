"""Model -> Scene: walks the graphs to draw (a root graph, its expanded bodies, its expanded scopes), creates
the boxes first, then the edges between them, then the layout hints and the overlay states."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import onnx

from ..graph import GraphRef, node_ids
from ..model import Model
from . import styles
from .dot_escape import html, svg_id, tooltip
from .expansion import Expansion, Rule
from .grouping import Scope, ScopeTree, auto_depth, find_scope
from .labels import attribute_lines, initializer_text, op_title, type_text
from .navigation import breadcrumb
from .overlays import RewriteOverlay, TraceOverlay
from .roles import body_roles
from .scene import Box, Cluster, Edge, Html

MAX_FOLDED = 3
SMALL = '<FONT POINT-SIZE="8">{}</FONT>'
TINT = '<FONT POINT-SIZE="8" COLOR="{}">{}</FONT>'


@dataclass
class Options:
    """Every choice a drawing depends on (see model_to_dot for their meaning)."""

    graph_path: str = ""
    focus: str | None = None
    expand: Rule = None
    scopes: Rule = None
    cursor: TraceOverlay | None = None
    overlay: RewriteOverlay | None = None
    highlight: frozenset[str] = frozenset()
    group_scopes: bool = True
    max_expanded_nodes: int = 40
    max_boxes: int = 300
    fold_initializers: bool = True
    edge_labels: bool = True


@dataclass
class _Source:
    """Where a value seen from some graph comes from: a box (or None for a folded initializer)."""

    box: str | None
    graph: str
    producer: str | None = None


@dataclass
class _Pending:
    """Edges collected before writing: same (tail, head) pairs touching a collapsed scope are merged."""

    names: list[str] = field(default_factory=list)
    kind: str = "data"
    state: str | None = None


class SceneBuilder:
    """Builds the scene for one drawing; `build()` returns (root cluster, edges)."""

    def __init__(self, model: Model, options: Options) -> None:
        self.model = model
        self.index = model.index
        self.o = options
        self.opset = model.opsets.get("", 1)
        self._trees: dict[str, ScopeTree] = {}
        self._defs: dict[str, dict[str, tuple[str, object]]] = {}
        self._types: dict[str, dict[str, onnx.TypeProto]] = {}
        self._type_text: dict[tuple[str, str], str] = {}
        self._init_text: dict[int, str] = {}
        self._sizes, self._depths = self._body_sizes()
        self.top = self._graph(options.graph_path, "graph_path")
        self.root, self.focus_scope = self._resolve_focus(options.focus)
        self.reveal_bodies, self.reveal_scopes = self._reveal()
        bodies = [p for p in self.index.graphs if p]
        self.body_rule = Expansion(options.expand, bodies, self._body_ancestors, "body graph path")
        self.scope_rule = self._scope_rule(options.scopes)
        # filled while drawing
        self.entry: dict[str, str] = {}  # node path -> box its incoming edges go to
        self.exit: dict[str, str] = {}  # node path -> box its outgoing edges leave from
        self.drawn: list[GraphRef] = []  # graphs drawn, parents first
        self.members: dict[str, list[str]] = {}  # graph path -> node paths drawn (or hidden in a scope box)
        self.expanded_nodes: list[str] = []  # control-flow nodes drawn as header + bodies + exit
        self.home: dict[str, str] = {}  # box -> innermost drawn graph path
        self.scope_boxes: dict[str, Scope] = {}
        self.formal_in: dict[tuple[str, int], str] = {}
        self.formal_out: dict[str, list[str]] = {}
        self.containers: dict[str, Cluster] = {}
        self.stubs: dict[str, Box] = {}
        self.pending: dict[tuple[str, str, str], _Pending] = {}
        self.boxes: dict[str, Box] = {}

    # ---- model facts ---------------------------------------------------------------------------------------
    def _graph(self, path: str, what: str) -> GraphRef:
        try:
            return self.index.graphs[path]
        except KeyError:
            raise ValueError(f"{what} {path!r} is not a graph of the model") from None

    def _body_sizes(self) -> tuple[dict[str, int], dict[str, int]]:
        sizes: dict[str, int] = Counter()
        for ref in self.index.iter_nodes():
            graph = ref.graph
            while graph.path:
                sizes[graph.path] += 1
                graph = self.index.nodes[graph.owner].graph
        depths: dict[str, int] = {}
        for graph in sorted(self.index.graphs.values(), key=lambda g: -g.depth):
            depths[graph.path] = max(depths.get(graph.path, 0), 1)
            if graph.owner is not None:
                parent = self.index.nodes[graph.owner].graph.path
                depths[parent] = max(depths.get(parent, 0), depths[graph.path] + 1)
        return sizes, depths

    def parent(self, graph: GraphRef) -> GraphRef | None:
        return None if graph.owner is None else self.index.nodes[graph.owner].graph

    def _body_ancestors(self, graph_path: str) -> list[str]:
        out, graph = [], self.parent(self.index.graphs[graph_path])
        while graph is not None and graph.path:
            out.append(graph.path)
            graph = self.parent(graph)
        return out

    def within(self, graph: GraphRef, ancestor: GraphRef) -> bool:
        while graph is not None:
            if graph is ancestor:
                return True
            graph = self.parent(graph)
        return False

    def tree(self, graph: GraphRef) -> ScopeTree:
        tree = self._trees.get(graph.path)
        if tree is None:
            tree = self._trees[graph.path] = ScopeTree(graph)
        return tree

    def defs(self, graph: GraphRef) -> dict[str, tuple[str, object]]:
        """value name -> ("init", tensor) | ("input", index) | ("node", path), for names the graph defines."""
        found = self._defs.get(graph.path)
        if found is None:
            g = graph.proto
            found = {t.name: ("init", t) for t in g.initializer}
            found.update((s.values.name, ("init", s.values)) for s in g.sparse_initializer)
            for i, value in enumerate(g.input):
                if value.name not in found or graph.path:
                    found[value.name] = ("input", i)
            for node_id, node in zip(node_ids(g), g.node):
                for name in node.output:
                    if name:
                        found[name] = ("node", graph.prefix + node_id)
            self._defs[graph.path] = found
        return found

    def value_type(self, name: str, graph: GraphRef) -> str:
        """`3×4 float` for a value seen from `graph` (from shape inference), "" when unknown."""
        key = (graph.path, name)
        text = self._type_text.get(key)
        if text is None:
            text = self._type_text[key] = self._find_type(name, graph)
        return text

    def _find_type(self, name: str, graph: GraphRef) -> str:
        while graph is not None:
            types = self._types.get(graph.path)
            if types is None:
                g = graph.proto
                types = {v.name: v.type for v in (*g.input, *g.output, *g.value_info)}
                for t in g.initializer:
                    types[t.name] = onnx.helper.make_tensor_type_proto(t.data_type, list(t.dims))
                self._types[graph.path] = types
            if name in types:
                return type_text(types[name])
            if name in self.defs(graph):
                return ""
            graph = self.parent(graph)
        return ""

    def lookup(self, name: str, graph: GraphRef) -> tuple[GraphRef, str, object] | None:
        """The graph (this one or an enclosing one) defining `name`, and how."""
        while graph is not None:
            found = self.defs(graph).get(name)
            if found is not None:
                return graph, found[0], found[1]
            graph = self.parent(graph)
        return None

    # ---- focus, reveal, rules ------------------------------------------------------------------------------
    def _resolve_focus(self, focus: str | None) -> tuple[GraphRef, Scope | None]:
        if focus is None:
            return self.top, None
        if focus in self.index.graphs:
            graph, scope = self.index.graphs[focus], None
        else:
            graph, scope = find_scope(self.index.graphs.values(), focus, self.tree)
        if not self.within(graph, self.top):
            raise ValueError(f"focus {focus!r} lies outside graph_path {self.top.path!r}")
        return graph, scope

    def _reveal(self) -> tuple[set[str], set[str]]:
        """Bodies and scopes to open (under the default rule) so that overlay and highlight nodes show."""
        wanted = set(self.o.highlight)
        if self.o.cursor is not None:
            wanted.update(p for p in (self.o.cursor.current, self.o.cursor.error) if p)
        if self.o.overlay is not None:
            wanted |= self.o.overlay.removed | self.o.overlay.added
        bodies: set[str] = set()
        scopes: set[str] = set()
        for path in wanted:
            while path in self.index.nodes:
                ref = self.index.nodes[path]
                if self.o.group_scopes:
                    scopes.update(s.key for s in self.tree(ref.graph).chain(path))
                if not ref.graph.path:
                    break
                bodies.add(ref.graph.path)
                path = ref.graph.owner
        return bodies, scopes

    def _scope_rule(self, rule: Rule) -> Expansion:
        known: list[str] = []
        if rule is not None and not (isinstance(rule, str) and rule in ("all", "none")):
            for graph in self.index.graphs.values():
                known.extend(self.tree(graph).scopes)

        def ancestors(key: str) -> list[str]:
            return [s.key for s in find_scope(self.index.graphs.values(), key, self.tree)[1].lineage()]

        return Expansion(rule, known, ancestors, "scope key")

    def _weight(self, path: str) -> int:
        """Boxes a node takes under the default rule: itself and the bodies small enough to open."""
        return 1 + sum(self._sizes.get(b.path, 0) for b in self.index.nodes[path].subgraphs
                       if self._sizes.get(b.path, 0) <= self.o.max_expanded_nodes)

    def body_expanded(self, body: GraphRef) -> bool:
        small = self._sizes.get(body.path, 0) <= self.o.max_expanded_nodes
        default = small or body.path in self.reveal_bodies
        return self.body_rule.expanded(body.path, default)

    # ---- boxes ---------------------------------------------------------------------------------------------
    def build(self) -> tuple[Cluster, list[Edge]]:
        root = Cluster(svg_id("graph", self.root.path))
        root.attrs = self._root_attrs()
        self._draw_graph(self.root, root, is_root=True)
        self._connect()
        edges = self._edges()
        edges.extend(self._layout_hints())
        self._apply_states()
        for stub in self.stubs.values():
            root.boxes.append(stub)
        return root, edges

    def _root_attrs(self) -> dict:
        if self.root is self.top and self.focus_scope is None:
            return {}
        target = self.focus_scope.key if self.focus_scope is not None else self.root.path
        crumbs = " › ".join(html(title, 48) for _, title in breadcrumb(self.model, target, top=self.top.path))
        return {"label": Html(f"<B>{crumbs}</B>"), "labelloc": "t", "labeljust": "l"}

    def add_box(self, container: Cluster, name: str, attrs: dict, home: str) -> Box:
        box = Box(name, attrs)
        container.boxes.append(box)
        self.boxes[name] = box
        self.home[name] = home
        return box

    def _draw_graph(self, graph: GraphRef, container: Cluster, is_root: bool = False) -> None:
        self.drawn.append(graph)
        self.containers[graph.path] = container
        self.members[graph.path] = []
        scoped = is_root and self.focus_scope is not None
        if not scoped:
            self._draw_inputs(graph, container)
        if scoped:
            members: list = self.focus_scope.members
        elif self.o.group_scopes:
            members = self.tree(graph).members
        else:
            members = [graph.prefix + i for i in node_ids(graph.proto)]
        depth = auto_depth(members, self.o.max_boxes, self._weight) if self.o.group_scopes else None
        self._draw_members(graph, container, members, depth)
        if not scoped:
            self._draw_outputs(graph, container)

    def _draw_members(self, graph: GraphRef, container: Cluster, members: list, depth: int | None) -> None:
        for member in members:
            if not isinstance(member, Scope):
                self._draw_node(member, graph, container)
                continue
            default = depth is None or member.depth < depth or member.key in self.reveal_scopes
            if self.scope_rule.expanded(member.key, default):
                cluster = Cluster(svg_id("scope", member.key), {
                    **styles.SCOPE_CLUSTER_STYLE, "label": Html(html(member.label, 40)),
                    "tooltip": tooltip(f"scope {member.key} · {member.size} nodes")})
                container.clusters.append(cluster)
                self._draw_members(graph, cluster, member.members, depth)
            else:
                self._draw_scope_box(graph, container, member)

    def _draw_scope_box(self, graph: GraphRef, container: Cluster, scope: Scope) -> None:
        name = svg_id("scope", scope.key)
        paths = scope.nodes()
        ops = Counter(self.index.nodes[p].op_type for p in paths).most_common(3)
        summary = " ".join(f"{op}×{n}" if n > 1 else op for op, n in ops)
        label = f"<B>▸ {html(scope.label, 40)}</B><BR/>"
        label += SMALL.format(f"{scope.size} nodes · {html(summary, 48)}")
        attrs = {**styles.VALUE_STYLES["scope"], "id": name, "label": Html(label),
                 "tooltip": tooltip(f"scope {scope.key}\n{scope.size} nodes")}
        self.add_box(container, name, attrs, graph.path)
        self.scope_boxes[name] = scope
        for path in paths:
            self.entry[path] = self.exit[path] = name
            self.members[graph.path].append(path)

    def _draw_inputs(self, graph: GraphRef, container: Cluster) -> None:
        g = graph.proto
        roles = self._roles(graph)
        initializers = {t.name for t in g.initializer} if not graph.path else set()
        rank: list[str] = []
        for i, value in enumerate(g.input):
            if value.name in initializers:
                continue
            name = svg_id("input", graph.path, str(i))
            kind = "input" if not graph.path else "formal_input"
            role = roles.inputs[i] if roles and i < len(roles.inputs) else ("input" if not graph.path else "")
            self.add_box(container, name, self._value_attrs(kind, name, value.name, role, graph), graph.path)
            self.formal_in[(graph.path, i)] = name
            rank.append(name)
        if len(rank) > 1:
            container.same_rank.append(rank)

    def _draw_outputs(self, graph: GraphRef, container: Cluster) -> None:
        roles = self._roles(graph)
        names = []
        for i, value in enumerate(graph.proto.output):
            name = svg_id("output", graph.path, str(i))
            kind = "output" if not graph.path else "formal_output"
            default = "output" if not graph.path else ""
            role = roles.outputs[i] if roles and i < len(roles.outputs) else default
            self.add_box(container, name, self._value_attrs(kind, name, value.name, role, graph), graph.path)
            names.append(name)
        self.formal_out[graph.path] = names
        if len(names) > 1:
            container.same_rank.append(names)

    def _value_attrs(self, kind: str, box: str, value: str, role: str, graph: GraphRef) -> dict:
        typ = self.value_type(value, graph)
        lines = [f"<B>{html(value, 40)}</B>" if value else "<I>∅</I>"]
        if role:
            lines.append(SMALL.format(html(role, 48)))
        if typ:
            lines.append(SMALL.format(html(typ, 48)))
        tip = f"{role or kind} {value}" + (f"\n{typ}" if typ else "")
        return {**styles.VALUE_STYLES[kind], "id": box, "label": Html("<BR/>".join(lines)),
                "tooltip": tooltip(tip)}

    def _roles(self, graph: GraphRef):
        if not graph.path:
            return None
        owner = self.index.nodes[graph.owner]
        outer = self.parent(graph)
        return body_roles(owner.proto, graph.attribute, graph.proto, self.opset,
                          lambda name: self.value_type(name, outer).startswith("seq("))

    def _draw_node(self, path: str, graph: GraphRef, container: Cluster) -> None:
        ref = self.index.nodes[path]
        self.members[graph.path].append(path)
        open_bodies = [b for b in ref.subgraphs if self.body_expanded(b)]
        closed = [b for b in ref.subgraphs if b not in open_bodies]
        name = svg_id("node", path)
        attrs = {**styles.op_style(ref.op_type), "id": name,
                 "label": Html(self._op_label(ref, graph, closed)), "tooltip": tooltip(self._op_tip(ref))}
        if not open_bodies:
            self.add_box(container, name, attrs, graph.path)
            self.entry[path] = self.exit[path] = name
            return
        wrapper = Cluster(svg_id("wrapper", path), {**styles.WRAPPER_STYLE, "label": ""})
        container.clusters.append(wrapper)
        self.add_box(wrapper, name, attrs, graph.path)
        for body in open_bodies:
            cluster = Cluster(svg_id("graph", body.path), {
                "style": "rounded,filled", "color": styles.CATEGORY_COLOURS["control"][1],
                "fillcolor": styles.CLUSTER_FILLS[(body.depth - 1) % len(styles.CLUSTER_FILLS)],
                "label": Html(f"<B>{html(op_title(ref.proto), 48)} · {html(body.attribute, 32)}</B>"),
                "tooltip": tooltip(f"{body.path}\n{self._sizes.get(body.path, 0)} nodes")})
            wrapper.clusters.append(cluster)
            self._draw_graph(body, cluster)
        exit_name = svg_id("exit", path)
        outs = ", ".join(o for o in ref.proto.output if o)
        self.add_box(wrapper, exit_name, {**styles.VALUE_STYLES["exit"], "id": exit_name,
                                          "label": Html(SMALL.format(f"end {html(op_title(ref.proto), 40)}"
                                                                     f" → {html(outs, 40)}")),
                                          "tooltip": tooltip(f"outputs of {path}: {outs}")}, graph.path)
        self.entry[path], self.exit[path] = name, exit_name
        self.expanded_nodes.append(path)

    def _op_label(self, ref, graph: GraphRef, closed: list[GraphRef]) -> str:
        node = ref.proto
        shown = node.name
        if self.o.group_scopes and ref.path in self.tree(graph).scope_of:
            shown = shown.rsplit("/", 1)[-1]  # the scope cluster around it already says the rest
        if shown == node.op_type:
            shown = ""
        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        title = f"<B>{html(op, 40)}</B>" + (f" '{html(shown, 32)}'" if shown else "")
        lines = [title] + [SMALL.format(html(line)) for line in attribute_lines(node)]
        if self.o.fold_initializers:
            folded = []
            for name in dict.fromkeys(n for n in node.input if n):
                found = self.lookup(name, graph)
                if found is not None and found[1] == "init":
                    folded.append(self._initializer_html(name, found[2]))
            if len(folded) > MAX_FOLDED:
                folded = folded[:MAX_FOLDED - 1] + [f"+{len(folded) - MAX_FOLDED + 1} more initializers"]
            lines += [TINT.format("#e67700", text) for text in folded]
        for body in closed:
            size, depth = self._sizes.get(body.path, 0), self._depths[body.path]
            badge = f"▸ {body.attribute} · {size} nodes · depth {depth}"
            lines.append(TINT.format("#d9480f", html(badge)))
        return "<BR/>".join(lines)

    def _initializer_html(self, name: str, tensor: onnx.TensorProto) -> str:
        text = self._init_text.get(id(tensor))
        if text is None:
            text = self._init_text[id(tensor)] = html(initializer_text(name, tensor))
        return text

    def _op_tip(self, ref) -> str:
        node = ref.proto
        ins = ", ".join(n or "∅" for n in node.input)
        outs = ", ".join(n or "∅" for n in node.output)
        named = "" if node.name and ref.path.endswith(node.name) else f"{node.op_type} {node.name!r}\n"
        return f"{ref.path}\n{named}({ins}) → ({outs})"

    # ---- edges ---------------------------------------------------------------------------------------------
    def source(self, name: str, graph: GraphRef) -> _Source:
        """The box a value seen from `graph` comes from (a stub when it is defined outside the drawing)."""
        found = self.lookup(name, graph)
        if found is None:
            stub = self._stub("missing", name, f"? {name}", f"{name!r} is defined nowhere")
            return _Source(stub, graph.path)
        where, kind, what = found
        drawn = where.path in self.containers
        if kind == "init":
            if self.o.fold_initializers:
                return _Source(None, where.path)
            if drawn:
                return _Source(self._initializer_box(name, what, where), where.path)
        elif drawn and kind == "node" and what in self.exit:
            return _Source(self.exit[what], where.path, producer=what)
        elif drawn and kind == "input" and (where.path, what) in self.formal_in:
            return _Source(self.formal_in[(where.path, what)], where.path)
        typ = self.value_type(name, where)
        label = f"↑ {name}" + (f" ⟨{typ}⟩" if typ else "")
        return _Source(self._stub("outer", name, label, f"{name}: defined outside this view"), where.path)

    def _stub(self, kind: str, value: str, label: str, tip: str) -> str:
        name = svg_id(kind, value)
        if name not in self.stubs:
            self.stubs[name] = Box(name, {**styles.VALUE_STYLES["missing" if kind == "missing" else "outer"],
                                          "id": name, "label": Html(SMALL.format(html(label, 48))),
                                          "tooltip": tooltip(tip)})
            self.boxes[name] = self.stubs[name]
            self.home[name] = self.root.path
        return name

    def _initializer_box(self, value: str, tensor: onnx.TensorProto, graph: GraphRef) -> str:
        name = svg_id("init", graph.path, value)
        if name not in self.boxes:
            self.add_box(self.containers[graph.path], name, {
                **styles.VALUE_STYLES["initializer"], "id": name,
                "label": Html(SMALL.format(self._initializer_html(value, tensor))),
                "tooltip": tooltip(f"initializer {value}")}, graph.path)
        return name

    def edge(self, source: _Source, head: str, value: str, kind: str, state: str | None = None) -> None:
        if source.box is None or source.box == head:
            return
        if source.box in self.scope_boxes or head in self.scope_boxes:
            key = (source.box, head, "")
        else:
            key = (source.box, head, value)
        pending = self.pending.setdefault(key, _Pending(kind=kind))
        if value not in pending.names:
            pending.names.append(value)
        if state is not None:
            pending.state = state
        if kind == "data":
            pending.kind = "data"

    def _connect(self) -> None:
        cursor = self.o.cursor
        for graph in self.drawn:
            for path in self.members[graph.path]:
                ref = self.index.nodes[path]
                head = self.entry[path]
                reads_current = cursor is not None and cursor.current == path
                for name in dict.fromkeys(n for n in ref.proto.input if n):
                    src = self.source(name, graph)
                    state = "input" if reads_current and name in cursor.inputs else self._out_state(src, name)
                    self.edge(src, head, name, "data" if src.graph == graph.path else "capture", state)
                for body in ref.subgraphs:
                    if body.path in self.containers:
                        continue
                    for name in self.index.captures(body.path):
                        src = self.source(name, graph)
                        self.edge(src, head, name, "capture", self._out_state(src, name))
            self._connect_outputs(graph)
        for path in self.expanded_nodes:
            self._connect_bodies(path)
        if self.focus_scope is not None:
            self._connect_outside()
        elif self.root.path:
            self._connect_carried(self.root)

    def _out_state(self, src: _Source, name: str) -> str | None:
        cursor = self.o.cursor
        if cursor is not None and src.producer is not None and src.producer == cursor.current \
                and name in cursor.outputs:
            return "output"
        return None

    def _connect_outputs(self, graph: GraphRef) -> None:
        for box, value in zip(self.formal_out.get(graph.path, []), graph.proto.output):
            if value.name:
                src = self.source(value.name, graph)
                self.edge(src, box, value.name, "data" if src.graph == graph.path else "capture",
                          self._out_state(src, value.name))

    def _connect_bodies(self, path: str) -> None:
        ref = self.index.nodes[path]
        header, exit_box = self.entry[path], self.exit[path]
        for body in ref.subgraphs:
            if body.path not in self.containers:
                continue
            inputs = [self.formal_in.get((body.path, i)) for i in range(len(body.proto.input))]
            for box in inputs:
                if box:
                    self.edge(_Source(header, body.path), box, "", "binding")
            for box in self.formal_out.get(body.path, []):
                self.edge(_Source(box, body.path), exit_box, "", "binding")
            self._connect_carried(body)

    def _connect_carried(self, body: GraphRef) -> None:
        """Back edges from each loop-carried formal output to the formal input it feeds next iteration."""
        outputs = self.formal_out.get(body.path, [])
        for out_index, in_index in self._roles(body).carried:
            box = self.formal_in.get((body.path, in_index))
            if out_index < len(outputs) and box:
                self.edge(_Source(outputs[out_index], body.path), box, "⟲", "carried")

    def _connect_outside(self) -> None:
        """In a scope focus, values used outside the scope leave through `↓ name` stubs."""
        inside = set(self.members[self.root.path])
        used_outside: set[str] = {o.name for o in self.root.proto.output}
        for node_id, node in zip(node_ids(self.root.proto), self.root.proto.node):
            if self.root.prefix + node_id not in inside:
                used_outside.update(node.input)
        for path in inside:
            for name in self.index.nodes[path].proto.output:
                if name and name in used_outside:
                    stub = self._stub("outside", name, f"↓ {name}", f"{name}: used outside this scope")
                    self.edge(_Source(self.exit[path], self.root.path, producer=path), stub, name, "data",
                              self._out_state(_Source(None, "", producer=path), name))

    def _edges(self) -> list[Edge]:
        edges = []
        for (tail, head, _), pending in self.pending.items():
            attrs = dict(styles.EDGE_STYLES[pending.kind])
            names = [n for n in pending.names if n]
            if pending.kind in ("data", "capture") and names:
                text = names[0] if len(names) == 1 else f"{len(names)} values"
                attrs["tooltip"] = tooltip(", ".join(names))
                if self.o.edge_labels:
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
        home = self.home.get(tail, self.root.path)
        return self.value_type(names[0], self.index.graphs[home])

    def _layout_hints(self) -> list[Edge]:
        """Invisible edges keeping each expanded body between its header and exit boxes."""
        tails: dict[str, set[str]] = {}
        heads: dict[str, set[str]] = {}
        for tail, head, _ in self.pending:
            heads.setdefault(head, set()).add(tail)
            tails.setdefault(tail, set()).add(head)
        by_home: dict[str, list[str]] = {}
        for box, home in self.home.items():
            by_home.setdefault(home, []).append(box)
        hints = []
        for path in self.expanded_nodes:
            header, exit_box = self.entry[path], self.exit[path]
            for body in self.index.nodes[path].subgraphs:
                if body.path not in self.containers:
                    continue
                inside = body.path + "/"
                for box in by_home.get(body.path, ()):
                    if not any(t == header or self._inside(t, body.path, inside) for t in heads.get(box, ())):
                        hints.append(Edge(header, box, dict(styles.EDGE_STYLES["order"])))
                    if not any(h == exit_box or self._inside(h, body.path, inside)
                               for h in tails.get(box, ())):
                        hints.append(Edge(box, exit_box, dict(styles.EDGE_STYLES["order"])))
        return hints

    def _inside(self, box: str, body: str, prefix: str) -> bool:
        home = self.home.get(box, "")
        return home == body or home.startswith(prefix)

    # ---- overlay states ------------------------------------------------------------------------------------
    def rep(self, path: str) -> str | None:
        """The box standing for a node in this drawing (itself, its scope box or a collapsed owner)."""
        while path not in self.entry:
            ref = self.index.nodes.get(path)
            if ref is None or ref.graph.owner is None:
                return None
            path = ref.graph.owner
        return self.entry[path]

    def _apply_states(self) -> None:
        states: dict[str, str] = {}
        order = list(styles.NODE_STATES)

        def mark(paths, state: str) -> None:
            for path in paths:
                box = self.rep(path) if path else None
                if box is not None and (box not in states or order.index(state) < order.index(states[box])):
                    states[box] = state

        cursor, overlay = self.o.cursor, self.o.overlay
        if cursor is not None:
            mark([n for n in self.entry if n not in cursor.executed], "pending")
            mark(cursor.executed, "executed")
        mark(self.o.highlight, "match")
        if overlay is not None:
            mark(overlay.added, "added")
            mark(overlay.removed, "removed")
        if cursor is not None:
            owners = []
            ref = self.index.nodes.get(cursor.current or "")
            while ref is not None and ref.graph.owner is not None:
                owners.append(ref.graph.owner)
                ref = self.index.nodes[ref.graph.owner]
            mark(owners, "running")
            mark([cursor.current], "current")
            mark([cursor.error], "error")
            self._mark_iteration(cursor)
        exits = {self.entry[p]: self.exit[p] for p in self.expanded_nodes}
        for box, state in states.items():
            for name in (box, exits.get(box)):
                if name is not None:
                    self.boxes[name].attrs = styles.with_state(self.boxes[name].attrs, state)

    def _mark_iteration(self, cursor: TraceOverlay) -> None:
        """The current node's box says at which iteration (one index per enclosing loop) the cursor stands."""
        box = self.rep(cursor.current) if cursor.current else None
        if box is None or not cursor.iteration:
            return
        attrs = self.boxes[box].attrs
        at = ", ".join(str(i) for i in cursor.iteration)
        attrs["label"] = Html(attrs["label"].text + "<BR/>" + TINT.format("#e8590c", f"▶ iteration {at}"))
