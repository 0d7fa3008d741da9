"""onnxruntime in a child process: outputs when it answers, a stated reason (NoVerdict) when it cannot."""
from __future__ import annotations

import importlib.util
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import explorer
import explorer.judge.judge
from explorer.compare.outputs import compare_with_onnxruntime
from explorer.judge.judge import Judge, NoVerdict, run_onnxruntime
from explorer.optimizer.verify import compare_models
from tests.support.judge_models import div_model, endless_loop

OPSET = [h.make_opsetid("", 17)]


def test_outputs_match_a_direct_computation():
    got = run_onnxruntime(div_model(T.FLOAT), {"a": np.array([3.0], np.float32), "b": np.array([2.0], np.float32)})
    assert got["y"].tolist() == [1.5]


def test_a_kept_spare_child_is_the_next_judges_and_another_is_started_for_the_one_after():
    feeds = {"a": np.array([3.0], np.float32), "b": np.array([2.0], np.float32)}
    explorer.judge.judge.keep_spare()
    try:
        spare = explorer.judge.judge.spare_process_id()
        assert spare is not None
        judge = Judge()
        assert judge.run(div_model(T.FLOAT), feeds)["y"].tolist() == [1.5]
        assert judge.process_id == spare  # the child started ahead of need answered
        after = explorer.judge.judge.spare_process_id()
        assert after is not None and after != spare
        judge.close()
        assert explorer.judge.judge.spare_process_id() == after  # a judge's close leaves the next one's child alone
        os.kill(after, signal.SIGKILL)  # a spare that died waiting is not handed out
        os.waitpid(after, 0)
        other = Judge()
        assert other.run(div_model(T.FLOAT), feeds)["y"].tolist() == [1.5]
        assert other.process_id not in (None, spare, after)
        other.close()
    finally:
        explorer.judge.judge.stop_spare()
    assert explorer.judge.judge.spare_process_id() is None


class Clock:
    """A monotonic clock that a spy on select() moves by each wait it is asked for (the wait itself not taken)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def select(self, readers, writers, errors, timeout):
        ready = select.select(readers, writers, errors, 0)
        if not ready[0]:
            self.waits.append(timeout)
            self.now += timeout
        return ready


def test_an_endless_loop_is_stopped_at_the_wall_clock_limit_and_the_next_call_works(monkeypatch):
    judge = Judge()
    judge.run(div_model(T.FLOAT), {"a": np.ones(1, np.float32), "b": np.ones(1, np.float32)})  # its child is up
    child = judge._process
    clock = Clock()
    monkeypatch.setattr(explorer.judge.judge, "time", clock)
    monkeypatch.setattr(explorer.judge.judge, "select", clock)
    with pytest.raises(NoVerdict, match="within 1 s") as info:
        judge.run(endless_loop(), {"x": np.ones(1, np.float32)}, timeout=1)
    monkeypatch.undo()
    assert info.value.kind == "timeout"
    assert sum(clock.waits) == 1.0 and all(wait <= 0.5 for wait in clock.waits)  # waited up to the limit, no more
    assert child.returncode == -signal.SIGKILL and judge._process is None  # the child was stopped
    assert judge.run(div_model(T.INT32), {"a": np.array([7], np.int32), "b": np.array([2], np.int32)})["y"] == [3]
    judge.close()


def test_a_crash_of_onnxruntime_is_named_by_its_signal():
    # INT_MIN / -1 traps in onnxruntime's integer Div (SIGFPE on x86-64)
    feeds = {"a": np.array([np.iinfo(np.int32).min], np.int32), "b": np.array([-1], np.int32)}
    with pytest.raises(NoVerdict) as info:
        run_onnxruntime(div_model(T.INT32), feeds)
    assert info.value.kind == "crash" and "SIG" in str(info.value)


def test_a_model_onnxruntime_rejects_is_refused_with_its_message():
    with pytest.raises(NoVerdict, match="onnxruntime refused: .*(?i:protobuf)") as info:
        run_onnxruntime(b"not a model", {})
    assert info.value.kind == "refused"


def test_the_memory_cap_stops_a_huge_allocation():
    graph = h.make_graph([h.make_node("ConstantOfShape", ["s"], ["y"])], "big",
                         [h.make_tensor_value_info("s", T.INT64, [2])], [h.make_tensor_value_info("y", T.FLOAT, None)])
    judge = Judge(memory_bytes=256 << 20)
    with pytest.raises(NoVerdict) as info:
        judge.run(h.make_model(graph, opset_imports=OPSET), {"s": np.array([100_000, 100_000])})
    assert info.value.kind == "memory"
    judge.close()


def test_cancel_from_another_thread_ends_the_call():
    judge = Judge()
    receive = judge._receive

    def cancelled_meanwhile(*args):  # the request is with onnxruntime: another thread cancels it
        canceller = threading.Thread(target=judge.cancel)
        canceller.start()
        canceller.join()
        return receive(*args)

    judge._receive = cancelled_meanwhile
    with pytest.raises(NoVerdict) as info:
        judge.run(endless_loop(), {"x": np.ones(1, np.float32)}, timeout=30)
    assert info.value.kind == "cancelled" and judge._process is None


def test_check_report_states_the_timeout():
    model = explorer.load(endless_loop())
    report = compare_with_onnxruntime(model, {"x": np.ones(1, np.float32)}, {}, timeout=0.5)
    assert not report.ok and report.lines() == ["onnxruntime: onnxruntime did not finish within 0.5 s (stopped)"]


def test_the_proof_skips_onnxruntime_when_explorer_hit_a_limit():
    verdict = compare_models(endless_loop(), endless_loop(), {"x": np.ones(1, np.float32)})
    ort = next(r for r in verdict.reports if r.judge == "onnxruntime")
    assert verdict.status == "inconclusive"
    assert ort.unavailable is not None and ort.unavailable.startswith("not run: explorer's own run stopped at a limit")


def test_the_childs_first_session_model_is_the_one_node_model_it_says():
    """The model a child runs once while it waits for its first request (judge_worker.FIRST_SESSION_MODEL) is
    written as bytes, the worker never importing onnx: it must stay a valid model onnxruntime runs."""
    spec = importlib.util.spec_from_file_location("judge_worker_module", explorer.judge.judge._WORKER)
    assert spec is not None and spec.loader is not None
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    model = onnx.load_from_string(worker.FIRST_SESSION_MODEL)
    onnx.checker.check_model(model, full_check=True)
    assert [node.op_type for node in model.graph.node] == ["Relu"]
    import onnxruntime as ort

    [y] = worker._session(ort, worker.FIRST_SESSION_MODEL).run(None, {"x": np.array([-2.0], np.float32)})
    assert y.tolist() == [0.0]


def test_keeping_a_spare_starts_the_shared_judges_child_too():
    """The optimizer's load check asks the shared judge: had it to take the spare on that first call, the proof
    the app asks right after it would find no spare ready."""
    explorer.judge.judge.stop_spare()
    shared = explorer.judge.judge.shared_judge()
    shared.close()
    assert shared.process_id is None
    explorer.judge.judge.keep_spare()
    try:
        spare = explorer.judge.judge.spare_process_id()
        assert shared.process_id is not None and spare is not None and shared.process_id != spare
    finally:
        explorer.judge.judge.stop_spare()


CALLER = """
import sys
import numpy as np
from explorer.judge.judge import Judge
from tests.support.judge_models import div_model, endless_loop
from onnx import TensorProto
judge = Judge()
judge.run(div_model(TensorProto.FLOAT), {"a": np.ones(1, np.float32), "b": np.ones(1, np.float32)})
print(judge.process_id, flush=True)
judge.run(endless_loop(), {"x": np.ones(1, np.float32)}, timeout=600)
"""


def _ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in "ZX"  # a zombie has ended; its adopter reaps it
    except OSError:
        return True


def test_a_child_ends_when_its_caller_is_killed_in_the_middle_of_a_run():
    """A caller killed outright (SIGKILL: no atexit, no judge closed) leaves a child running an endless loop; the
    child sees it has been orphaned and ends within a few seconds, instead of holding a core for good."""
    root = Path(__file__).resolve().parents[2]
    caller = subprocess.Popen([sys.executable, "-c", CALLER], cwd=root, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(root)})
    assert caller.stdout is not None
    child = int(caller.stdout.readline())
    time.sleep(1.0)  # the endless loop under way in the child
    assert not _ended(child)
    caller.kill()
    caller.wait()
    deadline = time.monotonic() + 10
    while not _ended(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    ended = _ended(child)
    if not ended:
        os.kill(child, signal.SIGKILL)  # not left running for the rest of the suite
    assert ended
