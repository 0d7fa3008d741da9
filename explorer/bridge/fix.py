"""Writing the export with the fitted fixes applied (attributes set, weight blocks reordered in the initializers)
and proving it: the fixed model, run again, gives the framework's value at every point the fixes were meant to
mend, on the given inputs and, when the framework model itself is at hand, on other random inputs of the same
sizes. A finding whose fix cannot be applied (its weights are computed by nodes, not stored) or proven is
reported, never applied."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..compare.stats import ATOL, RTOL
from ..files.atomic_write import write_bytes
from ..model.model import Model, load
from .api import FrameworkSide, compare_framework
from .fitting import Fit
from .report import Finding, FrameworkComparison
from .weight_writes import replace_initializers, rewrite_weights


@dataclass
class FixOutcome:
    """One finding: `applied` when its fix was written into the model, `proven` when the fixed model gives the
    framework's values there; `why` says what stopped it."""

    finding: Finding
    applied: bool = False
    proven: bool = False
    why: str = ""


@dataclass
class FixReport:
    comparison: FrameworkComparison
    outcomes: list[FixOutcome] = field(default_factory=list)
    proofs: list[str] = field(default_factory=list)  # the inputs each proof ran on, with its verdict
    written: str | None = None

    @property
    def complete(self) -> bool:
        """Every finding fixed and proven (and at least one finding)."""
        return bool(self.outcomes) and all(o.proven for o in self.outcomes)

    def lines(self) -> list[str]:
        out = self.comparison.lines()
        for o in self.outcomes:
            state = "fixed and proven" if o.proven else "applied, NOT proven" if o.applied else "not fixed"
            out.append(f"fix: {o.finding.module} {o.finding.onnx_node}: {o.finding.fix or 'none'} -> {state}"
                       + (f" ({o.why})" if o.why else ""))
        out += [f"proof: {p}" for p in self.proofs]
        out.append(f"wrote {self.written}" if self.written else "wrote nothing")
        return out


_NAMES = ("X", "W", "R", "B")


def _apply(proto: onnx.ModelProto, model: Model, finding: Finding) -> str:
    """Applies one fitted fix to `proto` (the model as given); returns why it could not be, or ""."""
    if finding.replace:
        return replace_initializers(proto, finding.replace)
    if finding.weights:
        return rewrite_weights(proto, model, finding.weights)
    if finding.body:
        return next((why for why in (move.apply(proto, model) for move in finding.body) if why), "")
    if finding.attribute is not None:
        path, key, value = finding.attribute
        node = _main_graph_node(proto, model, path)
        if node is None:
            return "the node lies inside a body"
        _set_attribute(node, key, value)
        return ""
    if finding.rewire is not None:
        path, position, name = finding.rewire
        node = _main_graph_node(proto, model, path)
        if node is None:
            return "the node lies inside a body"
        node.input[position] = name
        return ""
    if finding.fitted is None:
        return "explorer knows no fix for it"
    return _apply_variant(proto, model, finding.fitted)


def _main_graph_node(proto: onnx.ModelProto, model: Model, path: str) -> onnx.NodeProto | None:
    """`proto`'s node at `path`; None when it lies inside a body (fixes rewrite the main graph only)."""
    ref = model.node(path)
    return proto.graph.node[ref.index] if ref.graph.path == "" else None


def _apply_variant(proto: onnx.ModelProto, model: Model, fitted: Fit) -> str:
    """Rewrites a recurrent node's stored weights and attributes as the fitted exporter variant says."""
    node = _main_graph_node(proto, model, fitted.node)
    if node is None:
        return "the node lies inside a body"
    stored = {t.name: t for t in proto.graph.initializer}
    tensors: dict[str, np.ndarray] = {}
    for k, name in enumerate(_NAMES):
        if k == 0 or k >= len(node.input) or not node.input[k]:
            continue
        if node.input[k] not in stored:
            return f"its {name} is computed by nodes, not stored in an initializer"
        tensors[name] = numpy_helper.to_array(stored[node.input[k]])
    weights = {node.input[k] for k in (1, 2, 3) if k < len(node.input) and node.input[k]}
    if any(name in weights for other in proto.graph.node if other is not node for name in other.input):
        return "its weights are read by other nodes too"
    changed = fitted.variant.apply(tensors)
    for k, name in enumerate(_NAMES):
        if name in changed and k < len(node.input):
            old = stored[node.input[k]]
            old.CopyFrom(numpy_helper.from_array(changed[name].astype(numpy_helper.to_array(old).dtype), old.name))
    for key, value in fitted.variant.attributes:
        _set_attribute(node, key, value)
    return ""


def _set_attribute(node: onnx.NodeProto, key: str, value: Any) -> None:
    for a in list(node.attribute):
        if a.name == key:
            node.attribute.remove(a)
    node.attribute.append(helper.make_attribute(key, value))


def _random_like(feeds: dict[str, Any], seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, value in feeds.items():
        value = np.asarray(value)
        if value.dtype.kind == "f":
            out[name] = rng.standard_normal(value.shape).astype(value.dtype)
        elif value.dtype.kind in "iu":
            out[name] = rng.integers(int(value.min()), int(value.max()) + 1, value.shape).astype(value.dtype)
        else:
            out[name] = value
    return out


def fixed_model(model: Model | str | os.PathLike, side: FrameworkSide, feeds: dict[str, Any] | None, *,
                rtol: float = RTOL, atol: float = ATOL, seeds: tuple[int, ...] = (1, 2)) -> tuple[FixReport, bytes | None]:
    """Compares, applies every fitted fix and proves the fixed model: the report, and the model with the proven
    fixes (serialized; None when no fix was proven)."""
    model = model if isinstance(model, Model) else load(model)
    comparison = compare_framework(model, side, feeds, rtol=rtol, atol=atol)
    report = FixReport(comparison)
    proto = onnx.ModelProto()
    proto.CopyFrom(model.as_given())
    for finding in comparison.diagnosis:
        outcome = FixOutcome(finding)
        outcome.why = _apply(proto, model, finding)
        outcome.applied = not outcome.why
        report.outcomes.append(outcome)
    if not any(o.applied for o in report.outcomes):
        return report, None
    data = proto.SerializeToString()
    fixed = load(data)
    runs: list[tuple[str, FrameworkComparison]] = [("the given inputs",
                                                    compare_framework(fixed, side, feeds, rtol=rtol, atol=atol,
                                                                      diagnose=False))]
    if side.module is not None:
        base = feeds if feeds is not None else {}
        for seed in seeds:
            other = _random_like(base, seed)
            fresh = side.fresh()
            runs.append((f"random inputs (seed {seed}, the same sizes)",
                         compare_framework(fixed, fresh, other, rtol=rtol, atol=atol, diagnose=False)))
    for outcome in report.outcomes:
        if not outcome.applied:
            continue
        failed = [label for label, result in runs for c in result.checks
                  if c.point.label == outcome.finding.point and c.departs]
        outcome.proven = not failed
        if failed:
            outcome.why = f"the fixed node still departs on {', '.join(dict.fromkeys(failed))}"
    for label, result in runs:
        first = result.first
        report.proofs.append(f"{label}: " + ("every aligned module agrees" if result.agree else
                                             f"first departing module {first.point.label}" if first else
                                             "no verdict"))
    if not any(o.proven for o in report.outcomes):
        return report, None
    if not all(o.proven for o in report.outcomes if o.applied):  # keep only proven fixes
        proto = onnx.ModelProto()
        proto.CopyFrom(model.as_given())
        for o in report.outcomes:
            if o.proven:
                _apply(proto, model, o.finding)
        data = proto.SerializeToString()
    return report, data


def fix(model: Model | str | os.PathLike, side: FrameworkSide, feeds: dict[str, Any] | None, output: str | os.PathLike,
        *, rtol: float = RTOL, atol: float = ATOL, seeds: tuple[int, ...] = (1, 2)) -> FixReport:
    """`fixed_model`, the fixed model written to `output` (atomically; never over a loaded model) when at least one
    fix was proven."""
    report, data = fixed_model(model, side, feeds, rtol=rtol, atol=atol, seeds=seeds)
    if data is not None:
        write_bytes(output, data)
        report.written = str(output)
    return report
