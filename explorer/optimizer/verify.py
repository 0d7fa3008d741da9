"""Proofs of equivalence: the original and optimized models (or one rewrite's before/after models) run on the
same feeds through explorer's executor and onnxruntime; integers must be equal, floats within rtol/atol. When
the whole model differs, bisection over `stop_after` names the first rewrite that breaks it."""
from __future__ import annotations

import gc
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import onnx

from ..budgets import HAND_OVER_BYTES
from ..compare.precision import FLOAT32, Tolerance, tolerances
from ..compare.rounding import assess as assess_value
from ..compare.stats import OutputDiff
from ..errors import ExecutionError, ExplorerError, LimitExceeded, summarize
from ..executor import run
from ..executor.run import forget_program, has_program
from ..heap import give_back
from ..judge.judge import NoVerdict, run_onnxruntime, skipped_because_of_limit
from ..model.model import Model, load
from .record import RewriteStep
from .rewrite import OptimizationResult, first_rewrites

JUDGES = ("explorer", "onnxruntime")


@dataclass
class JudgeReport:
    """What one judge (explorer's executor or onnxruntime) says: per-output differences, or why it could not."""

    judge: str
    diffs: list[OutputDiff] = field(default_factory=list)
    error: str | None = None  # the optimized model failed where the original ran: a failure
    unavailable: str | None = None  # the judge could not run the original: no verdict

    @property
    def ok(self) -> bool:
        return self.error is None and self.unavailable is None and all(d.ok for d in self.diffs)


@dataclass
class Equivalence:
    """The verdict on two models run on the same feeds: 'equivalent', 'different', 'explorer only' (explorer
    finds them equivalent, onnxruntime, asked too, could not run the original) or 'inconclusive' (no judge could
    run the original). `culprit` is the first rewrite that breaks equivalence, when bisection ran."""

    reports: list[JudgeReport]
    culprit: RewriteStep | None = None
    culprit_check: StepCheck | None = None
    tolerance: str = ""  # the tolerances, when wider than float32's, and why

    @property
    def status(self) -> str:
        judged = [r for r in self.reports if r.unavailable is None]
        if not judged:
            return "inconclusive"
        if not all(r.ok for r in judged):
            return "different"
        return "explorer only" if any(r.judge == "onnxruntime" for r in self.reports if r not in judged) \
            else "equivalent"

    @property
    def failed_in_onnxruntime(self) -> bool:
        """onnxruntime ran the original but refuses (or fails on) the optimized model: the optimization failed."""
        return any(r.judge == "onnxruntime" and r.error is not None for r in self.reports)

    @property
    def ok(self) -> bool:
        return self.status == "equivalent"

    def lines(self) -> list[str]:
        out = []
        for report in self.reports:
            if report.unavailable:
                out.append(f"{report.judge}: no verdict ({report.unavailable})")
            elif report.error:
                out.append(f"{report.judge}: optimized model failed: {report.error}")
            for d in report.diffs:
                out.append(f"{report.judge}: {d.line()}")
        if self.tolerance:
            out.append(f"tolerances {self.tolerance}")
        status = self.status
        if status == "explorer only":
            status += " (onnxruntime gave no verdict on the original; explorer finds the models equivalent)"
        elif self.failed_in_onnxruntime:
            status += " (onnxruntime runs the original, not the optimized model: the optimization failed)"
        out.append(f"equivalence: {status}")
        if self.culprit is not None:
            which = "rewrite whose result onnxruntime refuses" if self.failed_in_onnxruntime else "failing rewrite"
            out.append(f"first {which}: {self.culprit.describe()}")
            if self.culprit_check is not None:
                out.append(f"  alone: {self.culprit_check.status} {self.culprit_check.detail}".rstrip())
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status, "tolerance": self.tolerance,
            "judges": [{"judge": r.judge, "error": r.error, "unavailable": r.unavailable,
                        "outputs": [asdict(d) for d in r.diffs]} for r in self.reports],
            "culprit": None if self.culprit is None else self.culprit.to_dict(),
            "culprit_alone": None if self.culprit_check is None else asdict(self.culprit_check),
        }


def _short(exc: BaseException) -> str:
    text = summarize(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _outputs(judge: str, model: Model, feeds: dict[str, Any], recorded: list[int] | None = None) -> dict[str, Any]:
    """The model's outputs on the feeds that are inputs of it: a feed naming an initializer that is not a graph
    input of this model (the optimized model made it a constant) is no feed of it. explorer's run appends the
    bytes it recorded to `recorded`."""
    inputs = {i.name for i in model.graph.input}
    feeds = {k: v for k, v in feeds.items() if k in inputs or k not in model.initializer_names}
    if judge == "explorer":
        trace = run(model, feeds)
        if recorded is not None:
            recorded.append(trace.recorded_bytes)
        return dict(trace.outputs)
    fixed = sorted(k for k in feeds if k in model.initializer_names)
    if fixed and model.proto.ir_version < 4:
        raise NoVerdict("skipped", f"onnxruntime holds the initializers of an IR {model.proto.ir_version} model as "
                                   f"constants: it cannot be fed {', '.join(map(repr, fixed))}")
    return run_onnxruntime(model.as_given(), feeds)  # the model as its file has it, not loading's inferences


def _hand_over(compiled_here: list[Model], recorded: int) -> None:
    """Before onnxruntime's child runs the models: the memory explorer's runs of them hold and no longer need goes
    back to the system (the compiled programs the proof made, the freed heap), so the two processes do not hold
    their copies of a run at once (a proof's peak is the parent's and the child's together). A model the caller
    had run before keeps its program. Only after runs that recorded HAND_OVER_BYTES or more: a collection costs
    the proof of a small model more than its runs."""
    if recorded < HAND_OVER_BYTES:
        return
    for model in compiled_here:
        forget_program(model)
    gc.collect()  # a run's trace can be held in reference cycles until the collector runs
    give_back()


def compare_models(original: Model | onnx.ModelProto | str, optimized: Model | onnx.ModelProto | str,
                   feeds: dict[str, Any] | None = None, *, seed: int = 0, judges: Iterable[str] = JUDGES,
                   rtol: float | None = None, atol: float | None = None, lenient: bool = False) -> Equivalence:
    """Runs both models on the same feeds (the user's, else random ones from the original's declared inputs)
    with each judge (onnxruntime gets each model exactly as given: a path's file, a proto as it is, a Model as
    its source has it), and compares every output of the original with the optimized model's output of that name
    (or, for outputs whose names differ, of the same position), within `rtol` and `atol` (by default float32's,
    or wider when a model computes in a narrower float type: compare/precision.py). `lenient` loads paths and
    protos in lenient mode (models that break the spec's typing rules)."""
    before = original if isinstance(original, Model) else load(original, lenient=lenient)
    after = optimized if isinstance(optimized, Model) else load(optimized, lenient=lenient)
    judges = tuple(judges)
    compiled_before = [model for model in (before, after) if has_program(model)]
    recorded: list[int] = []  # bytes explorer's runs recorded
    give_back()  # what the optimization freed: kept for runs to reuse, it would count toward the proof's peak
    wide_rtol, wide_atol, why = tolerances(before.proto, after.proto)
    rtol = wide_rtol if rtol is None else rtol
    atol = wide_atol if atol is None else atol
    note = f"rtol {rtol:g}, atol {atol:g}: {why}" if why and (rtol, atol) == (wide_rtol, wide_atol) else ""
    if feeds is None:
        try:
            feeds = before.example_inputs(seed=seed)
        except (ExplorerError, ValueError) as exc:
            reason = f"no random inputs from the declared types ({_short(exc)}); give feeds"
            return Equivalence([JudgeReport(judge, unavailable=reason) for judge in judges], tolerance=note)
    reports: list[JudgeReport] = []
    limit_hit: LimitExceeded | None = None
    for judge in judges:
        if judge == "onnxruntime" and reports:
            _hand_over([model for model in (before, after) if not any(model is had for had in compiled_before)],
                       sum(recorded))
        report = JudgeReport(judge)
        reports.append(report)
        try:
            if judge == "onnxruntime" and limit_hit is not None:
                raise skipped_because_of_limit(limit_hit)
            expected = _outputs(judge, before, feeds, recorded)
        except NoVerdict as exc:
            failed = exc.kind in ("refused", "crash", "memory")
            report.unavailable = f"the original does not run: {exc}" if failed else str(exc)
            continue
        except Exception as exc:  # noqa: BLE001 - whatever stops the judge on the original
            if isinstance(exc, LimitExceeded):
                limit_hit = exc
            report.unavailable = f"the original does not run: {_short(exc)}"
            continue
        try:
            got = _outputs(judge, after, feeds, recorded)
        except NoVerdict as exc:
            if exc.kind == "cancelled":
                report.unavailable = str(exc)
            else:
                report.error = str(exc)
            continue
        except Exception as exc:  # noqa: BLE001 - the optimized model fails where the original ran
            report.error = _short(exc)
            continue
        names = list(got)
        tolerance = Tolerance(rtol, atol, "given" if note == "" and (rtol, atol) != (FLOAT32.rtol, FLOAT32.atol)
                              else FLOAT32.precision, FLOAT32.eps)
        producers = {out: node.op_type for node in before.graph.node for out in node.output}
        for k, (name, value) in enumerate(expected.items()):
            theirs = got.get(name, got[names[k]] if k < len(names) else None)
            report.diffs.append(assess_value(name, theirs, value, tolerance, producers.get(name, "")))
    return Equivalence(reports, tolerance=note)


@dataclass
class StepCheck:
    """One rewrite checked alone: its before and after models run on the same random inputs of its types."""

    index: int
    pattern: str
    status: str  # equivalent | different | inconclusive
    detail: str = ""
    max_abs: float = 0.0
    max_rel: float = 0.0


def check_step(step: RewriteStep, values: dict[str, Any] | None = None, *, seed: int = 0,
               judges: Iterable[str] = ("explorer",), rtol: float | None = None, atol: float | None = None,
               lenient: bool = False) -> StepCheck:
    """Runs a rewrite's before and after models on the same inputs: the values a run of the model gave them
    (`values`, see observed_values) when all are known, else random ones from the step's input types."""
    before = load(step.before_model(), lenient=lenient)
    feeds = None
    if values is not None and all(i.name in values for i in step.inputs):
        feeds = {i.name: values[i.name] for i in step.inputs}
    verdict = compare_models(before, step.after_model(), feeds, seed=seed, judges=judges, rtol=rtol, atol=atol,
                             lenient=lenient)
    diffs = [d for r in verdict.reports for d in r.diffs]
    detail = "; ".join(r.unavailable or r.error or "" for r in verdict.reports if r.unavailable or r.error)
    bad = [d.name for d in diffs if not d.ok]
    if bad:
        detail = (detail + "; " if detail else "") + f"outputs differ: {', '.join(bad)}"
    return StepCheck(step.index, step.pattern, verdict.status, detail,
                     max((d.max_abs for d in diffs), default=0.0), max((d.max_rel for d in diffs), default=0.0))


def observed_values(model: Model | onnx.ModelProto, feeds: dict[str, Any] | None = None, *,
                    seed: int = 0, lenient: bool = False) -> dict[str, Any]:
    """Every value one run of the model computes, by name (a body value: its first iteration's); when the run
    fails, the values computed before the failure."""
    model = model if isinstance(model, Model) else load(model, lenient=lenient)
    try:
        trace = run(model, model.example_inputs(seed=seed) if feeds is None else feeds)
    except ExecutionError as exc:
        trace = exc.trace
    except (ExplorerError, ValueError):
        return {}
    if trace is None:
        return {}
    values: dict[str, Any] = dict(trace.feeds)
    for event in trace.events:
        if event.summarized:
            continue
        for name, value in [*event.inputs.items(), *event.outputs.items()]:
            values.setdefault(name, value)
    return values


def check_steps(result: OptimizationResult, feeds: dict[str, Any] | None = None, *, seed: int = 0,
                judges: Iterable[str] = ("explorer",)) -> list[StepCheck]:
    """Every rewrite of an optimization checked alone, on the values runs of the original and optimized models
    gave its inputs where they are known, else on random inputs of its types."""
    values = observed_values(result.optimized, feeds, seed=seed, lenient=result.lenient)
    values.update(observed_values(result.original, feeds, seed=seed, lenient=result.lenient))
    return [check_step(step, values, seed=seed, judges=judges, lenient=result.lenient) for step in result.steps]


def verify(result: OptimizationResult, feeds: dict[str, Any] | None = None, *, seed: int = 0,
           judges: Iterable[str] = JUDGES, bisect: bool = True) -> Equivalence:
    """The whole-model proof for an optimization; when the models differ and `bisect`, the first failing rewrite
    is found by re-running the optimization with stop_after (log2(#rewrites) runs) and checked alone."""
    judges = tuple(judges)
    verdict = compare_models(result.model or result.original, result.optimized, feeds, seed=seed, judges=judges,
                             lenient=result.lenient)
    if verdict.status == "different" and bisect and result.steps:
        culprit = find_culprit(result, feeds, seed=seed, judges=judges)
        if culprit is not None:
            verdict.culprit = culprit
            verdict.culprit_check = check_step(culprit, seed=seed, lenient=result.lenient)
    return verdict


def find_culprit(result: OptimizationResult, feeds: dict[str, Any] | None = None, *, seed: int = 0,
                 judges: Iterable[str] = JUDGES) -> RewriteStep | None:
    """The first rewrite after which the model stops being equivalent to the original (bisection over
    stop_after), or None when the fully optimized model is equivalent."""
    original = result.model or load(result.original, lenient=result.lenient)
    feeds = original.example_inputs(seed=seed) if feeds is None else feeds
    judges = tuple(judges)

    def differs(optimized: onnx.ModelProto) -> bool:
        return compare_models(original, optimized, feeds, judges=judges, lenient=result.lenient).status == "different"

    def breaks(count: int) -> bool:
        return differs(first_rewrites(result, count).optimized)

    low, high = 0, len(result.steps)
    if not differs(result.optimized):
        return None
    while high - low > 1:
        middle = (low + high) // 2
        if breaks(middle):
            high = middle
        else:
            low = middle
    return result.steps[high - 1]
