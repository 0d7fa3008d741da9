"""explorer's graph outputs against onnxruntime's (run in a child process under a wall-clock limit, see
explorer/judge/judge.py): the quick check behind `run --check`. The full comparison is `compare(...)`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..judge.judge import NoVerdict, run_onnxruntime
from ..model.model import Model
from .stats import ATOL, RTOL, OutputDiff, compare_values


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
        return [d.line() for d in self.diffs]


def compare_with_onnxruntime(model: Model, feeds: dict[str, Any], outputs: dict[str, Any],
                             rtol: float = RTOL, atol: float = ATOL, *,
                             timeout: float | None = None) -> CheckReport:
    """Max abs/rel difference of each output against onnxruntime; `error` says why there is no verdict (not
    installed, refused, timeout, crash, memory cap)."""
    try:
        theirs = run_onnxruntime(model.as_given(), feeds, timeout=timeout)  # the file as it is, not inferred
    except NoVerdict as exc:
        return CheckReport(error=str(exc))
    return CheckReport([compare_values(name, outputs.get(name), theirs[name], rtol, atol) for name in theirs])
