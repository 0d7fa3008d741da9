"""Background work that asks onnxruntime: polled while it runs, its result when done, cancelled at once with no
onnxruntime process left behind."""
from __future__ import annotations

import threading

import numpy as np
from onnx import TensorProto as T

import explorer.judge.judge_job
from explorer.judge.judge import NoVerdict, run_onnxruntime
from explorer.judge.judge_job import JudgeJob
from tests.support.judge_models import div_model, endless_loop, judge_children


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


def judge_started(job: JudgeJob, hold: threading.Event | None = None) -> threading.Event:
    """Set once the job's judge has started its onnxruntime child (a spy on its start), which then waits for
    `hold` when given."""
    started = threading.Event()
    start = job.judge._start

    def spy():
        process = start()
        started.set()
        if hold is not None:
            hold.wait()
        return process

    job.judge._start = spy
    return started


def test_the_result_arrives_when_ready_and_the_judge_is_closed(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(explorer.judge.judge_job, "time", clock)
    job = JudgeJob(lambda: run_onnxruntime(div_model(T.FLOAT), {"a": np.array([3.0], np.float32),
                                                           "b": np.array([2.0], np.float32)}), "div")
    working = threading.Event()
    started = judge_started(job, working)
    job.start()
    assert started.wait(60)
    clock.now += 2.5  # while onnxruntime works
    working.set()
    assert job.wait(60) and job.state == "done" and job.error is None
    assert job.result["y"].tolist() == [1.5]
    assert job.elapsed == 2.5 and job.judge._process is None
    clock.now += 7.0
    assert job.elapsed == 2.5  # the clock stops at the end


def test_cancel_ends_onnxruntime_at_once_and_later_calls_start_no_process(monkeypatch):
    calls = []

    def work():
        for _ in range(2):  # a proof asks several times; after a cancel the next question is refused
            try:
                run_onnxruntime(endless_loop(), {"x": np.ones(1, np.float32)}, timeout=60)
            except NoVerdict as exc:
                calls.append(exc.kind)
        return calls

    clock = Clock()
    monkeypatch.setattr(explorer.judge.judge_job, "time", clock)
    job = JudgeJob(work, "endless")
    started = judge_started(job)
    job.start()
    assert started.wait(60)
    assert judge_children() and job.state == "running"
    clock.now += 4.0
    job.cancel()
    assert job.state == "cancelled" and judge_children() == []
    assert job.wait(30)
    job._finished.wait(30)
    assert calls == ["cancelled", "cancelled"] and judge_children() == []
    clock.now += 10.0
    assert job.elapsed == 4.0  # the clock stopped at the cancel


def test_a_failure_in_the_work_is_the_jobs_error():
    def work():
        raise KeyError("no such value")

    job = JudgeJob(work, "broken").start()
    assert job.wait(30) and job.state == "failed" and "KeyError" in job.error


def test_cancel_after_the_end_changes_nothing():
    job = JudgeJob(lambda: 1, "quick").start()
    assert job.wait(30)
    job.cancel()
    assert job.state == "done" and job.result == 1


def test_a_finished_job_holds_its_answer_not_what_its_work_read():
    """A finished job is kept for its answer (the app keeps some for every session): the model and the run its
    work read must not stay alive through it."""
    import gc
    import weakref

    class Held:
        """Stands for a model or a run's trace the work reads."""

    def reading(value: Held):
        return lambda: 41 + (value is not None)  # the work's closure holds the value, as the app's lambdas do

    held = Held()
    gone = weakref.ref(held)
    job = JudgeJob(reading(held), "holds").start()
    del held
    assert job.wait(60) and job.result == 42
    gc.collect()
    assert gone() is None
