"""The result of a comparison: every aligned value's errors, the first divergence in execution order, gate-level
departures of recurrent nodes, and what could not be aligned; as text for the command line."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .align import Unaligned
from .gate_departures import GateDivergence
from .measure import ValueComparison
from .recording import Recording
from .saturation import VERDICT, Saturation
from .stats import OutputDiff, diff_text

RANDOM_NOTE = "it draws random values: the two sides differ here by design"


@dataclass(frozen=True)
class Divergence:
    """The first value (in A's execution order) beyond the tolerance: A's node path and iteration tuple."""

    node: str
    op_type: str
    name: str
    iteration: tuple[int, ...]
    max_abs: float
    max_rel: float
    b_node: str
    b_name: str
    note: str = ""
    saturated: bool = False  # onnxruntime's u8s8 saturation explains it (saturation.py): not explorer's departure

    def describe(self) -> str:
        where = f" at iteration {self.iteration}" if self.iteration else ""
        other = "" if (self.b_node, self.b_name) == (self.node, self.name) else \
            f" (B: {self.b_name!r} of node {self.b_node!r})"
        note = f" ({self.note})" if self.note else ""
        return (f"node {self.node!r} ({self.op_type}){where}, value {self.name!r}{other}: "
                f"{diff_text(self.max_abs, self.max_rel)}{note}")


@dataclass
class Comparison:
    """Side A against side B on the same feeds. `values` is in A's execution order."""

    a_label: str
    b_label: str
    rtol: float
    atol: float
    values: list[ValueComparison] = field(default_factory=list)
    unaligned: list[Unaligned] = field(default_factory=list)
    gates: list[GateDivergence] = field(default_factory=list)
    outputs: list[OutputDiff] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # side label -> why its run failed or is partial
    feeds: dict[str, Any] = field(default_factory=dict, repr=False)
    notes: list[str] = field(default_factory=list)
    gates_checked: list[str] = field(default_factory=list)  # recurrent nodes compared gate by gate
    a: Recording | None = field(default=None, repr=False)
    b: Recording | None = field(default=None, repr=False)
    saturation: Saturation | None = None  # what onnxruntime's u8s8 saturation explains (saturation.py)
    by_type: bool = True  # each value at its own precision (precision.py); False: the user's rtol/atol for all
    drawn: set[str] = field(default_factory=set)  # nodes that drew random values (a Dropout only in training)

    @property
    def first(self) -> Divergence | None:
        """The first divergence in execution order (None when every aligned value agrees)."""
        found = [(e.order, v, e) for v in self.values for e in v.errors if not e.ok]
        if not found:
            return None
        _, v, e = min(found, key=lambda item: item[0])
        saturated = self.saturation is not None and self.saturation.explains(v.node, v.name)
        note = "; ".join(filter(None, [e.note, RANDOM_NOTE if v.node in self.drawn else "",
                                       VERDICT if saturated else ""]))
        return Divergence(v.node, v.op_type, v.name, e.iteration, e.max_abs, e.max_rel, v.b_node, v.b_name, note,
                          saturated)

    @property
    def differs(self) -> bool:
        """Whether explorer's side departs: a value, output or gate beyond the tolerance, unless onnxruntime's u8s8
        saturation explains every difference (explorer then follows the spec where onnxruntime does not)."""
        if self.saturation is not None and self.saturation.complete:
            return any(g.node not in {n.node for n in self.saturation.nodes} for g in self.gates)
        return any(not v.ok for v in self.values) or any(not v.ok for v in self.outputs) or bool(self.gates)

    @property
    def tolerance_text(self) -> str:
        """The tolerances used: the user's, or each value's own precision (those met, with their figures)."""
        if not self.by_type:
            return f"rtol {self.rtol:g}, atol {self.atol:g}"
        met = {v.tolerance.precision: v.tolerance for v in self.values}
        return "each value at its own precision (" + "; ".join(
            f"{name}: {t.text}" for name, t in sorted(met.items())) + ")" if met else \
            f"rtol {self.rtol:g}, atol {self.atol:g}"

    @property
    def within(self) -> list[str]:
        """Why differences beyond float32's tolerance are none: "float16 rounding", "rounding carried from its
        inputs", a tie order..., each once, in execution order."""
        found = sorted((e.order, e.within) for v in self.values for e in v.errors if e.ok and e.within)
        return list(dict.fromkeys(within for _, within in found))

    def value(self, node: str, name: str | None = None) -> ValueComparison:
        """The comparison of one value of A (its node's first output when no name is given)."""
        for v in self.values:
            if v.node == node and (name is None or v.name == name):
                return v
        raise KeyError(f"no aligned value {name or ''!r} of node {node!r}")

    def worst(self, count: int = 10) -> list[ValueComparison]:
        """The values with the largest relative error, then absolute error."""
        ranked = sorted(self.values, key=lambda v: (v.ok, -v.max_rel, -v.max_abs))
        return ranked[:count]

    def rows(self, count: int = 10) -> list[dict[str, Any]]:
        """The worst values as table rows."""
        rows = []
        for v in self.worst(count):
            first = v.first_exceeding
            rows.append({"node": v.node, "op": v.op_type, "value": v.name,
                         "B": "" if (v.b_node, v.b_name) == (v.node, v.name) else f"{v.b_node} · {v.b_name}",
                         "aligned by": v.how, "runs": len(v.errors), "max abs": v.max_abs, "max rel": v.max_rel,
                         "first beyond tolerance": "" if first is None else _where(first.iteration)})
        return rows

    def lines(self, count: int = 10) -> list[str]:
        out = [f"A: {self.a_label}", f"B: {self.b_label}"]
        out += [f"{label}: {message}" for label, message in self.errors.items()]
        out.append(f"aligned values: {len(self.values)} ({sum(len(v.errors) for v in self.values)} executions), "
                   f"not aligned: {len(self.unaligned)}; tolerance {self.tolerance_text}")
        explained = self.saturation.explained if self.saturation is not None else set()
        out += [f"output {d.line()}" + (" (onnxruntime's u8s8 saturation)" if not d.ok and any(
            name == d.name for _, name in explained) else "") for d in self.outputs]
        first = self.first
        agree = ("none among the values both sides reached (no verdict: a side did not finish)" if self.errors
                 else "none (every aligned value agrees" + "".join(f"; within {w}" for w in self.within) + ")")
        if first is not None and first.saturated and not self.differs:
            out.append("first divergence: none of explorer's; first difference: " + first.describe())
        elif self.values or self.errors:
            out.append("first divergence: " + (first.describe() if first else agree))
        if self.saturation is not None:
            out += self.saturation.lines()
        for gate in self.gates:
            out.append("gates: " + gate.describe())
        if self.gates_checked and not self.gates:
            out.append(f"gates: {', '.join(self.gates_checked)} agree at every time step")
        out += self.notes
        if any(not v.ok for v in self.values):
            out.append("worst values:")
            out.append(f"  {'node':40} {'value':24} {'max abs':>10} {'max rel':>10}  first beyond tolerance")
            for v in self.worst(count):
                if v.ok:
                    break
                at = v.first_exceeding
                out.append(f"  {v.node[-40:]:40} {v.name[-24:]:24} {v.max_abs:10.3g} {v.max_rel:10.3g}  "
                           f"{'' if at is None else _where(at.iteration)}")
        if self.unaligned:
            out.append(f"not aligned ({len(self.unaligned)}):")
            for u in self.unaligned[:count]:
                out.append(f"  {u.side} {u.node} · {u.name} ({u.op_type}): {u.reason}")
            if len(self.unaligned) > count:
                out.append(f"  ... {len(self.unaligned) - count} more")
        return out


def _where(iteration: tuple[int, ...]) -> str:
    return str(iteration) if iteration else "outside loops"
