"""The app never blocks on onnxruntime: the Optimizer page's proof and the Compare page run in the background with
their progress and a Cancel button, the rest of the page usable; cancel ends onnxruntime's child process; the
answer appears when it is ready."""
from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.hosting.priority import this_thread_lowered
from explorer.judge.judge import run_onnxruntime
from explorer.ui import jobs, state, work
from tests.support.apptest import PAGES, assert_clean, position, record_tables, start, text_blocks
from tests.support.judge_models import endless_loop, judge_child, judge_children


@pytest.fixture(autouse=True)
def progress_shown(monkeypatch):
    monkeypatch.setattr(jobs, "WAIT_S", 0.0)  # every job is shown running first


def session_jobs(at: AppTest) -> list:
    return list(at.session_state[state.JOBS].values())


def markdown(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


def test_the_proof_runs_in_the_background_and_cancel_ends_onnxruntime(monkeypatch):
    def endless_proof(result, feeds, bisect):
        return run_onnxruntime(endless_loop(), {"x": np.ones(1, np.float32)}, timeout=300)

    monkeypatch.setattr(work, "verify", endless_proof)
    monkeypatch.setattr(work, "OPTIMIZE_AHEAD_NODES", 0)  # no proof made ahead: the page starts its own
    at = start("tiny_mlp")
    at.switch_page(PAGES["optimizer"]).run()
    assert_clean(at)
    assert "Fully optimized model: checking in the background…" in markdown(at)
    assert any(i.value.startswith("Equivalence proof: running…") for i in at.info)
    [stats] = [f for f in record_tables(at) if "applied" in f.columns]  # the rest of the page is there
    assert stats.set_index("pattern").loc["MatMulAdd", "applied"] == 2
    [job] = session_jobs(at)
    child = judge_child(job.judge, 60)  # onnxruntime at work on the endless loop
    assert child is not None and child in judge_children(), (job.state, job.error)
    [cancel] = [b for b in at.button if b.label == "Cancel"]
    cancel.click().run()
    assert job.state == "cancelled" and judge_children() == []
    assert "Fully optimized model: :orange[**not checked**] (cancelled)" in markdown(at)
    assert any("cancelled after" in w.value and "onnxruntime was stopped" in w.value for w in at.warning)
    monkeypatch.undo()
    monkeypatch.setattr(jobs, "WAIT_S", 600.0)
    [again] = [b for b in at.button if b.label == "Ask onnxruntime again"]
    again.click().run()
    assert_clean(at)
    assert "Fully optimized model: :green[**equivalent**]" in markdown(at)
    assert judge_children() == []  # a finished job closes its judge


def test_the_verdict_appears_when_ready():
    at = start("tiny_mlp")
    at.switch_page(PAGES["optimizer"]).run()
    assert "Fully optimized model: checking in the background…" in markdown(at)
    for job in session_jobs(at):
        assert job.wait(120)
    at.run()
    assert_clean(at)
    assert "Fully optimized model: :green[**equivalent**]" in markdown(at)
    assert "onnxruntime: probs" in text_blocks(at)[0] and not at.info


def test_the_comparison_with_onnxruntime_runs_in_the_background():
    at = start(timeout=120)
    at.switch_page("explorer/ui/pages/compare.py").run()
    assert_clean(at)
    assert any(i.value.startswith("Comparison: running…") for i in at.info) and not at.success
    [job] = session_jobs(at)
    assert job.wait(120)
    at.run()
    verdict = at.success[0].value.replace("\\", "").replace("\u200b", "")
    assert verdict.startswith("trace of nested_loops and onnxruntime agree:") and "aligned value(s)" in verdict


def test_the_step_page_checks_the_outputs_against_onnxruntime_in_the_background():
    at = start("nested_loops")
    at.switch_page(PAGES["step"]).run()
    assert not any(i.value.startswith("Output check") for i in at.info)  # asked for only on request
    at.toggle(key=state.W_STEP_CHECK).set_value(True).run()
    assert_clean(at)
    assert any(i.value.startswith("Output check: running…") for i in at.info)
    assert position(at).startswith("Event 0 of 0–72")  # the stepper is there meanwhile
    [job] = session_jobs(at)
    assert job.wait(120)
    at.run()
    lines = text_blocks(at)[0].splitlines()
    assert [line.split(":")[0] for line in lines] == ["s_final", "Y"] and all(line.endswith(" ok") for line in lines)


def test_a_proof_done_in_one_session_is_the_next_sessions_answer(monkeypatch):
    first = start("tiny_mlp")
    first.switch_page(PAGES["optimizer"]).run()
    [job] = session_jobs(first)
    assert job.wait(120) and job.state == "done"  # done after the page's run: no run of its page saw it done
    asked = []
    monkeypatch.setattr(work, "verify", lambda *args, **kwargs: None if this_thread_lowered() else asked.append(args))
    second = start("tiny_mlp")  # (a proof made ahead, in the background, is not this page's asking)
    second.switch_page(PAGES["optimizer"]).run()
    assert_clean(second)
    assert "Fully optimized model: :green[**equivalent**]" in markdown(second)  # at once, without a job of its own
    assert session_jobs(second) == [job] and asked == []
    third = start("tiny_mlp")
    third.session_state[state.W_PATTERNS] = ["MatMulAdd"]  # another question: another proof
    third.switch_page(PAGES["optimizer"]).run()
    assert asked


def test_a_cancelled_proof_is_not_another_sessions_answer(monkeypatch):
    def endless_proof(result, feeds, bisect):
        return run_onnxruntime(endless_loop(), {"x": np.ones(1, np.float32)}, timeout=300)

    monkeypatch.setattr(work, "verify", endless_proof)
    first = start("tiny_mlp")
    first.switch_page(PAGES["optimizer"]).run()
    [cancel] = [b for b in first.button if b.label == "Cancel"]
    cancel.click().run()
    monkeypatch.undo()
    monkeypatch.setattr(jobs, "WAIT_S", 600.0)
    second = start("tiny_mlp")
    second.switch_page(PAGES["optimizer"]).run()
    assert "Fully optimized model: :green[**equivalent**]" in markdown(second)
    assert session_jobs(second)[0] is not session_jobs(first)[0]


def test_a_sweeps_input_is_named_by_its_file_so_its_proof_stays_the_sessions():
    assert work.by_content("sample:ab12") and work.by_content("random:0:[]") and work.by_content("upload:ff")
    assert not work.by_content("swept:/data/sweep/input_3.npz")
