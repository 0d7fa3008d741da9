"""What the Compare page shows of a Comparison: nodes coloured by their error, the step of both runs at one
cursor position (lockstep), error over iterations and time steps, and the gates of both sides."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..cells import recurrent_cells
from ..compare import Comparison, ValueComparison
from ..compare.cell_sides import executions
from ..compare.recording import Recording
from ..model.model import Model
from ..trace.trace import Event
from ..trace.values import describe
from .charts import Chart, colours, line_svg, lines_chart
from .draw_facts import ModelFacts
from .gates import cell_label
from .heat import NodeValues
from .plots import lines_figure
from .svg_axes import Axis, Series, numeric_axis

FLOOR = 1e-12  # errors below this are drawn as this (a log scale has no zero)


def error_values(comparison: Comparison) -> NodeValues:
    """Max abs error per node of side A whose values go beyond the tolerance somewhere, over its values and
    executions; nodes within tolerance (or with no aligned value) are absent: drawn unfilled."""
    worst: dict[str, float] = {}
    for v in comparison.values:
        if not v.ok:
            worst[v.node] = max(worst.get(v.node, 0.0), max(v.max_abs, FLOOR))
    return NodeValues(f"max abs error against {comparison.b_label}, beyond the tolerance "
                      f"({comparison.tolerance_text}; unfilled: within)", worst)


@dataclass(frozen=True)
class StepPair:
    """One step of side A and, where there is one, the same step of side B."""

    a: Event
    b_event: int | None  # index of B's event (when B is a recorded run)
    rows: list[dict[str, Any]]


def worst_rows(model: Model, comparison: Comparison, count: int = 50) -> list[dict[str, Any]]:
    """The worst values as table rows, each with the module path its node belongs to (layers.py) after the node."""
    facts = ModelFacts.of(model)
    out = []
    for row in comparison.rows(count):
        node = row["node"]
        module = facts.module_of(node) if node in model.index.nodes else ""
        out.append({"node": node, "module": module, **{k: v for k, v in row.items() if k != "node"}})
    return out


def counterparts(comparison: Comparison) -> dict[tuple[str, str], ValueComparison]:
    return {(v.node, v.name): v for v in comparison.values}


def lockstep(comparison: Comparison, index: int) -> StepPair:
    """A's event `index` with, for each value it wrote, B's value at the same iteration and the error."""
    a, b = comparison.a, comparison.b
    assert a is not None and a.trace is not None and b is not None
    event = a.trace.events[index]
    found = counterparts(comparison)
    rows, b_event = [], None
    for name, value in event.outputs.items():
        v = found.get((event.node, name))
        error = next((e for e in v.errors if e.iteration == event.iteration), None) if v else None
        theirs = _b_value(b, v, event.iteration)
        if v is not None and b.kind == "explorer":
            b_event = b.produced[(v.b_node, v.b_name)].order.get(event.iteration, b_event)
        rows.append({"value": name, "A": describe(value), "B": "—" if v is None else f"{v.b_name}: {theirs}",
                     "max abs": None if error is None else error.max_abs,
                     "max rel": None if error is None else error.max_rel,
                     "within tolerance": None if error is None else error.ok})
    return StepPair(event, b_event, rows)


def _b_value(b: Recording, v: ValueComparison | None, iteration: tuple[int, ...]) -> str:
    if v is None:
        return "not aligned"
    produced = b.produced.get((v.b_node, v.b_name))
    if produced is None or iteration not in produced.values:
        return "did not run"
    return describe(produced.values[iteration])


def divergence_index(comparison: Comparison) -> int | None:
    """The event index of the first divergence in A's run."""
    first = comparison.first
    if first is None or comparison.a is None:
        return None
    return comparison.a.produced[(first.node, first.name)].order.get(first.iteration)


def growth_choices(comparison: Comparison) -> dict[str, str]:
    """Values worth an error-over-time plot (they ran in loops, or are a recurrent node's Y), worst first:
    key -> label."""
    chosen = [v for v in comparison.values if (v.in_loop and len(v.errors) > 1) or v.steps]
    chosen.sort(key=lambda v: (v.ok, -v.max_abs))
    return {f"{v.node}\x1f{v.name}": f"{v.name} · {v.node}" + (" ✗" if not v.ok else "") for v in chosen}


def growth_figure(v: ValueComparison) -> go.Figure:
    """Max abs error of one value per execution (over iterations), or per time step for a recurrent Y."""
    if v.steps and len(v.errors) <= 1:
        return lines_figure({"max abs error": np.maximum(v.steps, FLOOR)}, f"{v.name}: error per time step",
                            "time step", "max abs error")
    figure = go.Figure(go.Scatter(x=[str(e.iteration) for e in v.errors], y=np.maximum(v.growth, FLOOR),
                                  mode="lines+markers", name="max abs error"))
    figure.update_xaxes(type="category", title="iteration")
    figure.update_yaxes(type="log", title="max abs error")
    figure.update_layout(title=f"{v.name}: error over iterations", height=320, margin={"t": 40, "b": 40})
    return figure


def growth_chart(v: ValueComparison) -> Chart:
    """growth_figure's chart (inline SVG or plotly)."""
    if v.steps and len(v.errors) <= 1:
        return lines_chart({"max abs error": np.maximum(v.steps, FLOOR)}, f"{v.name}: error per time step",
                           "time step", "max abs error")

    def svg() -> str:
        labels = [str(e.iteration) for e in v.errors]
        y = np.maximum(np.asarray(v.growth, np.float64), FLOOR)
        series = Series("max abs error", np.arange(len(labels), dtype=np.float64), y, colours(1)[0])
        return line_svg(f"{v.name}: error over iterations", Axis("iteration", -0.5, len(labels) - 0.5,
                                                                categories=labels),
                        numeric_axis(y, "max abs error", log=True), [series])

    return Chart(svg, lambda: growth_figure(v))


def recurrent_runs(comparison: Comparison) -> dict[str, str]:
    """Every GRU/LSTM/RNN execution of side A: key -> label."""
    a = comparison.a
    if a is None or a.trace is None:
        return {}
    runs = {f"{e.node}\x1f{','.join(map(str, e.iteration))}":
            f"{e.op_type} · {e.node}" + (f" · iteration {e.iteration}" if e.iteration else "")
            for e in a.trace.events if "gates" in e.info and not e.summarized}
    if a.model is not None:
        for cell in recurrent_cells(a.model):
            if cell.form != "op":
                for iteration in executions(a, cell):
                    runs[f"{cell.path}\x1f{','.join(map(str, iteration))}"] = \
                        cell_label(cell) + (f" · iteration {iteration}" if iteration else "")
    return runs


def parse_run(key: str) -> tuple[str, tuple[int, ...]]:
    node, _, iteration = key.partition("\x1f")
    return node, tuple(int(i) for i in iteration.split(",") if i)
