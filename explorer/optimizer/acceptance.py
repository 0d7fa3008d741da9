"""onnxruntime's acceptance of an optimized model, checked once at the end of an optimization: the result is
loaded as a user loads it (an InferenceSession: onnxruntime's own type and shape inference in every body, which
onnx's checker does not do). When onnxruntime refuses the result but loads the original as the user's file has
it, bisection over the rewrites finds the first whose result it refuses; that rewrite is not applied (a decline
giving onnxruntime's reason) and the optimization runs again, until its result loads. When even the model
before any rewrite is refused, the value types the optimizer inferred (value_info the original did not declare)
are what onnxruntime refuses: they are left out."""
from __future__ import annotations

import time
from collections.abc import Callable

import onnx

from ..budgets import OPTIMIZER_RERUNS
from ..judge.judge import NoVerdict, load_in_onnxruntime
from .context import RewriteKey
from .result import OnnxruntimeCheck, OptimizationResult
from .size import drop_value_info

REFUSALS = ("refused", "crash", "memory")  # answers that say onnxruntime cannot load the model

# the same optimization run again with these rewrites left out, stopped after `count` rewrites (None: where the
# optimization itself stops)
Rerun = Callable[[dict[RewriteKey, str], int | None], OptimizationResult]


def refusal(model: onnx.ModelProto) -> NoVerdict | None:
    """Why onnxruntime does not load the model (a NoVerdict of any kind), None when it loads it."""
    try:
        load_in_onnxruntime(model)
    except NoVerdict as exc:
        return exc
    return None


def accepted(result: OptimizationResult, rerun: Rerun) -> OptimizationResult:
    """The optimization as onnxruntime accepts it: `result` when onnxruntime loads it (or cannot say), else the
    optimization run again (`rerun(refused, stop_after)`) without the rewrites whose results it refuses.
    `result.onnxruntime` says what onnxruntime found."""
    start = time.perf_counter()
    problem = refusal(result.optimized)
    if problem is not None and problem.kind in REFUSALS:
        original = refusal(result.original_as_given())
        if original is not None:
            kind = "original refused" if original.kind in REFUSALS else "not checked"
            result.onnxruntime = OnnxruntimeCheck(kind, str(original), seconds=time.perf_counter() - start)
            return result
        result, problem = _without_refused(result, rerun, problem)
    status = "loads" if problem is None else "refused" if problem.kind in REFUSALS else "not checked"
    left_out = tuple(f"{step_text(key)}: {why}" for key, why in result.refused.items())
    result.onnxruntime = OnnxruntimeCheck(status, "" if problem is None else str(problem), left_out,
                                          result.inferred_value_info_dropped, time.perf_counter() - start)
    return result


def _reason(refused: NoVerdict) -> str:
    return str(refused).removeprefix("onnxruntime refused: ")


def step_text(key: RewriteKey) -> str:
    graph, pattern, nodes = key
    return f"{pattern} on {', '.join(nodes)}" + (f" in {graph!r}" if graph else "")


def _without_refused(result: OptimizationResult, rerun: Rerun,
                     problem: NoVerdict) -> tuple[OptimizationResult, NoVerdict | None]:
    """The optimization run again without each rewrite whose result onnxruntime refuses, found by bisection,
    until its result loads (or OPTIMIZER_RERUNS rewrites were left out); the result and onnxruntime's last refusal."""
    refused = dict(result.refused)
    strip = False
    declared = result.declared_value_info()
    for _ in range(OPTIMIZER_RERUNS):

        def candidate(count: int, strip: bool = strip) -> onnx.ModelProto:
            model = rerun(refused, count).optimized
            if strip:
                drop_value_info(model, declared)
            return model

        count, why = _first_refused(len(result.steps), problem, candidate)
        if count == 0:
            if strip:
                return result, why  # refused before any rewrite, types left out: not a rewrite's doing
            strip = True
        else:
            step = result.steps[count - 1]
            refused[step.key] = f"onnxruntime refuses the model this rewrite gives: {_reason(why)}"
            result = rerun(refused, None)
        if strip:
            drop_value_info(result.optimized, declared)
            result.inferred_value_info_dropped = True
        found = refusal(result.optimized)
        if found is None or found.kind not in REFUSALS:
            return result, found
        problem = found
    return result, problem


def _first_refused(steps: int, problem: NoVerdict,
                   candidate: Callable[[int], onnx.ModelProto]) -> tuple[int, NoVerdict]:
    """The fewest rewrites (0 to `steps`) whose model onnxruntime refuses, and its refusal (bisection: the
    model after all `steps` is refused with `problem`)."""
    good, bad = -1, steps
    while bad - good > 1:
        middle = (good + bad) // 2
        found = refusal(candidate(middle))
        if found is not None and found.kind in REFUSALS:
            bad, problem = middle, found
        else:
            good = middle
    return bad, problem
