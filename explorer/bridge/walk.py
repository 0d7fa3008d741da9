"""The framework's values against the export's, module by module in the framework's execution order: each aligned
point measured (layouts undone), each departing one rerun from exact inputs (forcing.py) to tell its own error
from the error it was handed, located at the step, direction and gate where that applies, with the user's source
line. The first point with its own error is the cause; the ones after it that only carry error say so."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..compare.framework import check_gates
from ..compare.stats import ATOL, RTOL, OutputDiff, compare_values, float_errors
from ..model.model import Model
from ..proto.graph import attribute
from ..spec.rnn import CELLS
from ..trace.trace import Trace
from .align import Point, Recorded
from .captured import Captured
from .forcing import force


@dataclass
class Where:
    """Where a departing point departs first: time step, direction and gate (None where they do not apply)."""

    step: int | None = None
    direction: int | None = None
    gate: str | None = None
    iteration: tuple[int, ...] | None = None


@dataclass
class PointCheck:
    """One point: its error against the framework, and for a departing one its own error (teacher forced) beside
    the largest error of the values it was handed. `status`: agrees, own error, carried, unaligned, unknown."""

    point: Point
    diff: OutputDiff | None = None
    own: OutputDiff | None = None
    handed: float | None = None
    where: Where = field(default_factory=Where)
    status: str = "unaligned"
    source: str = ""
    note: str = ""

    @property
    def departs(self) -> bool:
        return self.diff is not None and not self.diff.ok


def source_of(captured: Captured, module: str, stack: str | None = None) -> str:
    """`file.py:LINE` where the module is called in the user's code (else assigned; else the first frame of
    dynamo's stack trace outside torch)."""
    info = captured.modules.get(module)
    found = info.source if info is not None else ""
    if not found and stack:
        for line in stack.splitlines():
            line = line.strip()
            if line.startswith("File ") and "/torch/" not in line and "site-packages" not in line:
                path = line.split('"')[1]
                number = line.split("line ")[1].split(",")[0]
                return f"{path.rsplit('/', 1)[-1]}:{number}"
    path, _, line = found.rpartition(":")
    return f"{path.rsplit('/', 1)[-1]}:{line}" if found else ""


def check_points(model: Model, trace: Trace, captured: Captured, points: list[Point], recorded: Recorded,
                 rtol: float = RTOL, atol: float = ATOL, stacks: dict[str, str] | None = None) -> list[PointCheck]:
    """Every point measured in order; departing ones teacher forced and located."""
    checks: list[PointCheck] = []
    errors: dict[int, float] = {}
    for k, p in enumerate(points):
        check = PointCheck(p, source=source_of(captured, p.module, (stacks or {}).get(p.onnx_node or "")))
        checks.append(check)
        if not p.aligned:
            check.note = p.reason
            continue
        assert p.onnx_value is not None
        ours = p.layout.to_framework(recorded[p.iteration][p.onnx_value])
        check.diff = compare_values(p.label, ours, p.framework, rtol, atol)
        errors[id(p)] = check.diff.max_abs
        if check.diff.ok:
            check.status = "agrees"
            continue
        forced = force(model, p, points[:k], recorded, errors)
        check.handed = forced.handed
        if forced.value is None:
            check.status, check.note = "unknown", forced.note
        else:
            check.own = compare_values(p.label, forced.value, p.framework, rtol, atol)
            check.status = "carried" if check.own.ok else "own error"
        check.where = _where(model, trace, captured, p, ours, rtol, atol)
    return checks


def _where(model: Model, trace: Trace, captured: Captured, p: Point, ours: np.ndarray, rtol: float,
           atol: float) -> Where:
    info = captured.modules[p.module]
    if info.cell is not None or (info.calls > 1 and p.kind == "out"):
        return Where(step=p.call, iteration=p.iteration or None)
    if p.kind == "out" and p.index == 0 and info.recurrent is not None:  # per-step output: its first bad step
        return _first_step(ours, p.framework, bool(info.recurrent.get("batch_first")),
                           bool(info.recurrent.get("go_backwards")), rtol, atol)
    if p.kind != "layer_out" or p.onnx_node is None:
        return Where()
    node = model.node(p.onnx_node)
    op = node.proto.op_type
    if op not in CELLS:
        return Where()
    y = np.asarray(trace.event(p.onnx_node).outputs[node.proto.output[0]])
    theirs = p.layout.to_onnx(p.framework, y.shape)
    if attribute(node.proto, "layout", 0):
        y, theirs = y.transpose(1, 2, 0, 3), theirs.transpose(1, 2, 0, 3)
    bad = float_errors(y, theirs, rtol, atol)[2]  # [seq, directions, batch, hidden]
    seq, directions = bad.shape[:2]
    reverse = [attribute(node.proto, "direction", b"forward") in (b"reverse", "reverse") or d == 1
               for d in range(directions)]
    first: tuple[int, int, int] | None = None
    for d in range(directions):
        steps = list(range(seq - 1, -1, -1)) if reverse[d] else list(range(seq))
        for position, t in enumerate(steps):
            if bad[t, d].any():
                if first is None or position < first[0]:
                    first = (position, t, d)
                break
    where = Where(step=first[1], direction=first[2]) if first else Where()
    reference = layer_parameters(captured, p.module, p.index, p.onnx_node, directions)
    try:
        gates = check_gates(model, trace, p.onnx_node, (), against="PyTorch", reference=reference,
                            rtol=rtol, atol=atol)
    except (KeyError, ValueError):
        return where
    if gates.divergence is not None:
        where.gate = gates.divergence.gate
        if where.step is None:
            where.step, where.direction = gates.divergence.step, gates.divergence.direction
    return where


def _first_step(ours: np.ndarray, theirs: np.ndarray, batch_first: bool, backwards: bool, rtol: float,
                atol: float) -> Where:
    """The first time step (in processing order) of a recurrent module's per-step output that departs."""
    if ours.ndim != 3 or ours.shape != theirs.shape:
        return Where()
    bad = float_errors(ours, theirs, rtol, atol)[2]
    per_step = bad.any(axis=(0, 2)) if batch_first else bad.any(axis=(1, 2))
    steps = np.flatnonzero(per_step)
    if not steps.size:
        return Where()
    return Where(step=int(steps[-1] if backwards else steps[0]))


def layer_parameters(captured: Captured, module: str, layer: int, node: str, directions: int) -> dict[str, Any]:
    """Layer `layer`'s parameters as `<node>.weight_ih_l0` (..._reverse): what compare.framework reads."""
    found = {}
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        for d in range(directions):
            suffix = "_reverse" if d else ""
            value = captured.params.get(f"{module}.{name}_l{layer}{suffix}")
            if value is not None:
                found[f"{node}.{name}_l0{suffix}"] = value
    return found
