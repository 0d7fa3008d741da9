"""Running a sweep's items on Dask: a local cluster of worker processes started for the sweep (the default), or
an existing cluster reached at its scheduler's address. Only items go out and rows come back: workers make or
read each input's arrays themselves. A few more items than the cluster has worker threads are in flight: the
scheduler queues them and gives each worker one at a time (worker-saturation 1), so a worker that dies takes
only the item it was running with it. The scheduler gives that item to another worker, and an item that killed
its worker twice comes back as an "error" row naming it (the local cluster allows one retry; an existing cluster
applies its own `distributed.scheduler.allowed-failures` and `worker-saturation`)."""
from __future__ import annotations

import itertools
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..errors import SweepError, failure_text
from .plan import Item
from .rows import failed_row
from .task import Job, run_item

CONNECT_S = 10.0  # seconds to reach an existing scheduler
POLL_S = 0.5  # seconds between looks at the cancel flag and the workers while nothing finishes
NO_WORKERS_S = 120.0  # seconds without any worker before the sweep gives up
LOCAL_CONFIG = {"distributed.scheduler.allowed-failures": 1,  # an item is retried once after killing its worker
                "distributed.scheduler.worker-saturation": 1.0}  # and never waits queued behind another


def default_workers() -> int:
    """Worker processes of the local cluster: one per core this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def local_cluster(workers: int) -> Any:
    """A Dask LocalCluster of `workers` single-threaded processes on 127.0.0.1, as a sweep starts its own."""
    import dask
    from distributed import LocalCluster

    with dask.config.set(LOCAL_CONFIG):
        try:
            return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False},
                                silence_logs=logging.CRITICAL)
        except Exception as exc:  # noqa: BLE001 - e.g. a script without `if __name__ == "__main__":`
            raise SweepError(f"could not start a local Dask cluster: {failure_text(exc)} (a script that sweeps "
                             "must guard its code with `if __name__ == \"__main__\":`)") from None


class Sweep:
    """Items of one Job run on a cluster. `run()` yields each row as it completes; `cancel()` (from any thread)
    ends the sweep after the rows already done. `rows` and `total` are its progress."""

    def __init__(self, job: Job, items: Sequence[Item], *, scheduler: str | None = None, workers: int | None = None,
                 model_data: bytes | None = None, other_data: bytes | None = None) -> None:
        if workers is not None and workers < 1:
            raise SweepError(f"a sweep needs at least one worker, got {workers}")
        self.job, self.items = job, list(items)
        self.scheduler, self.workers = scheduler, workers
        self._data = (model_data, other_data)
        self.rows: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self._cancelled = threading.Event()

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()

    def run(self) -> Iterator[dict[str, Any]]:
        """Each item's row as it completes (in completion order); the cluster started for the sweep is closed at
        the end, and items still running are cancelled when the sweep stops early (cancel, Ctrl-C)."""
        client, cluster = self._connect()
        try:
            yield from self._rows(client)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

    def _connect(self) -> tuple[Any, Any]:
        from distributed import Client

        if self.scheduler:
            try:
                client = Client(self.scheduler, timeout=CONNECT_S, set_as_default=False)
            except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ValueError for a bad address
                raise SweepError(f"cannot reach the Dask scheduler at {self.scheduler!r}: "
                                 f"{failure_text(exc) if not str(exc) else exc}") from None
            allowed = client.run_on_scheduler(_allowed_failures)
            if allowed != 1:
                self.notes.append(f"the scheduler retries an item until {allowed + 1} workers died running it "
                                  "(distributed.scheduler.allowed-failures)")
            return client, None
        cluster = local_cluster(self.workers or default_workers())
        return Client(cluster, set_as_default=False), cluster

    def _rows(self, client: Any) -> Iterator[dict[str, Any]]:
        from distributed import KilledWorker

        data = [None if d is None else client.scatter(d, broadcast=True, hash=False) for d in self._data]
        token = uuid.uuid4().hex[:12]
        waiting = iter(self.items)
        running: dict[Any, Item] = {}
        finished: queue.Queue[Any] = queue.Queue()  # futures as they complete (their done callbacks put them)
        idle_since: float | None = None
        try:
            while True:
                batch = list(itertools.islice(waiting, max(0, _capacity(client, self.total) - len(running))))
                if batch:  # in one message: the scheduler sees the whole group at once (see _capacity)
                    futures = client.map(run_item, batch, job=self.job, model_data=data[0], other_data=data[1],
                                         key=[f"explorer-sweep-{token}-{item.index}" for item in batch], pure=False)
                    for future, item in zip(futures, batch):
                        running[future] = item
                        future.add_done_callback(finished.put)
                if not running or self._cancelled.is_set():
                    return
                try:
                    future = finished.get(timeout=POLL_S)
                except queue.Empty:
                    idle_since = self._check_workers(client, idle_since)
                    continue
                idle_since = None
                item = running.pop(future)
                try:
                    row = future.result()
                except KilledWorker as exc:
                    row = failed_row(item, item.dims_dict, f"input {item.label!r} killed its worker "
                                                           f"{exc.allowed_failures + 1} times (the worker process "
                                                           "died while running it)")
                except Exception as exc:  # noqa: BLE001 - cancelled, or a worker-side failure outside run_item
                    row = failed_row(item, item.dims_dict, f"input {item.label!r}: {failure_text(exc)}")
                future.release()
                self.rows.append(row)
                yield row
        finally:
            if running:
                client.cancel(list(running))

    def _check_workers(self, client: Any, idle_since: float | None) -> float | None:
        """Gives up (SweepError) once the cluster has had no worker for NO_WORKERS_S; returns when it had none
        first (None while it has some)."""
        if client.nthreads():
            return None
        now = time.monotonic()
        if idle_since is not None and now - idle_since > NO_WORKERS_S:
            raise SweepError(f"the Dask cluster has had no worker for {NO_WORKERS_S:g} s; "
                             f"{self.total - len(self.rows)} input(s) not done")
        return idle_since if idle_since is not None else now


def _capacity(client: Any, total: int) -> int:
    """Items in flight: two per worker thread the cluster has now, and one more. Past twice its threads the
    scheduler holds such a group of tasks in its own queue (they are "root-ish") and sends a worker the next one
    as soon as a thread frees: workers never wait on the client, and a worker holds only what it runs. A sweep of
    no more items than that would be handed out at once, two to a worker, and a worker an item kills would take
    the other with it: such a sweep has one item per thread in flight."""
    threads = sum(client.nthreads().values())
    return 2 * threads + 1 if total > 2 * threads else max(threads, 1)


def _allowed_failures(dask_scheduler: Any) -> int:
    return int(dask_scheduler.allowed_failures)


def mapped(function: Callable[[Any], Any], items: Sequence[Any], *, scheduler: str | None = None,
           workers: int | None = None) -> Iterator[Any]:
    """`function(item)` of every item on Dask, as each completes: on a local cluster of `workers` processes
    started for the call (default one per core), or on the cluster of `scheduler`. `function` must be importable
    by the workers and turn its own failures into results (a failure it raises ends the call)."""
    from distributed import Client

    if workers is not None and workers < 1:
        raise SweepError(f"a sweep needs at least one worker, got {workers}")
    cluster = None if scheduler else local_cluster(min(workers or default_workers(), max(len(items), 1)))
    try:
        client = Client(scheduler or cluster, timeout=CONNECT_S, set_as_default=False)
    except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ValueError for a bad address
        if cluster is not None:
            cluster.close()
        raise SweepError(f"cannot reach the Dask scheduler at {scheduler!r}: {failure_text(exc)}") from None
    try:
        token = uuid.uuid4().hex[:12]
        futures = client.map(function, list(items), key=[f"explorer-map-{token}-{k}" for k in range(len(items))],
                             pure=False)
        finished: queue.Queue[Any] = queue.Queue()  # futures as they complete (their done callbacks put them)
        for future in futures:
            future.add_done_callback(finished.put)
        for _ in futures:
            future = finished.get()
            yield future.result()
            future.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
