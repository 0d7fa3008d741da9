"""A model a page has shown is optimized in the background with every pattern (ui/work.optimize_ahead), so that the
Optimizer page opens without waiting for it: a sample's or a local file's, not an upload (its session's alone:
kept for every session, its optimization would hold it past the session), not one past OPTIMIZE_AHEAD_NODES. An
optimization is made once for every session; a failure is not kept."""
from __future__ import annotations

import pytest

from explorer.errors import ExplorerError
from explorer.hosting.priority import this_thread_lowered
from explorer.inputs.samples import sample_path
from explorer.model.model import load
from explorer.optimizer import result as result_module
from explorer.ui import cache, diagram, jobs, state, work
from explorer.views.rewrites import pattern_rules, whole_models
from tests.support.apptest import PAGES, assert_clean, diagram_args, start, texts, upload
from tests.support.caps_models import chain


def ahead(model_key: str):
    """The optimization kept (or under way) for a model with every pattern, as the Optimizer page opens."""
    return cache._optimizations.find((model_key, tuple(pattern_rules()), None))


def test_a_shown_model_is_optimized_ahead_and_the_optimizer_page_takes_it(monkeypatch):
    at = start("opt_shape_chain")  # the Graph page
    model = load(str(sample_path("opt_shape_chain")))
    started = ahead(model.sha256)
    assert started is not None and len(started.result(timeout=120).steps) == 17
    for drawing in whole_models(started.result(), model):  # the two drawings the page opens with, laid out ahead
        laid_out = diagram._layouts.find(diagram._dot_key(drawing.dot))
        assert laid_out is not None and "</svg>" in laid_out.result(timeout=120)
    asked = []
    monkeypatch.setattr(cache, "optimize", lambda *args, **kwargs: asked.append(args))
    monkeypatch.setattr(result_module, "load", lambda *args, **kwargs: asked.append(args))  # loaded ahead too
    monkeypatch.setattr(diagram, "render_svg", lambda *args, **kwargs: asked.append(args))  # and laid out
    at.switch_page(PAGES["optimizer"]).run()
    assert_clean(at)
    assert "**17 rewrites**" in texts(at) and asked == []
    assert at.toggle(key=state.W_OPT_WHOLE).value  # the whole models drawn, as loaded and laid out ahead
    for key in (state.W_OPT_BEFORE, state.W_OPT_AFTER):
        assert "</svg>" in diagram_args(at, key)["svg"]


def ahead_proofs(model_key: str) -> dict:
    """The proofs started ahead (no session's yet) of a model's optimization, by job key."""
    return {key: job for key, (job, _) in jobs._ahead._entries.items() if key.startswith(f"proof:{model_key}:")}


def test_the_proof_is_started_ahead_and_the_optimizer_page_takes_it_running_or_done(monkeypatch):
    at = start("opt_shape_chain")  # the Graph page: the sample's run, on its own inputs
    model = load(str(sample_path("opt_shape_chain")))
    ahead(model.sha256).result(timeout=120)
    [(key, proof)] = ahead_proofs(model.sha256).items()
    assert key.endswith(":None:" + at.session_state[state.RUN_REQUEST].feeds_key)  # the session's run's feeds
    asked = []  # by the page (an earlier test's proof made ahead, lowered, may still be finishing)
    monkeypatch.setattr(work, "verify", lambda *args, **kwargs: None if this_thread_lowered() else asked.append(args))
    at.switch_page(PAGES["optimizer"]).run()
    assert_clean(at)
    assert at.session_state[state.JOBS][key] is proof and ahead_proofs(model.sha256) == {}  # the session's now
    assert "Fully optimized model: :green[**equivalent**]" in texts(at).splitlines()
    assert asked == []  # not proved again


def test_an_upload_or_a_model_past_the_bound_is_optimized_only_when_asked(monkeypatch):
    data = chain(50)
    at = upload(start(), "chain.onnx", data)
    key = load(data).sha256
    assert ahead(key) is None
    at.switch_page(PAGES["optimizer"]).run()  # asked: optimized then
    assert_clean(at) and ahead(key) is not None and ahead_proofs(key) == {}
    monkeypatch.setattr(work, "OPTIMIZE_AHEAD_NODES", 10)  # opt_linear_cleanup has 13 nodes
    start("opt_linear_cleanup")
    assert ahead(load(str(sample_path("opt_linear_cleanup"))).sha256) is None


def test_a_failed_optimization_is_not_kept(monkeypatch):
    model = load(str(sample_path("tiny_mlp")))
    real = cache.optimize
    monkeypatch.setattr(cache, "optimize", lambda *args, **kwargs: 1 / 0)
    with pytest.raises(ExplorerError, match="the optimizer failed: unexpected ZeroDivisionError"):
        cache.optimize_cached(model.sha256, ("MatMulAdd",), None, model)
    monkeypatch.setattr(cache, "optimize", real)
    assert len(cache.optimize_cached(model.sha256, ("MatMulAdd",), None, model).steps) == 2  # asked again: made
    assert cache.optimize_cached(model.sha256, ("MatMulAdd",), 1, model).steps[0].pattern == "MatMulAdd"


def test_the_work_made_ahead_runs_at_the_lowest_priority_and_the_pages_own_does_not(monkeypatch):
    lowered: dict[str, list[bool]] = {"optimize": [], "verify": []}
    for module, name in ((cache, "optimize"), (work, "verify")):
        real = getattr(module, name)

        def spy(*args, real=real, name=name, **kwargs):
            lowered[name].append(this_thread_lowered())
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    at = start("opt_shape_chain")
    model = load(str(sample_path("opt_shape_chain")))
    ahead(model.sha256).result(timeout=120)
    [proof] = ahead_proofs(model.sha256).values()
    assert proof.wait(120) and proof.state == "done"
    assert lowered["optimize"][-1] is True and lowered["verify"] and all(lowered["verify"])
    at.switch_page(PAGES["optimizer"]).run()
    at.pills(key=state.W_PATTERNS).set_value(["MatMulAdd"]).run()  # asked by the page: made in its own run
    assert_clean(at) and lowered["optimize"][-1] is False and lowered["verify"][-1] is False
