"""What the Compare page shows of two generations (runs of `explorer generate`'s loop model): the tokens each
side chose at every step, and the first step where they part."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..generation.wrap import LOOP, TOKEN
from ..model import Model
from ..trace import Trace

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
