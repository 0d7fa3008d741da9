"""Work that asks onnxruntime (an equivalence proof, a comparison, a check of outputs) run on a background
thread with a judge of its own, so that its caller never blocks on it: the caller polls `state` and `elapsed`,
reads `result` (or `error`) when done, and `cancel()` ends onnxruntime's child process at once. explorer's own
runs inside the work cannot be interrupted: after a cancel they finish in the background, their result unused,
and any later question to onnxruntime is answered NoVerdict('cancelled') without starting a process."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from ..errors import failure_text
from .judge import DEFAULT_TIMEOUT_S, Judge, Keep, NoVerdict, using_judge

T = TypeVar("T")


class JudgeJob(Generic[T]):
    """`work()` run on a daemon thread; its onnxruntime calls go to this job's own Judge (closed at the end)."""

    def __init__(self, work: Callable[[], T], label: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.label = label
        self.judge = Judge(timeout=timeout)
        self.result: T | None = None
        self.error: str | None = None
        self._work: Callable[[], T] | None = work
        self._cancelled = threading.Event()
        self._finished = threading.Event()
        self._started = self._ended = 0.0
        self._thread = threading.Thread(target=self._main, name=f"judge job: {label}", daemon=True)

    def start(self) -> JudgeJob[T]:
        self._started = time.monotonic()
        self._thread.start()
        return self

    @property
    def state(self) -> str:
        """'running', 'done' (see result), 'failed' (see error) or 'cancelled'."""
        if self._cancelled.is_set():
            return "cancelled"
        if not self._finished.is_set():
            return "running"
        return "failed" if self.error is not None else "done"

    @property
    def elapsed(self) -> float:
        """Seconds since the start, until the end (or the cancel)."""
        end = self._ended if self._ended else time.monotonic()
        return max(0.0, end - self._started) if self._started else 0.0

    def wait(self, timeout: float | None = None) -> bool:
        """Waits up to `timeout` seconds for the work to end; True when it has (or was cancelled)."""
        self._finished.wait(timeout)
        return self.state != "running"

    def cancel(self) -> None:
        """Ends onnxruntime's child process now; the job is 'cancelled' (unless it had already ended)."""
        if self._finished.is_set():
            return
        self._cancelled.set()
        self._ended = time.monotonic()
        self.judge.shutdown()

    def run(self, model: Any, feeds: dict[str, Any], outputs: Sequence[str] | None = None, *,
            timeout: float | None = None, keep: Keep | None = None) -> dict[str, Any]:
        """The judge the work's onnxruntime calls reach (see judge.using_judge)."""
        if self._cancelled.is_set():
            raise NoVerdict("cancelled", "onnxruntime was stopped on request")
        return self.judge.run(model, feeds, outputs, timeout=timeout, keep=keep)

    def warm(self) -> None:
        """The judge the work's onnxruntime calls reach, started ahead of them."""
        if not self._cancelled.is_set():
            self.judge.warm()

    def load(self, model: Any, *, timeout: float | None = None) -> None:
        """The judge the work's onnxruntime load checks reach (see judge.using_judge)."""
        if self._cancelled.is_set():
            raise NoVerdict("cancelled", "onnxruntime was stopped on request")
        self.judge.load(model, timeout=timeout)

    def _main(self) -> None:
        # what the work reads (a model, a run's trace) is not held past it: a finished job is kept for its answer
        # only (ui/jobs.py keeps some for every session)
        work, self._work = self._work, None
        assert work is not None  # a job starts once
        try:
            with using_judge(self):
                self.result = work()
        except Exception as exc:  # noqa: BLE001 - shown as the job's error, whatever went wrong
            self.error = failure_text(exc)
        finally:
            del work
            self.judge.close()
            if not self._ended:
                self._ended = time.monotonic()
            self._finished.set()
