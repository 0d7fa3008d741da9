"""How big a trace is and where its values live (memory, the run folder on disk, summaries), against the limits
that decide it: the sidebar's and `explorer run`'s line."""
from __future__ import annotations

from ..limits import Limits
from ..trace.trace import Trace


def byte_text(count: int) -> str:
    """`512 MB`, `2.5 GB`, `740 kB` (powers of 1024, as the limits' fields count them)."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if count >= size:
            value = count / size
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{count} B"


def trace_size_text(trace: Trace, folder: bool = True) -> str:
    """The recorded values' bytes in memory and on disk (with the run folder, unless `folder` is False: a shared
    app names no path of the server's), and from which event they are summaries, if any."""
    parts = [f"{byte_text(trace.recorded_bytes)} in memory"]
    if trace.spilled_at is not None:
        where = trace.spill.path if trace.spill is not None and folder else None
        parts.append(f"{byte_text(trace.disk_bytes)} on disk" + (f" in {where}" if where is not None else "")
                     + f" (from event {trace.spilled_at})")
    if trace.budget_exceeded_at is not None:
        parts.append(f"summaries from event {trace.budget_exceeded_at}")
    return "trace values: " + ", ".join(parts)


def limits_text(limits: Limits) -> str:
    return (f"limits: {byte_text(limits.trace_budget_bytes)} in memory, {byte_text(limits.trace_disk_bytes)} on "
            "disk, then summaries")
