"""The driver's work list: after a level's first round, which nodes a match may have changed for since the last
round (the neighbourhood of the edits), so a round visits those instead of every node."""
from __future__ import annotations

from .ir import Node
from .state import GraphState

NEIGHBOURHOOD = 2  # producer -> reader steps from an edit within which nodes are matched again
WIDE_EDITS = 8  # edits touching more than 1/WIDE_EDITS of the nodes make the next round visit every node


def near_edits(state: GraphState) -> set[Node]:
    """The live nodes a match may have changed for since the driver last asked: within NEIGHBOURHOOD producer ->
    reader steps of a node added or removed, or of a value whose facts the propagation changed."""
    seeds = set(state.edited)
    wide = len(state.live) // WIDE_EDITS  # more seeds than this: every node
    if len(seeds) <= wide:
        for name in state.changed_facts:
            value = state.values.get(name)
            if value is not None:
                seeds.update(value.users())
                if value.producer is not None:
                    seeds.add(value.producer)
    state.edited.clear()
    state.changed_facts.clear()
    if len(seeds) > wide:
        return set(state.live)  # edits everywhere: every node, without walking their neighbourhoods
    found = set(seeds)
    frontier = seeds
    for _ in range(NEIGHBOURHOOD):
        reached: set[Node] = set()
        for node in frontier:
            for value in (*node.inputs, *node.outputs, *node.captures):
                if value is not None:
                    reached.update(value.readers)
                    reached.update(value.capturers)
                    if value.producer is not None:
                        reached.add(value.producer)
        frontier = reached - found
        found |= frontier
    return {node for node in found if state.is_alive(node)}
