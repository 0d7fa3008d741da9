"""A module called many times (a cell once per step, unrolled by the exporter) whose one call departs on its own:
its nodes are held against the same nodes of its other calls, and a weight it reads that differs from the one
every other call reads at that place is the cause (the fix: read the other calls' weight)."""
from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from ..model.model import Model
from .align import Point
from .report import Finding
from .scopes import Scopes


def odd_weight(model: Model, scopes: Scopes, point: Point) -> Finding | None:
    """The first weight call `point.call` reads where all the module's other calls (of the same nodes) read
    another, as a finding with its fix; None when there is none."""
    calls = scopes.calls(point.module)
    mine = calls.get(point.call)
    others = [nodes for k, nodes in calls.items() if k != point.call and len(nodes) == len(mine or [])]
    if not mine or not others:
        return None
    stored = {t.name: t for t in model.graph.initializer}
    for k, node in enumerate(mine):
        same = [nodes[k] for nodes in others if nodes[k].proto.op_type == node.proto.op_type]
        if len(same) != len(others):
            continue
        for position, name in enumerate(node.proto.input):
            theirs = {ref.proto.input[position] if position < len(ref.proto.input) else "" for ref in same}
            if len(theirs) != 1 or name in theirs or name not in stored:
                continue
            other = theirs.pop()
            if other not in stored:
                continue
            a, b = numpy_helper.to_array(stored[name]), numpy_helper.to_array(stored[other])
            if a.shape != b.shape:
                continue
            differs = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0))
            return Finding(point.module, node.path,
                           f"{node.proto.op_type} {node.path!r} in call {point.call} of {point.module!r} reads "
                           f"{name!r} where its {len(others)} other calls read {other!r} (they differ by up to "
                           f"{differs:.3g})", f"read {other!r} as the other calls do", point=point.label,
                           rewire=(node.path, position, other))
    return None
