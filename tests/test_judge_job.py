"""Background work that asks onnxruntime: polled while it runs, its result when done, cancelled at once with no
onnxruntime process left behind."""
from __future__ import annotations

import os
import time

import numpy as np
from onnx import TensorProto as T

from explorer.judge import NoVerdict, run_onnxruntime, shared_judge
from explorer.judge_job import JudgeJob
from tests.test_judge import _div, _endless_loop


def judge_children() -> list[int]:
    """Process ids of this process's live judge_worker children but the shared judge's (which the optimizer's
    load checks keep for the process)."""
    found = []
    shared = shared_judge().process_id
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read()
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"judge_worker" in command and int(pid) != shared:
            found.append(int(pid))
    return found


def test_the_result_arrives_when_ready_and_the_judge_is_closed():
    job = JudgeJob(lambda: run_onnxruntime(_div(T.FLOAT), {"a": np.array([3.0], np.float32),
                                                           "b": np.array([2.0], np.float32)}), "div").start()
    assert job.wait(60) and job.state == "done" and job.error is None
    assert job.result["y"].tolist() == [1.5]
    assert job.elapsed > 0 and job.judge._process is None


def test_cancel_ends_onnxruntime_at_once_and_later_calls_start_no_process():
    calls = []

    def work():
        for _ in range(2):  # a proof asks several times; after a cancel the next question is refused
            try:
                run_onnxruntime(_endless_loop(), {"x": np.ones(1, np.float32)}, timeout=60)
            except NoVerdict as exc:
                calls.append(exc.kind)
        return calls

    job = JudgeJob(work, "endless").start()
    deadline = time.monotonic() + 30
    while not judge_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert judge_children() and job.state == "running"
    job.cancel()
    assert job.state == "cancelled" and judge_children() == []
    assert job.wait(30)
    job._finished.wait(30)
    assert calls == ["cancelled", "cancelled"] and judge_children() == []
    elapsed = job.elapsed
    time.sleep(0.1)
    assert job.elapsed == elapsed  # the clock stops at the cancel


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
