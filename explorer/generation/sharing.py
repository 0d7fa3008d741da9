"""The caches of a generation loop's steps, as trace/shared_caches.py shares them: each cache's present over the
steps and the past the next step reads (with beams: the present reordered by the beams chosen, `gen.parents`)."""
from __future__ import annotations

from typing import Any

from ..trace.shared_caches import CacheSteps
from ..trace.trace import Iteration, Trace
from .beams import PARENTS
from .decoder import CachePair
from .parts import LOOP


def step_chains(records: list[Iteration], caches: list[CachePair]) -> list[CacheSteps]:
    """Greedy and sampling: each cache's `present.*` over the steps, the next step's past itself."""
    return [CacheSteps(presents, [None] * len(presents), [None] * len(presents))
            for pair in caches
            for presents in [[record.outputs.get(pair.present) for record in records]]]


def beam_chains(trace: Trace, records: list[Iteration], caches: list[CachePair]) -> list[CacheSteps]:
    """Beam search: each cache's present as the decoder returned it at every step (found in the events of the
    loop's body, `generate/body/...`, one iteration index), the beams each step continues and the past the next
    step reads (the loop's carried `beam.<present>`)."""
    presents = {pair.present: pair for pair in caches if not pair.static}
    returned: dict[tuple[int, str], Any] = {}
    for event in trace.events:
        if len(event.iteration) == 1 and event.node.startswith(f"{LOOP}/body/"):
            for name, value in zip(event.site.outputs, event.output_values):
                if name in presents:
                    returned[(event.iteration[0], name)] = value
    parents = [record.outputs.get(PARENTS) for record in records]
    return [CacheSteps([returned.get((step, present)) for step in range(len(records))], parents,
                       [dict.get(record.outputs, f"beam.{present}") for record in records])
            for present in presents]
