"""Which module call each ONNX node of the main graph computes part of, from what the exporter wrote: dynamo's
node metadata (`pkg.torch.onnx.name_scopes`, else `namespace`), TorchScript's scoped node names
(`/encoder/gru/GRU`, the k-th call of a module as `/gcell_k/...`). Nodes the exporter left without a scope (a
Split dynamo adds, TorchScript's `Constant_28`) take the scope of the nodes they read from when those agree.
Every call of a module shares one scope in dynamo's metadata: its calls are told apart by node order (each
call a run of nodes of that scope, between nodes of other scopes)."""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field

from ..model.model import Model
from ..proto.graph import NodeRef, subgraph_attributes
from .captured import Captured

_SUFFIX = re.compile(r"^(?P<base>.+)_(?P<k>\d+)$")
Scope = tuple[tuple[str, "int | None"], ...]  # (module, call or None when the exporter does not say), outermost first


@dataclass
class Scopes:
    """The main graph's nodes in order, the scope of each (by node path) and how it was read."""

    nodes: list[NodeRef]
    scope: dict[str, Scope] = field(default_factory=dict)
    how: str = ""  # "dynamo metadata", "TorchScript names" or "" (no scopes found)
    stack: dict[str, str] = field(default_factory=dict)  # node path -> dynamo's stack trace

    def calls(self, module: str) -> dict[int, list[NodeRef]]:
        """The nodes of each call of `module` (nested modules' nodes included), in graph order."""
        found: dict[int, list[NodeRef]] = {}
        for node in self.nodes:
            for name, call in self.scope.get(node.path, ()):
                if name == module and call is not None:
                    found.setdefault(call, []).append(node)
        return found


def _metadata(node: NodeRef) -> dict[str, str]:
    return {entry.key: entry.value for entry in node.proto.metadata_props}


def _resolve(parts: list[str], captured: Captured, numbered: bool) -> Scope:
    """Module names from scope parts: each part a child's attribute name (or already a qualified name); with
    `numbered`, `name_k` not itself a module is the k-th call of `name` (Keras numbers calls from 1)."""
    found: list[tuple[str, int | None]] = []
    prefix = ""
    first = 1 if captured.framework == "Keras" else 0
    root = str(captured.modules[""].settings.get("name", "")) if "" in captured.modules else ""
    if root and parts and _SUFFIX.sub(r"\g<base>", parts[0]) == root:
        parts = parts[1:]  # tf2onnx's names start with the model's
    for part in parts:
        if not part:
            continue
        candidates = [f"{prefix}.{part}" if prefix else part, part]
        name = next((c for c in candidates if c in captured.modules), None)
        call: int | None = 0 if numbered else None
        if name is None and numbered:
            match = _SUFFIX.match(part)
            if match:
                base = f"{prefix}.{match['base']}" if prefix else match["base"]
                if base in captured.modules:
                    name, call = base, int(match["k"]) - first
        if name is None:
            break
        found.append((name, call))
        prefix = name
    return tuple(found)


def read_scopes(model: Model, captured: Captured) -> Scopes:
    """The scope of every node, in every graph (bodies too)."""
    nodes = list(model.nodes())
    scopes = Scopes(nodes)
    dynamo = any("pkg.torch.onnx.name_scopes" in _metadata(n) or "namespace" in _metadata(n) for n in nodes)
    for node in nodes:
        meta = _metadata(node)
        if dynamo:
            parts = _name_scopes(meta)
            if parts is None:
                continue
            scope = _resolve(parts[:-1], captured, numbered=False)
            if scope or not _in_loop_body(model, node):  # torch.scan's body: no module scopes, see _inherit
                scopes.scope[node.path] = scope
            if "pkg.torch.onnx.stack_trace" in meta:
                scopes.stack[node.path] = meta["pkg.torch.onnx.stack_trace"]
        elif node.proto.name.startswith("/"):
            scopes.scope[node.path] = _resolve(node.proto.name.split("/")[1:-1], captured, numbered=True)
        elif captured.framework == "Keras" and "/" in node.proto.name:
            scope = _resolve(node.proto.name.split("/")[:-1], captured, numbered=True)
            if scope:
                scopes.scope[node.path] = scope
    scopes.how = "dynamo metadata" if dynamo else "tf2onnx names" if captured.framework == "Keras" \
        else "TorchScript names" if scopes.scope else ""
    _by_parameters(model, scopes, captured)
    _inherit(scopes)
    if dynamo:
        _number_calls(scopes, captured)
    looped = {n.path for n in nodes if _in_loop_body(model, n)}
    for path, scope in scopes.scope.items():  # a module called once, or once per iteration: its only call
        scopes.scope[path] = tuple((name, 0 if call is None and (captured.modules[name].calls == 1 or path in looped)
                                    else call) for name, call in scope)
    return scopes


def _in_loop_body(model: Model, node: NodeRef) -> bool:
    """Whether the node lies in the body of a Loop or Scan of the main graph (a module called there is called
    once per iteration: its call k is iteration k)."""
    graph = node.graph
    return graph.depth == 1 and graph.owner is not None and model.node(graph.owner).proto.op_type in ("Loop", "Scan")


def _by_parameters(model: Model, scopes: Scopes, captured: Captured) -> None:
    """A node the exporter wrote no module scope for (inside a torch.cond branch) that reads a module's parameter
    (`calm.weight`) is that module's."""
    stored = {t.name for t in model.graph.initializer}
    stored |= {t.name for node in scopes.nodes for _, g in subgraph_attributes(node.proto) for t in g.initializer}
    for node in scopes.nodes:
        if scopes.scope.get(node.path):
            continue
        for name in node.proto.input:
            owner = name.rpartition(".")[0]
            if owner and name in stored and owner in captured.modules and captured.modules[owner].calls:
                chain = [owner]
                while "." in chain[0]:
                    chain.insert(0, chain[0].rpartition(".")[0])
                scopes.scope[node.path] = tuple((m, None) for m in chain if m in captured.modules)
                break


def _name_scopes(meta: dict[str, str]) -> list[str] | None:
    text = meta.get("pkg.torch.onnx.name_scopes")
    if text is not None:
        try:
            parts = ast.literal_eval(text)
            return [str(p) for p in parts]
        except (ValueError, SyntaxError):
            return None
    namespace = meta.get("namespace")  # ": Top/embed: Embedding/embedding: aten.embedding.default"
    if namespace is None:
        return None
    return [segment.split(":")[0].strip() for segment in namespace.split("/")]


def _inherit(scopes: Scopes) -> None:
    """Unscoped nodes take the scope their consumers agree on (the deepest common one: a node the exporter made
    while rewriting a module's operations feeds that module's nodes), else the one their producers agree on."""
    consumers: dict[str, list[str]] = {}
    for node in scopes.nodes:
        for name in node.proto.input:
            consumers.setdefault(name, []).append(node.path)
    for node in reversed(scopes.nodes):
        if node.path in scopes.scope:
            continue
        readers = [scopes.scope[path] for name in node.proto.output for path in consumers.get(name, [])
                   if path in scopes.scope]
        if readers and all(r for r in readers):
            scopes.scope[node.path] = tuple(os.path.commonprefix(readers))
    producer: dict[str, str] = {}
    for node in scopes.nodes:
        known = node.path in scopes.scope
        if not known:
            sources = [scopes.scope[producer[name]] for name in node.proto.input
                       if name in producer and producer[name] in scopes.scope]
            if sources:
                scopes.scope[node.path] = tuple(os.path.commonprefix(sources))  # works on any sequences
        for name in node.proto.output:
            producer[name] = node.path


def _number_calls(scopes: Scopes, captured: Captured) -> None:
    """dynamo's scopes name no call: the k-th run of a module's nodes (between nodes outside it) is its k-th
    call, when there are as many runs as the framework made calls; else every node is the first call's when the
    module was called once, and no call when it is ambiguous."""
    for module, info in captured.modules.items():
        runs: list[list[str]] = []
        inside = False
        for node in scopes.nodes:
            if node.graph.path:
                continue
            scope = scopes.scope.get(node.path)
            if scope is None:
                continue
            within = any(name == module for name, _ in scope)
            if within and not inside:
                runs.append([])
            if within:
                runs[-1].append(node.path)
            inside = within
        if len(runs) == info.calls or info.calls == 1:
            for k, run in enumerate(runs):
                for path in run:
                    call = k if len(runs) == info.calls else 0
                    scopes.scope[path] = tuple((n, call if n == module else c) for n, c in scopes.scope[path])
