"""Comparing explorer's outputs with onnxruntime (in a child process, see judge.py) on the same feeds."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .judge import NoVerdict, run_onnxruntime
from .model import Model


@dataclass
class OutputDiff:
    name: str
    max_abs: float
    max_rel: float
    ok: bool
    note: str = ""


@dataclass
class CheckReport:
    diffs: list[OutputDiff] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and all(d.ok for d in self.diffs)

    def lines(self) -> list[str]:
        if self.error:
            return [f"onnxruntime: {self.error}"]
        return [f"{d.name}: max abs diff {d.max_abs:.3g}, max rel diff {d.max_rel:.3g} "
                f"{'ok' if d.ok else 'MISMATCH'}{(' (' + d.note + ')') if d.note else ''}" for d in self.diffs]


def compare_values(name: str, ours: Any, theirs: Any, rtol: float = 1e-4, atol: float = 1e-5) -> OutputDiff:
    """Integer/bool/string outputs must be equal; floats within rtol/atol. Sequences compared element-wise."""
    if isinstance(ours, list) or isinstance(theirs, list):
        if not (isinstance(ours, list) and isinstance(theirs, list)) or len(ours) != len(theirs):
            return OutputDiff(name, float("inf"), float("inf"), False, "sequence length or kind differs")
        parts = [compare_values(f"{name}[{i}]", a, b, rtol, atol) for i, (a, b) in enumerate(zip(ours, theirs))]
        return OutputDiff(name, max((p.max_abs for p in parts), default=0.0),
                          max((p.max_rel for p in parts), default=0.0), all(p.ok for p in parts))
    if ours is None or theirs is None:
        same = ours is None and theirs is None
        return OutputDiff(name, 0.0 if same else float("inf"), 0.0 if same else float("inf"), same)
    a, b = np.asarray(ours), np.asarray(theirs)
    if a.shape != b.shape:
        return OutputDiff(name, float("inf"), float("inf"), False, f"shape {a.shape} vs {b.shape}")
    if a.dtype.kind in "OUS" or b.dtype.kind in "OUS":
        same = bool(np.array_equal(a.astype(str), b.astype(str)))
        return OutputDiff(name, 0.0 if same else float("inf"), 0.0 if same else float("inf"), same)
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        both_nan = np.isnan(a64) & np.isnan(b64)
        same_inf = np.isinf(a64) & (a64 == b64)
        diff = np.where(both_nan | same_inf, 0.0, np.abs(a64 - b64))
        diff = np.nan_to_num(diff, nan=np.inf)
        rel = diff / np.maximum(np.abs(b64), 1e-12)
        ok = bool(np.all(diff <= atol + rtol * np.abs(np.nan_to_num(b64))))
        return OutputDiff(name, float(diff.max(initial=0.0)), float(np.where(diff == 0, 0, rel).max(initial=0.0)), ok)
    diff = np.abs(a.astype(np.int64) - b.astype(np.int64)) if a.size else np.zeros(0)
    return OutputDiff(name, float(diff.max(initial=0)), 0.0, bool(np.array_equal(a, b)))


def compare_with_onnxruntime(model: Model, feeds: dict[str, Any], outputs: dict[str, Any],
                             rtol: float = 1e-4, atol: float = 1e-5, *,
                             timeout: float | None = None) -> CheckReport:
    """Max abs/rel difference of each output against onnxruntime (run in a child process under a wall-clock
    limit); `error` says why there is no verdict (not installed, refused, timeout, crash, memory cap)."""
    try:
        theirs = run_onnxruntime(model, feeds, timeout=timeout)
    except NoVerdict as exc:
        return CheckReport(error=str(exc))
    return CheckReport([compare_values(name, outputs.get(name), theirs[name], rtol, atol) for name in theirs])


@dataclass
class Divergence:
    """The first top-level node whose output differs from onnxruntime's value of the same name."""

    node: str
    op_type: str
    diff: OutputDiff


def first_divergence(model: Model, feeds: dict[str, Any], trace: Any, rtol: float = 1e-4,
                     atol: float = 1e-5, *, timeout: float | None = None) -> Divergence | None:
    """Runs onnxruntime with every main-graph value as an extra output and walks the trace in order to the first
    node whose output differs (None when all agree). Values inside bodies are compared through their node.
    Raises NoVerdict when onnxruntime gives no answer."""
    import onnx

    probe = onnx.ModelProto()
    probe.CopyFrom(model.proto)
    known = {o.name for o in probe.graph.output}
    typed = {v.name: v for v in probe.graph.value_info}
    for node in probe.graph.node:
        for name in node.output:
            if name and name not in known:
                info = typed.get(name)
                probe.graph.output.append(info if info is not None else onnx.ValueInfoProto(name=name))
                known.add(name)
    theirs = run_onnxruntime(probe, feeds, timeout=timeout)
    for event in trace.events:
        if event.iteration:
            continue
        for name, value in event.outputs.items():
            if name in theirs:
                diff = compare_values(name, value, theirs[name], rtol, atol)
                if not diff.ok:
                    return Divergence(event.node, event.op_type, diff)
    return None
