"""explorer's objects in Jupyter: a model, a Trace, a comparison, a recurrent cell and a sweep result display as
HTML (`_repr_html_`, attached by `install`), made of the report's pieces; `show(x)` opens the same interactively
(a step slider as ipywidgets where installed, the static view otherwise). The HTML holds no script and styles
only elements under its own class, so it sits in a notebook page without touching the rest."""
from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from ..cells import RecurrentCell
from ..compare.report import Comparison
from ..model.model import Model
from ..sweep.api import SweepResult
from ..sweep.rows import verdict_of
from ..trace.trace import Trace
from ..trace.values import describe
from . import styles
from .dot import model_to_dot
from .render import GraphvizError, GraphvizMissing, render_svg
from .report_parts import divergence_html, esc, event_values_html, gates_html, table, tensors_html, where_html

_C = styles.REPORT_COLOURS
STYLE = (f"<style>.xpl {{ color: {_C['text']}; }} .xpl table {{ border-collapse: collapse; }} "
         f".xpl th, .xpl td {{ border-bottom: 1px solid {_C['rule']}; padding: 2px 6px; text-align: left; }} "
         f".xpl .muted {{ color: {_C['muted']}; }} .xpl .plots {{ display: flex; flex-wrap: wrap; gap: 8px; }} "
         f".xpl svg {{ max-width: 100%; height: auto; }} .xpl .verdict {{ border-left: 4px solid "
         f"{_C['departing']}; padding: 4px 8px; }} .xpl .verdict.agree {{ border-left-color: {_C['muted']}; }} "
         f".xpl .plot-title {{ font-size: 12px; fill: {_C['text']}; }} .xpl .plot-tick {{ font-size: 10px; "
         f"fill: {_C['muted']}; }} .xpl .plot-frame {{ fill: none; stroke: {_C['rule']}; }}</style>")
MAX_DRAWN_NODES = 400  # a bigger model shows its summary only: a notebook cell is no place for its drawing


def _wrap(title: str, body: str) -> str:
    return f'{STYLE}<div class="xpl"><strong>{esc(title)}</strong>{body}</div>'


def model_html(model: Model) -> str:
    """The model's inputs, outputs and node count, and its drawing with nested bodies (small models)."""
    rows = [{"": "input", "name": s.name, "type": s.describe()} for s in model.inputs]
    rows += [{"": "output", "name": s.name, "type": s.describe()} for s in model.outputs]
    body = f"<p>{len(model.index.nodes)} nodes in {len(model.index.graphs)} graphs</p>" + table(rows)
    if len(model.index.nodes) <= MAX_DRAWN_NODES:
        try:
            svg = render_svg(model_to_dot(model, edge_labels=None).dot)
            body += svg[svg.index("<svg"):]
        except (GraphvizMissing, GraphvizError) as exc:
            body += f'<p class="muted">No drawing: {esc(exc)}</p>'
    return _wrap(f"Model {model.source}", body)


def trace_html(trace: Trace) -> str:
    """The run in numbers: events, iterations, seconds, outputs, the first NaN or Inf, the error of a failed run."""
    rows = [{"output": name, "value": describe(value)} for name, value in trace.outputs.items()]
    lines = [f"{len(trace.events)} events, {len(trace.iteration_records)} loop iterations, {trace.seconds:.4f} s"
             + ("" if trace.complete else " (partial)")]
    bad = trace.first_nonfinite()
    if bad is not None:
        lines.append(f"first NaN or Inf: node {bad.node!r} ({bad.op_type}) at iteration {bad.iteration}")
    if trace.error is not None:
        lines.append(f"the run failed: {trace.error.message}")
    body = "".join(f"<p>{esc(line)}</p>" for line in lines) + table(rows)
    return _wrap(f"Trace of {trace.model_source}", body)


def comparison_html(comparison: Comparison) -> str:
    """The verdict, the first divergence in words, the worst values, the departing tensors and gates."""
    body = divergence_html(comparison) + table(comparison.rows(8), ("max abs", "max rel")) + tensors_html(comparison)
    trace = comparison.a.trace if comparison.a is not None else None
    model = comparison.a.model if comparison.a is not None else None
    if trace is not None and model is not None and comparison.gates:
        body += gates_html(model, trace, comparison)
    return _wrap("Comparison", body)


def cell_html(cell: RecurrentCell, trace: Trace | None = None, model: Model | None = None) -> str:
    """What the cell is and which node computes each gate; with a run of its model, its gates as heatmaps."""
    rows = [{"direction": d, "gate": gate, "node": node}
            for d, gates in zip(cell.directions, cell.gate_nodes) for gate, node in gates.items()]
    body = f"<p>{esc(cell.describe())} at <code>{esc(cell.path)}</code></p>" + table(rows)
    if trace is not None and model is not None:
        body += gates_html(model, trace, None, [cell.path])
    return _wrap(f"Recurrent cell {cell.path}", body)


def sweep_html(result: SweepResult, top: int = 20) -> str:
    """The verdict counts and the inputs worst first."""
    rows = []
    for row in result.worst()[:top]:
        first = row.get("first_divergence") or {}
        rows.append({"input": row["input"], "verdict": verdict_of(row), "max abs": row["max_abs"],
                     "max rel": row["max_rel"], "first divergence": first.get("node", ""),
                     "iteration": tuple(first.get("iteration", ()))})
    counts: dict[str, int] = {}
    for row in result.rows:
        counts[verdict_of(row)] = counts.get(verdict_of(row), 0) + 1
    summary = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    body = f"<p>{len(result.rows)} of {result.total} inputs: {esc(summary)}</p>" + table(rows, ("max abs", "max rel"))
    body += "".join(f'<p class="muted">{esc(note)}</p>' for note in result.notes)
    return _wrap("Sweep", body)


def step_html(model: Model, trace: Trace, index: int) -> str:
    """One step of a run: where it is (iteration tuple, If branches) and the values it read and wrote."""
    event = trace.events[index]
    return _wrap(f"Step {index}", where_html(model, trace, event) + event_values_html(event))


REPRS: dict[type, Callable[[Any], str]] = {Model: model_html, Trace: trace_html, Comparison: comparison_html,
                                           RecurrentCell: cell_html, SweepResult: sweep_html}


def install() -> None:
    """Gives each displayed class its `_repr_html_` (Jupyter calls it to show an object)."""
    for cls, render in REPRS.items():
        setattr(cls, "_repr_html_", render)  # noqa: B010 - the classes do not declare it for the type checker


def static_html(x: Any, model: Model | None = None) -> str:
    """The HTML `show` displays for `x` without widgets."""
    if isinstance(x, RecurrentCell):
        trace = None
        if model is not None:
            from ..executor import run

            trace = run(model, model.example_inputs())
        return cell_html(x, trace, model)
    for cls, render in REPRS.items():
        if isinstance(x, cls):
            return render(x)
    raise TypeError(f"explorer.show shows a Model, Trace, comparison, recurrent cell or sweep result, "
                    f"not {type(x).__name__}")


def has_widgets() -> bool:
    return importlib.util.find_spec("ipywidgets") is not None and importlib.util.find_spec("IPython") is not None


def view(x: Any, model: Model | None = None) -> Any:
    """What `show` displays: for a Trace with its `model`, where ipywidgets is installed, its summary over a step
    slider and the step's place and values (an ipywidgets box); else the static HTML (an IPython HTML object, or
    the text without IPython)."""
    if isinstance(x, Trace) and model is not None and x.events and has_widgets():
        import ipywidgets

        slider = ipywidgets.IntSlider(value=0, min=0, max=len(x.events) - 1, description="step")
        step = ipywidgets.HTML(step_html(model, x, 0))

        def draw(change: Any) -> None:
            step.value = step_html(model, x, change["new"])

        slider.observe(draw, names="value")
        return ipywidgets.VBox([ipywidgets.HTML(trace_html(x)), slider, step])
    page = static_html(x, model)
    if importlib.util.find_spec("IPython") is None:
        return page
    from IPython.display import HTML

    return HTML(page)


def show(x: Any, model: Model | None = None) -> str | None:
    """Displays `x` in a notebook (see `view`); outside IPython, returns its HTML as text."""
    shown = view(x, model)
    if isinstance(shown, str):
        return shown
    from IPython.display import display

    display(shown)
    return None
