"""One verdict for a comparison of any kind, in one sentence: the two sides agree (and within what: float32's
tolerance, float16 rounding, the rounding of a node's inputs, a tie order), or where they part (node, iteration,
time step, direction, gate), with the diagnoses that explain it (a recurrent node's findings, e.g. an exporter
bug); or why there is none (a side did not finish, nothing could be aligned). As JSON: `agree`, `first`,
`aligned`, `diagnosis`, plus fields other parts add (`extra`, `First.extra`)."""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..files.atomic_write import write_text
from .gate_departures import GateDivergence
from .report import Comparison, Divergence


@dataclass
class First:
    """Where the two sides part: A's node and value, the iteration tuple, and for a recurrent node the time
    step, direction and first departing gate. `extra` holds fields a caller adds (a framework module...)."""

    onnx_node: str
    op_type: str
    value: str | None
    iteration: list[int]
    max_abs: float | None = None
    max_rel: float | None = None
    step: int | None = None
    direction: int | None = None
    gate: str | None = None
    b_node: str | None = None
    b_value: str | None = None
    reason: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def where(self) -> str:
        parts = [f"node {self.onnx_node!r} ({self.op_type})"]
        if self.iteration:
            parts.append(f"iteration {tuple(self.iteration)}")
        if self.gate is not None:
            parts.append(f"gate {self.gate} at time step {self.step} (direction {self.direction})")
        if self.value is not None:
            parts.append(f"value {self.value!r}")
        return ", ".join(parts)


@dataclass
class Verdict:
    """`agree`: True, False, or None when there is no verdict (a side did not finish, nothing was compared)."""

    agree: bool | None
    sentence: str
    first: First | None
    aligned: int
    compared: str  # what was compared, in words
    within: list[str] = field(default_factory=list)  # why differences are none ("float16 rounding", ...)
    diagnosis: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The verdict as JSON data: `extra` fields merged in at the top, `first.extra` into `first`."""
        data = {k: v for k, v in asdict(self).items() if k not in ("extra", "first")}
        data["first"] = None
        if self.first is not None:
            first = {k: v for k, v in asdict(self.first).items() if k != "extra"}
            data["first"] = {**first, **self.first.extra}
        data.update(self.extra)
        return _finite(data)

    def write_json(self, path: str | Path) -> None:
        write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")


def _finite(value: Any) -> Any:
    """JSON has no infinity: an infinite error is written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def verdict(result: Comparison, findings: Mapping[str, Sequence[str]] | None = None) -> Verdict:
    """The comparison's verdict; `findings` (node path -> diagnoses, e.g. a recurrent node's warnings) are part
    of it where the sides part at that node."""
    findings = findings or {}
    a, b = result.a_label, result.b_label
    compared = _compared(result)
    within = result.within
    first = _first(result)
    diagnosis = list(findings.get(first.onnx_node, ())) if first is not None else []
    if result.errors:
        failed = "; ".join(f"{label}: {message}" for label, message in result.errors.items())
        tail = f"; first departure among the values both reached: {first.where()}" if first is not None else ""
        diagnosis = diagnosis or list(findings.get(failed_node(result) or "", ()))
        said = f" — {'; '.join(diagnosis)}" if diagnosis else ""
        return Verdict(None, f"No verdict: a side did not finish ({failed}){tail}{said}.", first,
                       len(result.values), compared, within, diagnosis)
    saturated = result.first is not None and result.first.saturated and not result.differs
    if first is not None and not saturated:
        why = f" ({first.reason})" if first.reason else ""
        size = "" if first.max_abs is None else f": max abs diff {first.max_abs:.3g}" + (
            f", max rel diff {first.max_rel:.3g}" if first.max_rel is not None else "")
        said = f" — {'; '.join(diagnosis)}" if diagnosis else ""
        return Verdict(False, f"{a} and {b} part at {first.where()}{size}{why}{said}.", first, len(result.values),
                       compared, within, diagnosis)
    if not result.values and not result.outputs and not result.gates_checked:
        return Verdict(None, f"Nothing compared: {compared}.", None, 0, compared, within, diagnosis)
    agree = "agree" + (" within " + ", ".join(within) if within else "")
    if saturated:
        agree += "; onnxruntime's u8s8 kernel saturates where they differ (explorer follows the spec)"
    return Verdict(True, f"{a} and {b} {agree}: {compared}.", None, len(result.values), compared, within)


def failed_node(result: Comparison) -> str | None:
    """The node where side A's run failed, if it did at a node."""
    error = result.a.trace.error if result.a is not None and result.a.trace is not None else None
    node = error.get("node") if isinstance(error, dict) else getattr(error, "node", None)
    return node if isinstance(node, str) else None


def _compared(result: Comparison) -> str:
    parts = []
    if result.values:
        runs = sum(len(v.errors) for v in result.values)
        parts.append(f"{len(result.values)} aligned value(s)" + (f" over {runs} executions" if runs > len(
            result.values) else ""))
    elif result.a is not None and result.b is not None:
        parts.append(f"no value aligned (A has {len(result.a.produced)}, B {len(result.b.produced)})")
    if result.outputs:
        parts.append(f"{len(result.outputs)} output(s)")
    if result.gates_checked:
        parts.append("the gates of " + ", ".join(result.gates_checked) + " at every time step")
    return ", ".join(parts) or "nothing"


def _first(result: Comparison) -> First | None:
    """The value divergence, with its node's gate departure; else the first gate departure (the side gives gates
    only: PyTorch's equations)."""
    first: Divergence | None = result.first
    if first is not None:
        gate = next((g for g in result.gates if g.node == first.node and g.iteration == first.iteration), None)
        found = First(first.node, first.op_type, first.name, list(first.iteration), first.max_abs, first.max_rel,
                      b_node=first.b_node, b_value=first.b_name, reason=first.note)
        return _with_gate(found, gate)
    if result.gates:
        gate = result.gates[0]
        return _with_gate(First(gate.node, gate.op_type, None, list(gate.iteration), gate.max_abs), gate)
    bad = next((d for d in result.outputs if not d.ok), None)
    if bad is not None:
        return First("", "", bad.name, [], bad.max_abs, bad.max_rel, reason=bad.note or "a graph output")
    return None


def _with_gate(first: First, gate: GateDivergence | None) -> First:
    if gate is not None:
        first.step, first.direction, first.gate = gate.step, gate.direction, gate.gate
        first.extra["departing"] = list(gate.departing)
        first.extra["batch_item"], first.extra["unit"] = gate.batch_item, gate.unit
    return first
