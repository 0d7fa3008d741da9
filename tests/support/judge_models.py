"""Models the tests of onnxruntime's child process ask it about: a Loop that never ends (its condition always
true) and a Div of two one-element tensors of any type; and the judge child processes a test left alive."""
from __future__ import annotations

import os
import time

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from explorer.judge.judge import Judge, shared_judge, spare_process_id

OPSET = [h.make_opsetid("", 17)]


def endless_loop() -> onnx.ModelProto:
    """A Loop with no trip count whose body passes its condition (true) and x through."""
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["co"]), h.make_node("Identity", ["x"], ["xo"])], "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
         h.make_tensor_value_info("x", T.FLOAT, [1])],
        [h.make_tensor_value_info("co", T.BOOL, []), h.make_tensor_value_info("xo", T.FLOAT, [1])])
    graph = h.make_graph([h.make_node("Loop", ["", "c0", "x"], ["y"], body=body)], "endless",
                         [h.make_tensor_value_info("x", T.FLOAT, [1])], [h.make_tensor_value_info("y", T.FLOAT, [1])],
                         [h.make_tensor("c0", T.BOOL, [], [True])])
    return h.make_model(graph, opset_imports=OPSET)


def div_model(dtype: int) -> onnx.ModelProto:
    """y = a / b, all three of `dtype` and shape [1]."""
    graph = h.make_graph([h.make_node("Div", ["a", "b"], ["y"])], "div",
                         [h.make_tensor_value_info("a", dtype, [1]), h.make_tensor_value_info("b", dtype, [1])],
                         [h.make_tensor_value_info("y", dtype, [1])])
    return h.make_model(graph, opset_imports=OPSET)


def judge_child(judge: Judge, timeout: float) -> int | None:
    """The process id of `judge`'s child once it has one (a job's thread may start it a while after the page that
    started the job has run, on a busy machine), or None after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while judge.process_id is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return judge.process_id


def judge_children() -> list[int]:
    """Process ids of this process's live judge_worker children but the shared judge's (which the optimizer's
    load checks keep for the process), the spare waiting for the next job (explorer.judge.keep_spare) and those of
    work made ahead in the background. A child seen while it was being started as the spare or the shared judge's
    is looked at again a moment later, once it is known as such."""
    found = _unkept_children()
    for _ in range(5):
        if not found:
            break
        time.sleep(0.1)
        found = [pid for pid in _unkept_children() if pid in found]
    return found


def _background(pid: int) -> bool:
    """Whether a child runs work made ahead (hosting/priority: lowered below this process), an earlier test's
    optimization proved ahead that may still be finishing."""
    try:
        return os.getpriority(os.PRIO_PROCESS, pid) > os.getpriority(os.PRIO_PROCESS, os.getpid())
    except OSError:
        return False


def _unkept_children() -> list[int]:
    found = []
    kept = (shared_judge().process_id, spare_process_id())
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read()
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"judge_worker" in command and int(pid) not in kept \
                and not _background(int(pid)):
            found.append(int(pid))
    return found
