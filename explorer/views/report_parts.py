"""The pieces of a shared report, each an HTML fragment with every string from the model escaped: the drawing with
the departing node and its upstream path marked, the first divergence in words, where it happens (the loops'
iterations, the If branches taken), the worst values, the departing tensors' plots and recurrent cells' gates."""
from __future__ import annotations

import contextlib
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..bridge.report import FrameworkComparison
from ..cells import recurrent_cells
from ..compare.report import Comparison
from ..model.cones import upstream
from ..model.model import Model
from ..trace.trace import Event, Trace
from . import styles
from .compare import error_values
from .dot import model_to_dot
from .framework import cause_nodes
from .framework import error_values as framework_errors
from .overlays import TraceOverlay
from .render import GraphvizError, GraphvizMissing, render_svg
from .svg_plots import heatmap, line_plot

LOOPS = ("Loop", "Scan", "SequenceMap")
PLOT_COLOURS = {"A": styles.REPORT_COLOURS["a"], "B": styles.REPORT_COLOURS["b"],
                "A − B": styles.REPORT_COLOURS["diff"]}
MAX_GATE_CELLS = 3


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def table(rows: Sequence[Mapping[str, Any]], numeric: Iterable[str] = ()) -> str:
    """Rows (dicts with the same keys) as an HTML table; `numeric` columns right-aligned to 4 digits."""
    if not rows:
        return ""
    numbers = set(numeric)
    head = "".join(f"<th>{esc(k)}</th>" for k in rows[0])
    body = "".join("<tr>" + "".join(
        f'<td class="num">{v:.4g}</td>' if k in numbers and isinstance(v, (int, float)) else f"<td>{esc(v)}</td>"
        for k, v in row.items()) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def focus_event(trace: Trace | None, comparison: Comparison | None, event_index: int | None) -> Event | None:
    """The event the report is about: the first divergence's execution, else the given one, else the node that
    failed (a partial trace), else the first that wrote NaN or Inf, else none."""
    if trace is None or not trace.events:
        return None
    first = comparison.first if comparison is not None else None
    if first is not None and comparison is not None and comparison.a is not None:
        produced = comparison.a.produced.get((first.node, first.name))
        if produced is not None and first.iteration in produced.order:
            return trace.events[produced.order[first.iteration]]
    if event_index is not None:
        return trace.events[event_index]
    if trace.error is not None:  # a partial trace: its last event is the node that failed
        return trace.events[-1]
    return trace.first_nonfinite()


def _mark(svg: str, box_id: str, css: str) -> str:
    """Adds a class to the group graphviz wrote for one box."""
    pattern = re.compile(r'<g id="' + re.escape(html.escape(box_id, quote=True)) + r'" class="node"')
    return pattern.sub(lambda m: m.group(0)[:-1] + f' {css}"', svg, count=1)


def drawing_html(model: Model, trace: Trace | None, comparison: Comparison | None, event: Event | None,
                 framework: FrameworkComparison | None = None) -> str:
    """The graph with its bodies, the current node's box classed `departing` and its upstream boxes `on-path`;
    against a framework model, its departing nodes filled by their error and those departing by their own error
    (the causes) classed `departing`."""
    cursor = TraceOverlay.from_trace(trace, event.index) if trace is not None and event is not None else None
    path = upstream(model, event.node) - {event.node} if event is not None else set()
    values = error_values(comparison) if comparison is not None else \
        framework_errors(framework) if framework is not None else None
    drawing = model_to_dot(model, cursor=cursor, highlight=path, values=values, edge_labels=None)
    try:
        svg = render_svg(drawing.dot)
    except (GraphvizMissing, GraphvizError) as exc:
        return f'<p class="muted">No drawing: {esc(exc)}</p>'
    svg = svg[svg.index("<svg"):]
    focus = ""
    marked = [event.node] if event is not None else cause_nodes(framework) if framework is not None else []
    for node in marked:
        box = drawing.nodes.get(node)
        if box is not None:
            focus = focus or box
            svg = _mark(svg, box, "departing")
    for node in path:
        box = drawing.nodes.get(node)
        if box is not None and box != focus:
            svg = _mark(svg, box, "on-path")
    tools = ('<div id="graph-tools"><button id="zoom-in" type="button">+</button>'
             '<button id="zoom-out" type="button">−</button><button id="zoom-fit" type="button">fit</button>'
             + ('<button id="zoom-departing" type="button">to the departing node</button>' if focus else "")
             + '<span class="muted"> wheel to zoom, drag to pan</span></div>')
    return f'{tools}<div id="graph" data-focus="{esc(focus)}">{svg}</div>'


def enclosing_loops(model: Model, node_path: str) -> list[tuple[str, str]]:
    """(op type, path) of each Loop/Scan/SequenceMap holding a node, outermost first: one per iteration index."""
    found = []
    graph = model.index.nodes[node_path].graph
    while graph.owner is not None:
        owner = model.index.nodes[graph.owner]
        if owner.op_type in LOOPS:
            found.append((owner.op_type, owner.path))
        graph = owner.graph
    return found[::-1]


def where_html(model: Model, trace: Trace, event: Event) -> str:
    """The step in words: its event index, the iteration of each enclosing loop, the If branches taken there."""
    items = [f"<li>step {event.index + 1} of {len(trace.events)}: node <code>{esc(event.node)}</code> "
             f"({esc(event.op_type)})</li>"]
    loops = enclosing_loops(model, event.node)
    if event.iteration:
        parts = [f"{esc(op)} <code>{esc(path)}</code> iteration {i}" for (op, path), i in zip(loops, event.iteration)]
        items.append(f"<li>iteration tuple {esc(event.iteration)}: {'; '.join(parts)}</li>")
    taken = dict(TraceOverlay.from_trace(trace, event.index).branches)
    graph = model.index.nodes[event.node].graph
    while graph.owner is not None:  # the Ifs holding the node took the branch it is in
        if model.index.nodes[graph.owner].op_type == "If" and graph.attribute is not None:
            taken[graph.owner] = graph.attribute
        graph = model.index.nodes[graph.owner].graph
    for node, branch in sorted(taken.items()):
        items.append(f"<li>If <code>{esc(node)}</code> took <code>{esc(branch)}</code></li>")
    return "<ul>" + "".join(items) + "</ul>"


def divergence_html(comparison: Comparison) -> str:
    """The verdict and the first divergence in words, with the departing node's and value's names as text."""
    first = comparison.first
    lines = [f"<p>A: <span class=\"name\">{esc(comparison.a_label)}</span><br>"
             f"B: <span class=\"name\">{esc(comparison.b_label)}</span></p>"]
    if first is None:
        verdict = "no verdict: " + "; ".join(comparison.errors.values()) if comparison.errors else \
            "every aligned value agrees within the tolerance"
        lines.append(f'<p class="verdict agree">{esc(verdict)}</p>')
    else:
        lines.append(f'<p class="verdict">First divergence: node <code class="departing-name">{esc(first.node)}'
                     f"</code> ({esc(first.op_type)}), value <code>{esc(first.name)}</code>"
                     + (f" at iteration {esc(first.iteration)}" if first.iteration else "")
                     + f"<br>{esc(first.describe())}</p>")
    lines += [f"<p>gates: {esc(g.describe())}</p>" for g in comparison.gates]
    lines += [f'<p class="muted">{esc(note)}</p>' for note in comparison.notes]
    return "".join(lines)


def _array(value: Any) -> np.ndarray | None:
    if isinstance(value, np.ndarray) and value.size and value.dtype.kind in "biuf":
        return value.astype(np.float64)
    return None


def tensors_html(comparison: Comparison) -> str:
    """The departing value on both sides and their difference, flattened, and |A − B| as a heatmap."""
    first = comparison.first
    if first is None or comparison.a is None or comparison.b is None:
        return ""
    a_side = comparison.a.produced.get((first.node, first.name))
    b_side = comparison.b.produced.get((first.b_node, first.b_name))
    a = _array(a_side.values.get(first.iteration)) if a_side is not None else None
    b = _array(b_side.values.get(first.iteration)) if b_side is not None else None
    if a is None or b is None or a.shape != b.shape:
        return '<p class="muted">The departing value is not a numeric tensor of one shape on both sides.</p>'
    name = first.name
    plots = [line_plot({"A": a, "B": b}, f"{name}: A and B (flattened, shape {list(a.shape)})", PLOT_COLOURS),
             line_plot({"A − B": a - b}, f"{name}: A − B", PLOT_COLOURS)]
    if a.ndim >= 2:
        plots.append(heatmap(np.abs(a - b).reshape(-1, a.shape[-1]), f"{name}: |A − B|", row_label="rows",
                             column_label="last axis"))
    return '<div class="plots">' + "".join(plots) + "</div>"


def _gate_maps(gates: Mapping[str, np.ndarray], side: str, direction: int, batch: int, step: int | None) -> list[str]:
    maps = []
    for letter, series in gates.items():
        if letter == "mask" or np.ndim(series) != 4:
            continue
        z = np.asarray(series)[:, direction, batch, :]
        maps.append(heatmap(z, f"{side} · {letter}", marked_row=step))
    return maps


def gates_html(model: Model, trace: Trace, comparison: Comparison | None,
               cells: Sequence[str] | None = None, event: Event | None = None) -> str:
    """Each departing recurrent cell's gates on both sides at its departing execution, the departing step outlined;
    without a departure, the gates of the cells asked for (default: the first that ran) at `event` when it is
    the cell's, else at their first run."""
    sections = []
    departures = comparison.gates if comparison is not None else []
    for g in departures[:MAX_GATE_CELLS]:
        maps = []
        try:
            maps += _gate_maps(trace.gates(g.node, g.iteration), "A", g.direction, g.batch_item, g.step)
        except KeyError:
            continue
        other = comparison.b.trace if comparison is not None and comparison.b is not None else None
        if other is not None:
            with contextlib.suppress(KeyError):
                maps += _gate_maps(other.gates(g.node, g.iteration), "B", g.direction, g.batch_item, g.step)
        sections.append(f"<h3><code>{esc(g.node)}</code> ({esc(g.op_type)}), step {g.step} departs "
                        f"(direction {g.direction}, batch item {g.batch_item})</h3>"
                        f'<div class="plots">{"".join(maps)}</div>')
    if sections:
        return "".join(sections)
    wanted = list(cells) if cells is not None else [c.path for c in recurrent_cells(model)]
    for path in wanted:
        if len(sections) >= (len(wanted) if cells is not None else 1):
            break
        try:
            events = trace.events_of(path)
            iteration = event.iteration if event is not None and event.node == path else \
                events[0].iteration if events else ()
            gates = trace.gates(path, iteration)
        except KeyError:
            continue
        maps = _gate_maps(gates, "A", 0, 0, None)
        if maps:
            sections.append(f"<h3><code>{esc(path)}</code> at iteration {esc(iteration)} (direction 0, batch "
                            "item 0)</h3>"
                            f'<div class="plots">{"".join(maps)}</div>')
    return "".join(sections)


def event_values_html(event: Event) -> str:
    """The values a step read and wrote, each as a line plot."""
    plots = []
    for direction, values in (("in", event.inputs), ("out", event.outputs)):
        for name, value in values.items():
            array = _array(value)
            if array is not None:
                plots.append(line_plot({"A": array}, f"{direction}: {name} (shape {list(array.shape)})",
                                       PLOT_COLOURS))
    return '<div class="plots">' + "".join(plots) + "</div>" if plots else ""
