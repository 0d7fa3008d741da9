"""An export against its framework model (explorer.bridge) as the app shows it: the module tree in the framework's
order, each module's status (agrees, own error, carried), errors and ONNX value, and the findings with their
fixes."""
from __future__ import annotations

from typing import Any

from ..bridge.report import FrameworkComparison


def module_rows(result: FrameworkComparison) -> list[dict[str, Any]]:
    """One row per module value, indented by its depth in the module tree, in the framework's order."""
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
            "ONNX node": p.onnx_node or "", "ONNX value": p.onnx_value or "",
            "source": c.source, "why not aligned": p.reason,
        })
    return rows


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
