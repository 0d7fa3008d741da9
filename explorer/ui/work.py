"""The work pages ask for beyond the run: optimizations (cached), and the onnxruntime-judged jobs that run in
the background (equivalence proofs, comparisons, output checks); the latest comparison is kept for the Graph
page's colours."""
from __future__ import annotations

from functools import partial
from typing import Any

import streamlit as st

from ..compare import Comparison, compare
from ..compare.outputs import CheckReport, compare_with_onnxruntime
from ..judge.judge_job import JudgeJob
from ..model.model import Model
from ..optimizer import OptimizationResult
from ..optimizer.verify import Equivalence, verify
from ..views.rewrites import WHOLE_MODEL_LIMIT, pattern_rules, whole_models
from . import cache, diagram, jobs, reach
from .cache import RunRequest, optimize_cached
from .state import COMPARED, RUN_REQUEST, active_model, active_source, current_run, current_trace, run_key

# nodes: a model of up to this many is optimized as soon as a page has shown it (gtcrn's 1,786 take 0.25 s)
OPTIMIZE_AHEAD_NODES = 5000


def optimization(model: Model, patterns: tuple[str, ...], stop_after: int | None = None) -> OptimizationResult:
    """The model optimized with these patterns (only the first `stop_after` rewrites when given); cached.
    Raises ExplorerError (whatever went wrong) for the page to show."""
    return optimize_cached(model.sha256, patterns, stop_after, model)


def optimize_ahead() -> None:
    """Starts, in the background, the optimization the Optimizer page opens with (every pattern) of the active
    model, a sample's or a local file's of up to OPTIMIZE_AHEAD_NODES nodes, in an app that is not shared, and once
    it is made, what the page shows of it (_prepare_page): the page then opens without waiting (its first render
    on gtcrn spent 0.4 to 0.5 s optimizing beside the browser's work). An uploaded model is its session's alone,
    let go when the session ends: kept for every session, its optimization would hold it. A shared app optimizes
    only what a visitor asks for."""
    source, model = active_source(), active_model()
    if source is None or model is None or source.kind == "upload" or reach.access().shared \
            or len(model.index.nodes) > OPTIMIZE_AHEAD_NODES:
        return
    patterns = tuple(pattern_rules())
    key, feeds, label, shared = _proof_request(model, patterns, None)
    cache.optimize_ahead(model, patterns, partial(_prepare_page, model, (key, feeds, label) if shared else None))


def _prepare_page(model: Model, proof: tuple[str, Any, str] | None, result: OptimizationResult) -> None:
    """Starts what the Optimizer page shows of an optimization made ahead: graphviz on the two models it draws
    whole (whisper's merged decoder optimized: 2.2 s of layout) and the proof on the feeds of the run the
    session had then (`proof`: its job's key, feeds and label; a proof in a new browser's first render took 0.3
    to 0.5 s beside the browser's work)."""
    if len(model.index.nodes) <= WHOLE_MODEL_LIMIT:
        diagram.lay_out_ahead(*whole_models(result, model))
    if proof is not None:
        key, feeds, label = proof
        jobs.start_ahead(key, label, lambda: verify(result, feeds, bisect=True))


def by_content(feeds_key: str) -> bool:
    """Whether a feeds key names the feeds by their content (a hash, a seed), so that the same key in another
    session means the same values: all but a sweep's input, which names a file that may have changed since."""
    return not feeds_key.startswith("swept:")


def equivalence(model: Model, patterns: tuple[str, ...], stop_after: int | None,
                result: OptimizationResult, wait: bool = True) -> tuple[str, JudgeJob[Equivalence]]:
    """(job key, job) of the proof: the original and (partially) optimized models run on the current run's feeds
    (random ones when there are none) by explorer and onnxruntime in the background; for the full
    optimization, bisection names the first failing rewrite. `wait`: as jobs.job's."""
    key, feeds, label, shared = _proof_request(model, patterns, stop_after)
    return key, jobs.job(key, label, lambda: verify(result, feeds, bisect=stop_after is None), shared=shared,
                         wait=wait)


def _proof_request(model: Model, patterns: tuple[str, ...], stop_after: int | None) -> tuple[str, Any, str, bool]:
    """(job key, feeds, label, whether it is shared) of the proof of the model optimized with `patterns` (after
    `stop_after` rewrites) on the session's current run's feeds, None (random ones) when there is none."""
    request: RunRequest | None = st.session_state.get(RUN_REQUEST)
    trace = current_trace()
    feeds = trace.feeds if trace is not None and request is not None else None
    feeds_key = request.feeds_key if request is not None and feeds is not None else "random:0"
    key = f"proof:{model.sha256}:{','.join(patterns)}:{stop_after}:{feeds_key}"
    label = "Equivalence proof" + ("" if stop_after is None else f" after {stop_after} rewrites")
    return key, feeds, label, by_content(feeds_key)


def comparison(b: Any, b_key: str, rtol: float | None, atol: float | None) -> tuple[str, JudgeJob[Comparison]] | None:
    """(job key, job) of the current run (side A) against side B (`b_key` names B's content), run in the
    background; None when there is no run. Tolerances left out (None): each value at its own precision."""
    model, trace = active_model(), current_trace()
    request: RunRequest | None = st.session_state.get(RUN_REQUEST)
    if model is None or trace is None or request is None:
        return None
    key = f"compare:{model.sha256}:{request.feeds_key}:{b_key}:{rtol!r}:{atol!r}"
    job = jobs.job(key, "Comparison", lambda: compare(trace, b, trace.feeds, model=model, rtol=rtol, atol=atol))
    if job.state == "done" and job.result is not None:
        st.session_state[COMPARED] = (run_key(), f"{b_key}:{rtol!r}:{atol!r}", job.result)
    return key, job


def last_comparison() -> tuple[str, Comparison] | None:
    """The comparison the Compare page made last (with a key naming B and the tolerances), while the current
    run is still its side A."""
    found = st.session_state.get(COMPARED)
    return (found[1], found[2]) if found is not None and found[0] == run_key() else None


def output_check() -> tuple[str, JudgeJob[CheckReport]] | None:
    """(job key, job) of the current run's outputs checked against onnxruntime's on the same feeds, in the
    background (what `run --check` prints); None when there is no finished run."""
    model, outcome = active_model(), current_run()
    request: RunRequest | None = st.session_state.get(RUN_REQUEST)
    if model is None or request is None or outcome is None or outcome.trace is None or outcome.error:
        return None
    trace = outcome.trace
    key = f"check:{model.sha256}:{request.feeds_key}"
    return key, jobs.job(key, "Output check", lambda: compare_with_onnxruntime(model, trace.feeds, trace.outputs),
                         shared=by_content(request.feeds_key))
