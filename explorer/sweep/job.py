"""A sweep run on a background thread, so that its caller (the app) never waits on it: the caller polls
`state`, `done` and `total`, reads `rows` as they come (a list that only grows), and `cancel()` ends the sweep
after the inputs already done (its cluster closed)."""
from __future__ import annotations

import threading
import time
from typing import Any

from ..errors import failure_text
from .api import Plan


class SweepJob:
    """`plan` run on a daemon thread against `scheduler` (None: a local cluster of `workers` processes)."""

    def __init__(self, plan: Plan, *, scheduler: str | None = None, workers: int | None = None) -> None:
        self.plan = plan
        self.sweep = plan.sweep(scheduler, workers)
        self.error: str | None = None
        self._finished = threading.Event()
        self._started = self._ended = 0.0
        self._thread = threading.Thread(target=self._main, name="explorer sweep", daemon=True)

    def start(self) -> SweepJob:
        self._started = time.monotonic()
        self._thread.start()
        return self

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self.sweep.rows

    @property
    def total(self) -> int:
        return self.sweep.total

    @property
    def state(self) -> str:
        """'running', 'done', 'failed' (see error) or 'cancelled' (its rows are those done before)."""
        if not self._finished.is_set():
            return "running"
        return "failed" if self.error is not None else "cancelled" if self.sweep.cancelled else "done"

    @property
    def elapsed(self) -> float:
        end = self._ended or time.monotonic()
        return max(0.0, end - self._started) if self._started else 0.0

    def wait(self, timeout: float | None = None) -> bool:
        """Waits up to `timeout` seconds for the sweep to end; True when it has."""
        return self._finished.wait(timeout)

    def cancel(self) -> None:
        self.sweep.cancel()

    def _main(self) -> None:
        try:
            for _ in self.sweep.run():
                pass
        except Exception as exc:  # noqa: BLE001 - shown as the sweep's error, whatever went wrong
            self.error = failure_text(exc)
        finally:
            self._ended = time.monotonic()
            self._finished.set()
