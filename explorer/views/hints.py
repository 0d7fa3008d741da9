"""Hints naming the model input to change when a run did nothing (a Loop or Scan that ran zero times) or failed:
the graph inputs a value is computed from, found by walking producers back (GraphIndex resolves each name in its
graph or an enclosing one). Hints
are markdown with every model name escaped."""
from __future__ import annotations

from ..model.model import Model
from ..reports.rnn_report import rnn_report
from ..spec.rnn import cell_kind
from ..trace.trace import Trace
from .cursor import node_label
from .markup import md, md_code
from .tables import short_text

IDLE_OPS = ("Loop", "Scan", "SequenceMap")


def inputs_behind(model: Model, graph_path: str, names: list[str]) -> list[str]:
    """The main graph's inputs that the values `names` (seen from graph `graph_path`) are computed from, in the
    model's input order."""
    index = model.index
    declared = [spec.name for spec in model.inputs]
    found: set[str] = set()
    seen: set[tuple[str, str]] = set()
    stack = [(graph_path, name) for name in names if name]
    while stack:
        path, name = stack.pop()
        if (path, name) in seen:
            continue
        seen.add((path, name))
        where = index.resolve(name, path)  # this graph's or an enclosing one's definition (a capture)
        if where is None:
            continue
        if where.kind == "node" and where.node is not None:
            node = index.nodes[where.node]
            home = where.graph.path
            stack.extend((home, n) for n in node.proto.input if n)
            stack.extend((home, n) for body in node.subgraphs for n in index.captures(body.path))
        elif not where.graph.path and name in declared:
            found.add(name)
    return [name for name in declared if name in found]


def _named(model: Model, inputs: list[str]) -> str:
    specs = {spec.name: spec for spec in model.inputs}
    return ", ".join(f"{md_code(name)} ({md(specs[name].describe())})" for name in inputs)


def idle_loops(model: Model, trace: Trace) -> list[str]:
    """One hint per Loop/Scan/SequenceMap execution that ran zero iterations, naming the inputs behind its trip
    count, condition or scanned sequence."""
    hints: list[str] = []
    seen: set[str] = set()
    for event in trace.events:
        if event.op_type not in IDLE_OPS or event.info.get("iterations") != 0 or event.node in seen:
            continue
        seen.add(event.node)
        node = model.node(event.node)
        driving = [n for n in node.proto.input[:2] if n] if event.op_type == "Loop" else [
            n for n in node.proto.input if n]
        behind = inputs_behind(model, node.graph.path, driving)
        values = ", ".join(f"{md_code(n)} = {md(short_text(event.inputs[n]))}" for n in driving if n in event.inputs)
        why = f" ({values})" if values else ""
        source = f": it depends on input {_named(model, behind)}, so try other values or sizes for it" if behind else ""
        hints.append(f"{md(node_label(node))} ran 0 iterations{why}, so its body did nothing{source}.")
    return hints


def failure_hint(model: Model, node_path: str) -> str | None:
    """For a run that failed at `node_path`: the inputs the failing node's inputs are computed from, when other
    sizes or values could run it; a recurrent node that cannot run at any size (its state is not hidden_size
    wide) gets that diagnosis instead."""
    if node_path not in model.index.nodes:
        return None
    node = model.node(node_path)
    if cell_kind(node) is not None:
        errors = [f.message for f in rnn_report(model, node_path).findings if f.level == "error"]
        if errors:
            return f"{md(node_label(node))}: {md(errors[0])}."
    reads = [n for n in node.proto.input if n]
    behind = inputs_behind(model, node.graph.path, reads)
    if not behind:
        return None
    return (f"{md(node_label(node))} reads values computed from input {_named(model, behind)}: the run may work with other "
            "sizes or values for it (set them in the sidebar: sizes of its dimensions, or your own inputs).")
