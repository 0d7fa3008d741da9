"""The boxes and clusters of a drawing: graph inputs and outputs, op nodes (labels with attributes and folded
initializers), control-flow nodes drawn around their bodies, scopes as clusters or collapsed boxes."""
from __future__ import annotations

import onnx

from ..proto.graph import GraphRef, NodeRef, node_ids
from . import styles
from .canvas import Canvas
from .dot_escape import html, svg_id, tooltip
from .draw_plan import Plan
from .grouping import Scope, auto_depth
from .labels import attribute_lines, initializer_text, op_title
from .navigation import breadcrumb
from .scene import Attrs, Cluster, Html

MAX_FOLDED = 3
SMALL = '<FONT POINT-SIZE="8">{}</FONT>'
TINT = '<FONT POINT-SIZE="8" COLOR="{}">{}</FONT>'


class BoxDrawer:
    """Draws the boxes and clusters of the plan's root graph (and the bodies and scopes it opens) on a canvas."""

    def __init__(self, plan: Plan, canvas: Canvas) -> None:
        self.plan = plan
        self.facts = plan.facts
        self.o = plan.o
        self.canvas = canvas
        self._init_text: dict[int, str] = {}

    def draw(self) -> Cluster:
        root = Cluster(svg_id("graph", self.plan.root.path))
        root.attrs = self._root_attrs()
        self._draw_graph(self.plan.root, root, is_root=True)
        return root

    def _root_attrs(self) -> Attrs:
        plan = self.plan
        if plan.root is plan.top and plan.focus_scope is None:
            return {}
        target = plan.focus_scope.key if plan.focus_scope is not None else plan.root.path
        crumbs = " › ".join(html(title, 48) for _, title in breadcrumb(self.facts.model, target, top=plan.top.path))
        return {"label": Html(f"<B>{crumbs}</B>"), "labelloc": "t", "labeljust": "l"}

    def _draw_graph(self, graph: GraphRef, container: Cluster, is_root: bool = False) -> None:
        canvas = self.canvas
        canvas.drawn.append(graph)
        canvas.containers[graph.path] = container
        canvas.members[graph.path] = []
        scoped = is_root and self.plan.focus_scope is not None
        if not scoped:
            self._draw_inputs(graph, container)
        members: list
        if scoped:
            members = self.plan.focus_scope.members
        elif self.o.group_scopes:
            members = self.facts.tree(graph).members
        else:
            members = [graph.prefix + i for i in node_ids(graph.proto)]
        depth = auto_depth(members, self.o.max_boxes, self.plan.weight) if self.o.group_scopes else None
        self._draw_members(graph, container, members, depth)
        if not scoped:
            self._draw_outputs(graph, container)

    def _draw_members(self, graph: GraphRef, container: Cluster, members: list, depth: int | None) -> None:
        for member in members:
            if not isinstance(member, Scope):
                self._draw_node(member, graph, container)
            elif self.plan.scope_expanded(member, depth):
                cluster = Cluster(svg_id("scope", member.key), {
                    **styles.SCOPE_CLUSTER_STYLE, "label": Html(html(member.label, 40)),
                    "tooltip": tooltip(f"scope {member.key} · {member.size} nodes")})
                container.clusters.append(cluster)
                self.canvas.open_scopes.append(member.key)
                self._draw_members(graph, cluster, member.members, depth)
            else:
                self._draw_scope_box(graph, container, member)

    def _draw_scope_box(self, graph: GraphRef, container: Cluster, scope: Scope) -> None:
        name = svg_id("scope", scope.key)
        paths = scope.nodes()
        ops = self.facts.scope_ops(scope)
        summary = " ".join(f"{op}×{n}" if n > 1 else op for op, n in ops)
        label = f"<B>▸ {html(scope.label, 40)}</B><BR/>"
        module = scope.key[len(graph.prefix):].lstrip("/")
        if "#" not in scope.key and module != scope.label:  # a layer is named by its whole module path
            label += SMALL.format(html(module, 48)) + "<BR/>"
        label += SMALL.format(f"{scope.size} nodes · {html(summary, 48)}")
        attrs: Attrs = {**styles.VALUE_STYLES["scope"], "id": name, "label": Html(label),
                 "tooltip": tooltip(f"scope {scope.key}\n{scope.size} nodes")}
        self.canvas.add_box(container, name, attrs, graph.path)
        self.canvas.scope_boxes[name] = scope
        for path in paths:
            self.canvas.entry[path] = self.canvas.exit[path] = name
            self.canvas.members[graph.path].append(path)

    def _draw_inputs(self, graph: GraphRef, container: Cluster) -> None:
        g = graph.proto
        roles = self.facts.roles(graph)
        initializers = {t.name for t in g.initializer} if not graph.path else set()
        rank: list[str] = []
        for i, value in enumerate(g.input):
            if value.name in initializers:
                continue
            name = svg_id("input", graph.path, str(i))
            kind = "input" if not graph.path else "formal_input"
            role = roles.inputs[i] if roles and i < len(roles.inputs) else ("input" if not graph.path else "")
            self.canvas.add_box(container, name, self._value_attrs(kind, name, value.name, role, graph), graph.path)
            self.canvas.formal_in[(graph.path, i)] = name
            rank.append(name)
        if len(rank) > 1:
            container.same_rank.append(rank)

    def _draw_outputs(self, graph: GraphRef, container: Cluster) -> None:
        roles = self.facts.roles(graph)
        names = []
        for i, value in enumerate(graph.proto.output):
            name = svg_id("output", graph.path, str(i))
            kind = "output" if not graph.path else "formal_output"
            default = "output" if not graph.path else ""
            role = roles.outputs[i] if roles and i < len(roles.outputs) else default
            self.canvas.add_box(container, name, self._value_attrs(kind, name, value.name, role, graph), graph.path)
            names.append(name)
        self.canvas.formal_out[graph.path] = names
        if len(names) > 1:
            container.same_rank.append(names)

    def _value_attrs(self, kind: str, box: str, value: str, role: str, graph: GraphRef) -> Attrs:
        typ = self.facts.value_type(value, graph)
        lines = [f"<B>{html(value, 40)}</B>" if value else "<I>∅</I>"]
        if role:
            lines.append(SMALL.format(html(role, 48)))
        if typ:
            lines.append(SMALL.format(html(typ, 48)))
        tip = f"{role or kind} {value}" + (f"\n{typ}" if typ else "")
        return {**styles.VALUE_STYLES[kind], "id": box, "label": Html("<BR/>".join(lines)), "tooltip": tooltip(tip)}

    def _draw_node(self, path: str, graph: GraphRef, container: Cluster) -> None:
        canvas = self.canvas
        ref = self.facts.index.nodes[path]
        canvas.members[graph.path].append(path)
        open_bodies = [b for b in ref.subgraphs if self.plan.body_expanded(b.path)]
        closed = [b for b in ref.subgraphs if b not in open_bodies]
        name = svg_id("node", path)
        attrs: Attrs = {**styles.op_style(ref.op_type), "id": name,
                 "label": Html(self._op_label(ref, graph, closed)), "tooltip": tooltip(self._op_tip(ref))}
        if not open_bodies:
            canvas.add_box(container, name, attrs, graph.path)
            canvas.entry[path] = canvas.exit[path] = name
            return
        wrapper = Cluster(svg_id("wrapper", path), {**styles.WRAPPER_STYLE, "label": ""})
        container.clusters.append(wrapper)
        canvas.add_box(wrapper, name, attrs, graph.path)
        for body in open_bodies:
            cluster = Cluster(svg_id("graph", body.path), {
                **styles.body_cluster_style(body.depth),
                "label": Html(f"<B>{html(op_title(ref.proto), 48)} · {html(body.attribute or '', 32)}</B>"),
                "tooltip": tooltip(f"{body.path}\n{self.facts.sizes.get(body.path, 0)} nodes")})
            wrapper.clusters.append(cluster)
            self._draw_graph(body, cluster)
        exit_name = svg_id("exit", path)
        outs = ", ".join(o for o in ref.proto.output if o)
        exit_attrs: Attrs = {
            **styles.VALUE_STYLES["exit"], "id": exit_name,
            "label": Html(SMALL.format(f"end {html(op_title(ref.proto), 40)} → {html(outs, 40)}")),
            "tooltip": tooltip(f"outputs of {path}: {outs}")}
        canvas.add_box(wrapper, exit_name, exit_attrs, graph.path)
        canvas.entry[path], canvas.exit[path] = name, exit_name
        canvas.expanded_nodes.append(path)

    def _op_label(self, ref: NodeRef, graph: GraphRef, closed: list[GraphRef]) -> str:
        node = ref.proto
        shown = node.name
        if self.o.group_scopes and ref.path in self.facts.tree(graph).scope_of:
            shown = shown.rsplit("/", 1)[-1]  # the scope cluster around it already says the rest
        if shown == node.op_type:
            shown = ""
        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        title = f"<B>{html(op, 40)}</B>" + (f" '{html(shown, 32)}'" if shown else "")
        lines = [title] + [SMALL.format(html(line)) for line in attribute_lines(node)]
        if self.o.fold_initializers:
            folded = []
            for name in dict.fromkeys(n for n in node.input if n):
                found = self.facts.lookup(name, graph)
                if found is not None and found.tensor is not None:
                    folded.append(self.initializer_html(name, found.tensor))
            if len(folded) > MAX_FOLDED:
                folded = folded[:MAX_FOLDED - 1] + [f"+{len(folded) - MAX_FOLDED + 1} more initializers"]
            lines += [TINT.format(styles.LABEL_TINTS["initializer"], text) for text in folded]
        for body in closed:
            size, depth = self.facts.sizes.get(body.path, 0), self.facts.depths[body.path]
            badge = f"▸ {body.attribute} · {size} nodes · depth {depth}"
            lines.append(TINT.format(styles.LABEL_TINTS["collapsed"], html(badge)))
        return "<BR/>".join(lines)

    def initializer_html(self, name: str, tensor: onnx.TensorProto) -> str:
        """An initializer's name, type and (when small) values, escaped for a label."""
        text = self._init_text.get(id(tensor))
        if text is None:
            text = self._init_text[id(tensor)] = html(initializer_text(name, tensor))
        return text

    @staticmethod
    def _op_tip(ref: NodeRef) -> str:
        node = ref.proto
        ins = ", ".join(n or "∅" for n in node.input)
        outs = ", ".join(n or "∅" for n in node.output)
        named = "" if node.name and ref.path.endswith(node.name) else f"{node.op_type} {node.name!r}\n"
        return f"{ref.path}\n{named}({ins}) → ({outs})"
