"""What a run records once `Limits.trace_budget_bytes` of values are held in memory: the values each event
produces (its outputs, GRU/LSTM/RNN gates) are written to the run's folder on disk (spill.py) and recorded, and
read on by the nodes after it, as views of the files; its inputs stay references to what was recorded before.
Past `Limits.trace_disk_bytes` on disk, values are kept as summaries (shape, dtype, min, max, mean, NaN/Inf
counts), computed chunk by chunk; so are strings and long sequences (spill.py) on the way."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..trace.spill import RunFolder, disk_size, removed_with, spilled
from ..trace.values import SequenceSummary, ValueSummary, summarize

SUMMARIES = (ValueSummary, SequenceSummary)

if TYPE_CHECKING:
    from ..limits import Limits
    from ..trace.trace import Event, Trace


class PastBudget:
    """Records the events of one run past the in-memory budget: on disk while the disk limit allows, then as
    summaries."""

    def __init__(self, trace: Trace, limits: Limits) -> None:
        self.trace = trace
        self.folder: RunFolder | None = None
        self._memory = limits.trace_budget_bytes
        self._disk = limits.trace_disk_bytes
        self._full = self._disk <= 0

    def record(self, event: Event, size: int, budget: int, frame: dict[str, Any]) -> Event:
        """The event (`size` bytes of values, `budget` what is left of the in-memory budget after them) with its
        values moved to disk, where the frame reads the moved outputs from, else (past the disk limit) to
        summaries. The trace's bytes in memory stop at the event before the first such one."""
        trace = self.trace
        if trace.spilled_at is None and trace.budget_exceeded_at is None:
            trace.recorded_bytes = self._memory - (budget + size)
        if not self._full and self._spill(event, frame):
            return event
        self._full = True
        if trace.budget_exceeded_at is None:
            trace.budget_exceeded_at = event.index
        event.input_values = tuple([summarize(v) for v in event.input_values])
        event.output_values = tuple([summarize(v) for v in event.output_values])
        gates = event.info.get("gates")
        if gates is not None:
            event.info["gates"] = {k: summarize(v) for k, v in gates.items()}
        event.summarized = True
        return event

    def values(self, values: dict[str, Any]) -> dict[str, Any]:
        """An iteration's inputs or outputs: references to recorded values while spilling, else summaries."""
        return {name: summarize(value) for name, value in values.items()} if self._full else values

    def _spill(self, event: Event, frame: dict[str, Any]) -> bool:
        """Moves the event's outputs and gates to disk; False when they do not fit (or the disk is full)."""
        folder = self._folder()
        gates = event.info.get("gates")
        size = sum(map(disk_size, event.output_values)) + (sum(map(disk_size, gates.values())) if gates else 0)
        if folder.bytes + size > folder.limit:
            return False
        done: dict[tuple[Any, ...], Any] = {}  # the event's arrays written so far
        try:
            values = tuple([spilled(folder, value, done) for value in event.output_values])
            if gates is not None:
                gates = {name: spilled(folder, value, done) for name, value in gates.items()}
        except OSError:  # the disk filled up before the limit
            return False
        finally:
            self.trace.disk_bytes = folder.bytes
        for name, value in zip(event.site.outputs, values):
            if not isinstance(value, SUMMARIES):  # the nodes after it read it from disk
                frame[name] = value
        event.output_values = values
        if gates is not None:
            event.info["gates"] = gates
        trace = self.trace
        if trace.spilled_at is None:
            trace.spilled_at = event.index
        if any(isinstance(value, SUMMARIES) for value in values):
            event.summarized = True
            if trace.budget_exceeded_at is None:
                trace.budget_exceeded_at = event.index
        return True

    def _folder(self) -> RunFolder:
        if self.folder is None:
            self.folder = self.trace.spill = RunFolder(self._disk)
            removed_with(self.trace, self.folder)
        return self.folder
