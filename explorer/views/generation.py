"""What the Compare page shows of two generations (runs of `explorer generate`'s loop model): the tokens each
side chose at every step, the first step where they part, and the error of every cache at every step."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..generation.wrap import LOOP, TOKEN
from ..model.model import Model
from ..trace.trace import Trace
from .charts import Chart, time_heatmap_chart

PARTS = "◀ first difference"


def is_generation(model: Model) -> bool:
    """Whether `model` is a generation loop model: a Loop `generate` whose body chooses `gen.token`."""
    try:
        node = model.node(LOOP)
    except KeyError:
        return False
    body = model.index.graphs.get(f"{LOOP}/body")
    return node.op_type == "Loop" and body is not None and TOKEN in [o.name for o in body.proto.output]


def step_tokens(trace: Trace) -> list[list[int]]:
    """The tokens chosen at every step, one list per step (one token per batch row)."""
    return [np.asarray(record.outputs[TOKEN]).reshape(-1).tolist() for record in trace.iterations(LOOP)
            if isinstance(record.outputs.get(TOKEN), np.ndarray)]


def token_rows(ours: list[list[int]], theirs: list[list[int]]) -> tuple[list[dict[str, Any]], int | None]:
    """One row per step (A's tokens, B's, whether they agree, the first difference marked) and the first step
    whose tokens differ (a side that stopped earlier differs where it has none), or None."""
    rows, first = [], None
    for step in range(max(len(ours), len(theirs))):
        a = ours[step] if step < len(ours) else None
        b = theirs[step] if step < len(theirs) else None
        same = a == b
        if not same and first is None:
            first = step
        rows.append({"step": step, "A": "" if a is None else ", ".join(map(str, a)),
                     "B": "" if b is None else ", ".join(map(str, b)), "same": same,
                     "": PARTS if step == first else ""})
    return rows, first


def cache_errors(ours: Trace, theirs: Trace) -> tuple[np.ndarray, list[str]]:
    """The largest |A − B| of every cache (`present*`; with beams, `beam.present*` as reordered for the next step;
    by layer then name) at every step both sides ran:
    [steps, caches], NaN where their shapes differ; and the caches' names."""
    a_steps, b_steps = ours.iterations(LOOP), theirs.iterations(LOOP)
    if not a_steps or not b_steps:
        return np.zeros((0, 0)), []
    def layer(name: str) -> int:
        plain = name.removeprefix("beam.")
        return int("".join(c for c in plain.split(".")[1] if c.isdigit()) or -1) if "." in plain else -1

    names = sorted((n for n in a_steps[0].outputs if n.removeprefix("beam.").startswith("present")
                    and n in b_steps[0].outputs), key=lambda n: (layer(n), n))
    errors = np.full((min(len(a_steps), len(b_steps)), len(names)), np.nan)
    for t, (a, b) in enumerate(zip(a_steps, b_steps)):
        for k, name in enumerate(names):
            x, y = a.outputs.get(name), b.outputs.get(name)
            if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.shape == y.shape and x.size:
                errors[t, k] = float(np.abs(x.astype(np.float64) - y).max())
    return errors, names


def cache_error_chart(ours: Trace, theirs: Trace) -> Chart | None:
    """The per-step × per-cache heatmap of `cache_errors` (steps across, caches down by layer), or None."""
    errors, names = cache_errors(ours, theirs)
    if not names:
        return None
    return time_heatmap_chart(errors, "Cache error |A − B| per step and layer", xtitle="step", ytitle="cache",
                              rows=names)
