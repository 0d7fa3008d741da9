"""Background work at the lowest CPU priority (hosting/priority): the thread lowered, what it starts lowered too,
the rest of the process untouched; a lowered thread's judge starts a child of its own and leaves the spare to the
pages."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from onnx import TensorProto as T

import explorer.judge.judge
from explorer.hosting.priority import LOWEST, lower_this_thread, this_thread_lowered
from explorer.judge.judge import Judge
from tests.support.judge_models import div_model

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")


def in_a_thread(work):
    found = []
    thread = threading.Thread(target=lambda: found.append(work()))
    thread.start()
    thread.join()
    return found[0]


def test_a_lowered_thread_and_what_it_starts_run_at_the_lowest_priority_and_the_rest_does_not():
    def lowered():
        lower_this_thread()
        child = subprocess.run([sys.executable, "-c", "import os; print(os.nice(0))"], capture_output=True,
                               text=True, check=True)
        return this_thread_lowered(), int(child.stdout), in_a_thread(this_thread_lowered)

    assert in_a_thread(lowered) == (True, LOWEST, True)
    assert not this_thread_lowered() and in_a_thread(this_thread_lowered) is False
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) < LOWEST


def test_a_lowered_threads_judge_leaves_the_spare_to_the_pages():
    feeds = {"a": np.array([3.0], np.float32), "b": np.array([2.0], np.float32)}
    explorer.judge.judge.keep_spare()
    try:
        spare = explorer.judge.judge.spare_process_id()

        def background():
            lower_this_thread()
            judge = Judge()
            try:
                value = judge.run(div_model(T.FLOAT), feeds)["y"].tolist()
                return value, judge.process_id, os.getpriority(os.PRIO_PROCESS, judge.process_id)
            finally:
                judge.close()

        value, child, niceness = in_a_thread(background)
        assert value == [1.5] and child != spare and niceness == LOWEST
        assert explorer.judge.judge.spare_process_id() == spare  # still there for the pages
    finally:
        explorer.judge.judge.stop_spare()
