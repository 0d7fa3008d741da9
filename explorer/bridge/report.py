"""The result of comparing an export with its framework: every module point in the framework's order with its
error, own and carried; the first module with its own error (the cause) with its source line, ONNX node, step,
direction and gate; the modules that could not be aligned and why; the diagnosis of departing recurrent nodes
with their fixes. As text for the command line and as one JSON document for scripts and CI."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .captured import Captured
from .fitting import Fit
from .reset_placement import ResetMove
from .walk import PointCheck


@dataclass
class Finding:
    """A departing module explained: `fix` says what to change (None when no variant reproduces the framework)."""

    module: str
    onnx_node: str | None
    finding: str
    fix: str | None = None
    fitted: Fit | None = field(default=None, repr=False)
    point: str = ""  # the label of the point the fix mends (proven when it agrees afterwards)
    rewire: tuple[str, int, str] | None = None  # (node, input position, value the fix makes it read)
    attribute: tuple[str, str, float] | None = None  # (node, attribute, value the fix sets)
    replace: dict[str, Any] | None = field(default=None, repr=False)  # weights (initializers) the fix rewrites
    # weights a loop's body reads: (node path, value it reads) -> the value the fix gives it (see weight_writes.py)
    weights: dict[tuple[str, str], Any] | None = field(default=None, repr=False)
    body: tuple[ResetMove, ...] | None = field(default=None, repr=False)  # a loop body's nodes the fix moves

    def to_dict(self) -> dict[str, Any]:
        return {"module": self.module, "onnx_node": self.onnx_node, "finding": self.finding, "fix": self.fix}


@dataclass
class FrameworkComparison:
    """An export against the framework model it came from, on the same inputs."""

    model_source: str
    framework: str
    checks: list[PointCheck]
    captured: Captured = field(repr=False)
    scopes_from: str = ""
    diagnosis: list[Finding] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    rtol: float = 0.0
    atol: float = 0.0

    @property
    def first(self) -> PointCheck | None:
        """The cause: the first point (framework order) with its own error; else the first departing one."""
        departing = [c for c in self.checks if c.departs]
        return next((c for c in departing if c.status == "own error"), departing[0] if departing else None)

    @property
    def agree(self) -> bool:
        return not self.errors and not any(c.departs for c in self.checks)

    @property
    def differs(self) -> bool:
        return any(c.departs for c in self.checks)

    def modules(self) -> dict[str, bool]:
        """Each called module that computes a tensor -> whether some value of it is aligned."""
        found: dict[str, bool] = {}
        for c in self.checks:
            found[c.point.module] = found.get(c.point.module, False) or c.point.aligned
        return found

    def leaf_coverage(self) -> tuple[int, int]:
        """(aligned, called) leaf modules that compute a tensor."""
        leaves = {m: ok for m, ok in self.modules().items() if self.captured.modules[m].leaf}
        return sum(leaves.values()), len(leaves)

    def unaligned(self) -> list[dict[str, str]]:
        """Modules none of whose values is aligned, and values left out of aligned modules, with the reason."""
        return [{"module": c.point.label, "reason": c.point.reason} for c in self.checks if not c.point.aligned]

    def to_json(self) -> dict[str, Any]:
        first = self.first
        doc: dict[str, Any] = {"agree": self.agree, "first": None, "aligned": sum(c.point.aligned for c in self.checks),
                               "unaligned": self.unaligned(), "diagnosis": [f.to_dict() for f in self.diagnosis],
                               "framework": self.framework, "model": self.model_source, "scopes": self.scopes_from,
                               "errors": dict(self.errors), "notes": list(self.notes)}
        if first is not None:
            p = first.point
            doc["first"] = {"module": p.module, "call": p.call, "layer": p.index if p.kind == "layer_out" else None,
                            "source": first.source, "onnx_node": p.onnx_node, "onnx_value": p.onnx_value,
                            "iteration": list(first.where.iteration) if first.where.iteration else None,
                            "step": first.where.step, "direction": first.where.direction, "gate": first.where.gate,
                            "error": first.diff.max_abs if first.diff else None,
                            "own_error": first.own.max_abs if first.own else None,
                            "carried_error": first.handed, "status": first.status}
        doc["points"] = [_point(c) for c in self.checks]
        doc["modules"] = self.per_module()
        return doc

    def per_module(self) -> list[dict[str, Any]]:
        """Each module once, in the framework's order: its source line, its worst status over its points (own
        error, carried, unknown, agrees, unaligned), its largest error, own error and carried error (null where
        none of its points has one)."""
        rank = ("own error", "unknown", "carried", "agrees", "unaligned")
        found: dict[str, dict[str, Any]] = {}
        for c in self.checks:
            entry = found.setdefault(c.point.module, {"module": c.point.module, "source": c.source,
                                                      "status": "unaligned", "error": None, "own_error": None,
                                                      "carried_error": None, "points": 0})
            entry["points"] += 1
            entry["source"] = entry["source"] or c.source
            if rank.index(c.status) < rank.index(entry["status"]):
                entry["status"] = c.status
            for key, value in (("error", c.diff.max_abs if c.diff else None),
                               ("own_error", c.own.max_abs if c.own else None), ("carried_error", c.handed)):
                if value is not None:
                    entry[key] = value if entry[key] is None else max(entry[key], value)
        return list(found.values())

    def lines(self) -> list[str]:
        aligned, leaves = self.leaf_coverage()
        out = [f"A: {self.model_source}", f"B: {self.framework} (module values)",
               f"aligned: {sum(c.point.aligned for c in self.checks)} of {len(self.checks)} module values, "
               f"{aligned} of {leaves} leaf modules (scopes from {self.scopes_from or 'nothing the exporter wrote'})"]
        out += [f"{label}: {message}" for label, message in self.errors.items()]
        out += self.notes
        first = self.first
        if first is None:
            out.append("first departing module: none (every aligned module agrees)")
        else:
            p, w = first.point, first.where
            where = ", ".join(f"{k} {v}" for k, v in (("step", w.step), ("direction", w.direction),
                                                       ("gate", w.gate)) if v is not None)
            own = f"own error {first.own.max_abs:.3g}" if first.own else "own error unknown"
            out.append(f"first departing module: {p.label} at {first.source or 'an unknown line'}, ONNX node "
                       f"{p.onnx_node!r} (value {p.onnx_value!r}){', ' + where if where else ''}: "
                       f"error {first.diff.max_abs if first.diff else 0:.3g}; {own}, "
                       f"handed {first.handed or 0:.3g}")
        out.append("modules in the framework's order:")
        for c in self.checks:
            if not c.point.aligned:
                out.append(f"  {c.point.label:28} not aligned: {c.point.reason}")
                continue
            text = f"  {c.point.label:28} {c.status:9} error {c.diff.max_abs if c.diff else 0:9.3g}"
            if c.own is not None:
                text += f"  own {c.own.max_abs:9.3g}  handed {c.handed or 0:9.3g}"
            out.append(text + f"  <- {c.point.onnx_value}" + (f" ({c.source})" if c.source else ""))
        for f in self.diagnosis:
            out.append(f"diagnosis: {f.finding}" + (f"; fix: {f.fix}" if f.fix else "; no fix explorer can prove"))
        return out


def _point(c: PointCheck) -> dict[str, Any]:
    """One point as JSON: which module call (and layer) it is, its source line, ONNX value and node, where it
    departs first, its error, own error (teacher forced) and the error it was handed."""
    p, w = c.point, c.where
    return {"point": p.label, "module": p.module, "call": p.call, "layer": p.index if p.kind == "layer_out" else None,
            "source": c.source, "onnx_node": p.onnx_node, "onnx_value": p.onnx_value, "status": c.status,
            "iteration": list(p.iteration) if p.iteration else None, "step": w.step, "direction": w.direction,
            "gate": w.gate, "error": c.diff.max_abs if c.diff else None,
            "own_error": c.own.max_abs if c.own else None, "carried_error": c.handed,
            "reason": p.reason or c.note or None}
