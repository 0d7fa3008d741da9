"""Bounds that keep a run from taking a laptop down."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """max_iterations: per Loop/Scan/SequenceMap execution; max_tensor_bytes: any one value a node produces
    (checked before allocation where the size is known up front); trace_budget_bytes: recorded values beyond
    this are kept as summaries (shape, dtype, min, max, mean, NaN/Inf counts); max_input_bytes: what an
    external input (an .npz or .pb of feeds, a trace file) may inflate to, checked before it is read;
    max_events: node executions in one run (each event costs about a kilobyte of records even when its values
    are summaries, so loops nested in loops, each within max_iterations, stay bounded too)."""

    max_iterations: int = 100_000
    max_tensor_bytes: int = 1 << 30
    trace_budget_bytes: int = 512 << 20
    max_input_bytes: int = 2 << 30
    max_events: int = 1_000_000

    def __post_init__(self) -> None:
        for name in ("max_iterations", "max_tensor_bytes", "trace_budget_bytes", "max_input_bytes", "max_events"):
            if getattr(self, name) < 0:
                raise ValueError(f"Limits.{name} must be >= 0")
