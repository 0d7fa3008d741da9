"""The operator's caps on what a visitor of the app may ask for: the most memory, disk, threads, node executions,
loop iterations, upload size and model nodes, and how long a session's runs stay once it is idle. The sidebar's
limits cannot pass them, a bigger upload or model is refused, and a session idle longer loses its runs.

The operator sets them under `[caps]` in explorer's settings file (settings.py) or in the environment, which wins:

    [caps]
    memory_mb = 1024      # EXPLORER_MAX_MEMORY_MB: a run's recorded values in memory, its largest value, an input
    disk_mb = 2048        # EXPLORER_MAX_DISK_MB: what a run may write to its folder on disk
    threads = 2           # EXPLORER_MAX_THREADS: a run's BLAS threads, a sweep's worker processes
    events = 1000000      # EXPLORER_MAX_EVENTS: node executions of one run
    iterations = 100000   # EXPLORER_MAX_ITERATIONS: iterations of one loop
    upload_mb = 50        # EXPLORER_MAX_UPLOAD_MB: each uploaded file
    nodes = 200000        # EXPLORER_MAX_NODES: a model's nodes, its bodies' included
    idle_minutes = 30     # EXPLORER_IDLE_MINUTES: a session's runs are dropped after this long without use

A shared app (access.py) has every cap, SHARED_DEFAULTS for those not set; an app on this machine only those
set."""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from ..errors import ExplorerError
from ..files.settings import table
from ..limits import Limits

MB = 1 << 20
SHARED_DEFAULTS = {"memory_mb": 1024, "disk_mb": 2048, "threads": 4, "events": 1_000_000, "iterations": 100_000,
                   "upload_mb": 200, "nodes": 200_000, "idle_minutes": 30}


@dataclass(frozen=True)
class Caps:
    """The most a visitor may ask for (None: no cap). `memory_mb` caps a run's in-memory trace, its largest
    value and the size an input file may inflate to; `threads` the BLAS threads and a sweep's workers."""

    memory_mb: int | None = None
    disk_mb: int | None = None
    threads: int | None = None
    events: int | None = None
    iterations: int | None = None
    upload_mb: int | None = None
    nodes: int | None = None
    idle_minutes: float | None = None

    def limits(self, asked: Limits) -> Limits:
        """`asked` with every field the caps bound lowered to its cap."""
        def low(value: int, cap: int | None, scale: int = 1) -> int:
            return value if cap is None else min(value, cap * scale)

        return replace(asked, max_iterations=low(asked.max_iterations, self.iterations),
                       max_events=low(asked.max_events, self.events), threads=low(asked.threads, self.threads),
                       trace_budget_bytes=low(asked.trace_budget_bytes, self.memory_mb, MB),
                       max_tensor_bytes=low(asked.max_tensor_bytes, self.memory_mb, MB),
                       max_input_bytes=low(asked.max_input_bytes, self.memory_mb, MB),
                       trace_disk_bytes=low(asked.trace_disk_bytes, self.disk_mb, MB))

    def upload(self, name: str, size: int) -> None:
        """Refuses (ExplorerError) an uploaded file bigger than `upload_mb`."""
        if self.upload_mb is not None and size > self.upload_mb * MB:
            raise ExplorerError(f"{name} is {size / MB:.1f} MB, more than the {self.upload_mb} MB this app takes in "
                                "one upload (its operator's cap: upload_mb)")

    @property
    def idle_seconds(self) -> float | None:
        return None if self.idle_minutes is None else self.idle_minutes * 60


def caps_for(shared: bool, environ: Mapping[str, str] | None = None) -> Caps:
    """The operator's caps: from the environment where set, else from `[caps]` in the settings file; for a
    shared app, SHARED_DEFAULTS for the others. An ExplorerError names a cap that is not a positive number."""
    environ = os.environ if environ is None else environ
    given = table("caps", environ)
    found: dict[str, int | float | None] = {}
    for field in fields(Caps):
        variable = "EXPLORER_IDLE_MINUTES" if field.name == "idle_minutes" \
            else f"EXPLORER_MAX_{field.name.upper()}"
        text = environ.get(variable, "").strip()
        value: object = text if text else given.get(field.name, SHARED_DEFAULTS[field.name] if shared else None)
        found[field.name] = None if value is None else _positive(value, variable if text else field.name)
    return Caps(**found)  # type: ignore[arg-type]


def _positive(value: object, where: str) -> int | float:
    try:
        number = float(str(value))
    except ValueError:
        number = 0.0
    if not number > 0 or isinstance(value, bool):
        raise ExplorerError(f"the operator's cap {where} must be a positive number, not {str(value)!r}")
    return number if where.endswith(("idle_minutes", "IDLE_MINUTES")) else int(number)
