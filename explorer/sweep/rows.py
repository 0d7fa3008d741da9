"""A sweep's rows: one per input (its dims, seed or file, status, errors per output and overall, the first
divergence, the first NaN/Inf, the seconds taken), their order worst first, the printed summary and the verdict.
A row is a plain dict of JSON values (numbers may be infinite: the writer spells those out)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..compare import Comparison
from .plan import Item

OK, ERROR, LIMIT = "ok", "error", "limit"
AGREE, DIFFER, NO_VERDICT = 0, 1, 2  # exit codes


def _base(item: Item, dims: dict[str, int]) -> dict[str, Any]:
    return {"index": item.index, "input": item.label, "dims": dict(dims), "seed": item.seed, "file": item.path,
            "worker": ""}


def row_of(item: Item, dims: dict[str, int], result: Comparison) -> dict[str, Any]:
    """The row of a finished comparison. Its status is "limit" when a side stopped at one of explorer's limits,
    "error" when a side failed (the values both reached are still compared), else "ok"."""
    limit = any(r is not None and r.limit_hit for r in (result.a, result.b))
    status = LIMIT if limit else ERROR if result.errors else OK
    outputs = {d.name: {"max_abs": d.max_abs, "max_rel": d.max_rel, "ok": d.ok} for d in result.outputs}
    first = result.first
    trace = result.a.trace if result.a is not None else None
    bad = trace.first_nonfinite() if trace is not None else None
    return {**_base(item, dims), "status": status, "differs": result.differs,
            "max_abs": max((o["max_abs"] for o in outputs.values()), default=None),
            "max_rel": max((o["max_rel"] for o in outputs.values()), default=None),
            "outputs": outputs,
            "first_divergence": None if first is None else {
                "node": first.node, "iteration": list(first.iteration), "value": first.name,
                "op_type": first.op_type, "max_abs": first.max_abs, "max_rel": first.max_rel},
            "gates": [g.describe() for g in result.gates],
            "first_nonfinite": None if bad is None else {
                "node": bad.node, "iteration": list(bad.iteration), "op_type": bad.op_type, "event": bad.index},
            "message": "; ".join(f"{label}: {text}" for label, text in result.errors.items()),
            "seconds": 0.0}


def failed_row(item: Item, dims: dict[str, int], message: str, status: str = ERROR) -> dict[str, Any]:
    """The row of an input that could not be compared at all."""
    return {**_base(item, dims), "status": status, "differs": None, "max_abs": None, "max_rel": None,
            "outputs": {}, "first_divergence": None, "gates": [], "first_nonfinite": None, "message": message,
            "seconds": 0.0}


def verdict_of(row: dict[str, Any]) -> str:
    """"differs", "agrees" or the status of a row without a verdict ("error", "limit")."""
    if row["differs"]:
        return "differs"
    return "agrees" if row["status"] == OK else row["status"]


def _error(value: Any) -> float:
    return -1.0 if value is None else float(value) if not math.isnan(value) else math.inf


def worst_first(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows that differ (largest error first), then those without a verdict (errors, limits), then those that
    agree (largest error first); ties in input order."""
    rank = {"differs": 0, ERROR: 1, LIMIT: 1, "agrees": 2}
    return sorted(rows, key=lambda r: (rank[verdict_of(r)], -_error(r["max_abs"]), -_error(r["max_rel"]),
                                       r["index"]))


def exit_code(rows: Sequence[dict[str, Any]]) -> int:
    """0 when every input agrees, 1 when some differ or could not be compared (error and limit rows)."""
    return AGREE if all(verdict_of(r) == "agrees" for r in rows) else DIFFER


def counts(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    found = {"agrees": 0, "differs": 0, ERROR: 0, LIMIT: 0}
    for row in rows:
        found[verdict_of(row)] += 1
    return found


def where(found: dict[str, Any] | None) -> str:
    """A first divergence or NaN/Inf as `node (op) at iteration (..), value v`."""
    if not found:
        return ""
    at = f" at iteration {tuple(found['iteration'])}" if found.get("iteration") else ""
    value = f", value {found['value']!r}" if found.get("value") else ""
    return f"{found['node']} ({found.get('op_type', '')}){at}{value}"


def number(value: Any) -> str:
    return "" if value is None else f"{value:.3g}"


def summary_lines(rows: Sequence[dict[str, Any]], total: int | None = None, top: int = 20) -> list[str]:
    """The sweep's outcome in a few lines and its rows worst first (at most `top` of them)."""
    found = counts(rows)
    done = f"{len(rows)} of {total}" if total is not None and total != len(rows) else f"{len(rows)}"
    lines = [f"inputs: {done}; agree {found['agrees']}, differ {found['differs']}, error {found[ERROR]}, "
             f"limit {found[LIMIT]}",
             f"  {'input':28} {'verdict':8} {'max abs':>9} {'max rel':>9} {'seconds':>8}  first divergence / message"]
    for row in worst_first(rows)[:top]:
        detail = where(row["first_divergence"]) or row["message"] or \
            (f"first NaN/Inf: {where(row['first_nonfinite'])}" if row["first_nonfinite"] else "")
        lines.append(f"  {row['input'][-28:]:28} {verdict_of(row):8} {number(row['max_abs']):>9} "
                     f"{number(row['max_rel']):>9} {row['seconds']:8.3f}  {detail}")
    if len(rows) > top:
        lines.append(f"  ... {len(rows) - top} more (all rows are in the output files)")
    return lines
