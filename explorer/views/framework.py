"""An export against its framework model (explorer.bridge) as the app shows it: the module tree in the framework's
order, each module's status (agrees, own error, carried) with its colour, errors, ONNX node and iteration, the
diagram's fills, and the findings with their fixes."""
from __future__ import annotations

from typing import Any

from ..bridge.report import FrameworkComparison
from ..bridge.walk import PointCheck
from . import styles
from .heat import NodeValues


def module_rows(result: FrameworkComparison) -> list[dict[str, Any]]:
    """One row per module value (`result.checks[i]` is row i), indented by its depth in the module tree, in the
    framework's order."""
    rows = []
    for c in result.checks:
        p = c.point
        depth = p.module.count(".") + (1 if p.module else 0) + (1 if p.kind == "layer_out" else 0)
        where = c.where
        rows.append({
            "module": "  " * depth + p.label,
            "status": c.status,
            "error": c.diff.max_abs if c.diff else None,
            "own error": c.own.max_abs if c.own else None,
            "handed": c.handed,
            "step": where.step, "direction": where.direction, "gate": where.gate,
            "ONNX node": p.onnx_node or "", "iteration": iteration_text(c),
            "ONNX value": p.onnx_value or "", "source": c.source, "why not aligned": p.reason,
        })
    return rows


def row_fills(result: FrameworkComparison) -> list[str]:
    """Each row's fill by its status (styles.MODULE_STATUS): own error apart from carried error."""
    return [styles.MODULE_STATUS[c.status][0] for c in result.checks]


def status_legend(result: FrameworkComparison) -> list[tuple[str, str, str]]:
    """(status, fill, what it means) of each status some row has, in styles.MODULE_STATUS's order."""
    present = {c.status for c in result.checks}
    return [(status, fill, meaning) for status, (fill, meaning) in styles.MODULE_STATUS.items() if status in present]


def iteration_text(check: PointCheck) -> str:
    """The loop iteration of the point's ONNX value (a module called in a Loop's body), e.g. "(3,)"; "" outside."""
    iteration = check.point.iteration or check.where.iteration
    return str(tuple(iteration)) if iteration else ""


def error_values(result: FrameworkComparison) -> NodeValues:
    """The ONNX nodes whose values depart from the framework, filled by the largest error of the module values
    they compute."""
    found: dict[str, float] = {}
    for c in result.checks:
        if c.departs and c.point.onnx_node and c.diff is not None:
            found[c.point.onnx_node] = max(found.get(c.point.onnx_node, 0.0), c.diff.max_abs)
    return NodeValues("error against the framework", found)


def own_and_carried_values(result: FrameworkComparison) -> tuple[NodeValues, NodeValues]:
    """The ONNX nodes of departing module values filled by their own error (rerun from the framework's inputs:
    where error starts) and by the error they were handed (where it is only carried on), each the largest over
    the values the node computes."""
    own: dict[str, float] = {}
    carried: dict[str, float] = {}
    for c in result.checks:
        node = c.point.onnx_node
        if not c.departs or node is None:
            continue
        if c.status == "own error" and c.own is not None:
            own[node] = max(own.get(node, 0.0), c.own.max_abs)
        elif c.status == "carried" and c.handed is not None:
            carried[node] = max(carried.get(node, 0.0), c.handed)
    return (NodeValues(f"own error against {result.framework}", own),
            NodeValues(f"error carried from earlier modules ({result.framework})", carried))


def cause_nodes(result: FrameworkComparison) -> list[str]:
    """The ONNX nodes of the module values departing by their own error."""
    return list(dict.fromkeys(c.point.onnx_node for c in result.checks if c.status == "own error" and c.point.onnx_node))


def first_pick(result: FrameworkComparison) -> int | None:
    """The row shown first: the cause (else the first departing row, else the first aligned one)."""
    first = result.first
    if first is not None:
        return result.checks.index(first)
    return next((k for k, c in enumerate(result.checks) if c.point.aligned), None)


def row_of_node(result: FrameworkComparison, node: str) -> int | None:
    """The row of a clicked ONNX node: its first departing module value, else its first one; None for a node no
    module value was aligned with."""
    rows = [k for k, c in enumerate(result.checks) if c.point.onnx_node == node]
    return next((k for k in rows if result.checks[k].departs), rows[0] if rows else None)


def departing_check(result: FrameworkComparison, row: int) -> PointCheck:
    """Where choosing a row takes the Step page: its module's first departing value (in the framework's order:
    its first departing call, inside a loop its first departing iteration), else the row's own value."""
    check = result.checks[row]
    return next((c for c in result.checks if c.point.module == check.point.module and c.departs), check)


def point_lines(check: PointCheck) -> list[str]:
    """What one module value is in the export: its ONNX node, value and iteration, where it departs first, its
    error (own and handed) and the line of the user's code."""
    p, w = check.point, check.where
    if not p.aligned:
        return [f"{p.label}: not aligned ({p.reason})" if p.reason else f"{p.label}: not aligned"]
    iteration = iteration_text(check)
    lines = [f"{p.label} is ONNX node {p.onnx_node} (value {p.onnx_value})"
             + (f" at loop iteration {iteration}" if iteration else "")]
    where = ", ".join(f"{k} {v}" for k, v in (("step", w.step), ("direction", w.direction), ("gate", w.gate))
                      if v is not None)
    if check.diff is not None:
        text = f"{check.status}: error {check.diff.max_abs:.3g}"
        if check.own is not None:
            text += f", own error {check.own.max_abs:.3g}"
        if check.handed is not None:
            text += f", handed {check.handed:.3g}"
        lines.append(text + (f"; departs first at {where}" if where and check.departs else ""))
    if check.note:
        lines.append(check.note)
    lines.append(f"source: {check.source}" if check.source else "source: not known")
    return lines


def headline(result: FrameworkComparison) -> str:
    """The first departing module (the cause), or that every aligned module agrees."""
    aligned, leaves = result.leaf_coverage()
    first = result.first
    coverage = f"{aligned} of {leaves} leaf modules aligned"
    if first is None:
        return f"Every aligned module agrees with the framework ({coverage})."
    p, w = first.point, first.where
    where = ", ".join(f"{k} {v}" for k, v in (("step", w.step), ("direction", w.direction), ("gate", w.gate))
                      if v is not None)
    own = f"own error {first.own.max_abs:.3g}" if first.own else "own error unknown"
    return (f"First departing module: {p.label}{' at ' + first.source if first.source else ''}, ONNX node "
            f"{p.onnx_node}{' (' + where + ')' if where else ''}: {own}, handed {first.handed or 0:.3g} "
            f"({coverage}).")


def framework_html(result: FrameworkComparison, esc: Any, table: Any) -> str:
    """The report's section on an export against its framework model: the verdict, every module value in the
    framework's order with its status, errors, ONNX node, iteration, step, gate and source line, and each finding
    with its fix (`esc` and `table`: the report's escaping and table makers)."""
    columns = ["module", "status", "error", "own error", "handed", "source", "ONNX node", "iteration", "step",
               "direction", "gate", "why not aligned"]
    rows = [{k: ("" if row[k] is None else row[k]) for k in columns} for row in module_rows(result)]
    parts = [f'<p class="verdict">{esc(headline(result))}</p>',
             f"<p>A: <span class=\"name\">{esc(result.model_source)}</span><br>"
             f"B: <span class=\"name\">{esc(result.framework)}</span></p>",
             "<h3>Modules, in the framework's order</h3>", table(rows, ("error", "own error", "handed"))]
    legend = "; ".join(f"{status}: {meaning}" for status, _, meaning in status_legend(result))
    parts.append(f'<p class="muted">{esc(legend)}</p>')
    if result.diagnosis:
        items = "".join(f"<li>{esc(f.finding)}<br>Fix: {esc(f.fix) if f.fix else 'none explorer can prove'}</li>"
                        for f in result.diagnosis)
        parts.append(f"<h3>Diagnosis</h3><ul>{items}</ul>")
    parts += [f'<p class="muted">{esc(note)}</p>' for note in result.notes]
    return "".join(parts)
