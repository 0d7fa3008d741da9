"""Model Explorer's node data: one number per node (the error against the other side, the time, the number of
executions, the NaN count) in the JSON its "Load node data" reads, keyed by graph id then node id as its ONNX
adapter names them (adapter_ids.py). The format is Model Explorer's `NodeDataProviderData`
(ui/src/components/visualizer/common/types.ts; model_explorer/node_data_builder.py writes the same)."""
from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..files.atomic_write import write_text

if TYPE_CHECKING:  # the command line reads METRICS for its --help: the rest is imported when node data is made
    from ..compare.report import Comparison
    from ..model.model import Model
    from ..trace.trace import Trace

METRICS: dict[str, str] = {
    "max_abs": "max abs error against the other side",
    "max_rel": "max relative error against the other side",
    "time": "time spent (ms, every execution summed)",
    "runs": "executions",
    "nan": "NaN elements written",
}
ERROR_METRICS = ("max_abs", "max_rel")
LARGEST = 1.7976931348623157e308  # JSON has no Infinity: a value that ran on one side only is the largest float


@dataclass(frozen=True)
class NodeNumbers:
    """One metric's number per explorer node path, and which nodes are beyond the tolerance (errors only)."""

    metric: str
    values: Mapping[str, float]
    beyond: frozenset[str] = frozenset()


def node_numbers(trace: Trace, metric: str, comparison: Comparison | None = None) -> NodeNumbers:
    """The metric's number per node path: errors from `comparison` (the worst of a node's values and
    executions), the rest from `trace`."""
    values: dict[str, float] = {}
    if metric in ERROR_METRICS:
        if comparison is None:
            raise ValueError(f"the metric {metric!r} needs another side to compare with")
        beyond = set()
        for v in comparison.values:
            number = v.max_abs if metric == "max_abs" else v.max_rel
            values[v.node] = max(values.get(v.node, 0.0), number)
            if not v.ok:
                beyond.add(v.node)
        return NodeNumbers(metric, values, frozenset(beyond))
    from ..trace.values import count_nonfinite

    for event in trace.events:
        if metric == "time":
            number = event.seconds * 1e3
        elif metric == "runs":
            number = 1
        elif metric == "nan":
            number = sum(count_nonfinite(value)[0] for value in event.outputs.values())
        else:
            raise ValueError(f"no metric {metric!r} (known: {', '.join(METRICS)})")
        values[event.node] = values.get(event.node, 0.0) + number
    return NodeNumbers(metric, values)


def _number(value: float) -> float | int:
    if not math.isfinite(value):
        return LARGEST
    return int(value) if float(value).is_integer() and abs(value) < 2 ** 53 else float(value)


def node_data(model: Model, numbers: NodeNumbers, name: str | None = None) -> dict[str, Any]:
    """Model Explorer's node data of one metric: graph id -> {"name", "results": {node id: {"value"}}, "gradient"};
    with errors, a node beyond the tolerance is drawn in the bad tone and one within it in the good tone."""
    from . import styles
    from .adapter_ids import adapter_placements

    placements = adapter_placements(model.proto)
    data: dict[str, Any] = {}
    for path, value in numbers.values.items():
        where = placements.get(path)
        if where is None:
            continue
        graph = data.setdefault(where.graph, {"name": name or METRICS[numbers.metric], "results": {}})
        result: dict[str, Any] = {"value": _number(value)}
        if numbers.metric in ERROR_METRICS:
            result["bgColor"] = styles.TONE_HEX["bad" if path in numbers.beyond else "good"]
        graph["results"][where.node] = result
    last = len(styles.HEAT_SCALE) - 1
    for graph in data.values():
        if numbers.metric not in ERROR_METRICS:
            graph["gradient"] = [{"stop": k / last, "bgColor": colour} for k, colour in enumerate(styles.HEAT_SCALE)]
    return data


def write_node_data(path: str | os.PathLike[str], data: Mapping[str, Any]) -> None:
    """Writes node data as JSON (no NaN or Infinity: Model Explorer's JSON.parse refuses them)."""
    write_text(path, json.dumps(data, indent=1, allow_nan=False) + "\n")
