"""A sweep on an existing Dask cluster: `dask scheduler` and two `dask worker` processes on 127.0.0.1, one of
them killed while it runs an input; every input still gets its row (the scheduler gives the lost input to the
other worker), each the row explorer.compare gives for that input."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import explorer
from tests.support.sweep_models import PART_AT, planted_pair

distributed = pytest.importorskip("distributed")
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster():
    """(scheduler address, {worker pid: its process}) of a scheduler and two workers started here."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1"}
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env, "cwd": ROOT}
    started = [subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port",
                                 str(port), "--no-dashboard"], **quiet)]
    try:
        for _ in range(2):
            started.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", address, "--nthreads", "1",
                                             "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"], **quiet))
        with distributed.Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=120)
        yield address, {p.pid: p for p in started[1:]}
    finally:
        for process in started:
            process.kill()
            process.wait()


def test_a_worker_killed_mid_sweep_loses_no_input(cluster, tmp_path):
    address, workers = cluster
    a, b = planted_pair(tmp_path)
    killed: list[int] = []
    client = distributed.Client(address, set_as_default=False)

    def kill_a_busy_worker(row: dict) -> None:
        if killed:
            return
        pids = client.run(os.getpid)
        busy = [address for address, keys in client.processing().items() if keys]
        pid = next((pids[w] for w in busy if pids.get(w) in workers), None)  # started here, running an input
        if pid is None:
            return  # both idle between two inputs: the next row tries again
        os.kill(pid, signal.SIGKILL)
        workers[pid].wait()
        killed.append(pid)

    lengths = [PART_AT - 1, PART_AT + 1, 10, 15, 20, 25]
    try:
        result = explorer.sweep(a, b, {"T": lengths}, seeds=[0, 1], scheduler=address, on_row=kill_a_busy_worker)
    finally:
        client.close()
    assert killed and sorted(r["index"] for r in result.rows) == list(range(12))
    model_a, model_b = explorer.load(a), explorer.load(b)
    for row in result.rows:
        assert row["status"] == "ok", row["message"]
        judge = explorer.compare(model_a, model_b, model_a.example_inputs(seed=row["seed"], dims=row["dims"]))
        assert row["differs"] is judge.differs and row["max_abs"] == max(d.max_abs for d in judge.outputs)
