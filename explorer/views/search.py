"""Finding nodes in large models, nested bodies included: by name (or path), op type, the name of a value they
read or write, the shape of a value they write; and across a recorded run: nodes that wrote NaN or Inf, nodes
slower than some milliseconds.

Query forms: `text` (names, op types, value names and module paths), `name:text`, `module:h.0/attn` (the module
path the exporter wrote, see layers.py), `op:Conv`, `value:text`, `shape:1x3x224x224`
(also `[1, 3, 224, 224]`; `?` matches any size), `nan` (or `is:nan`, `is:inf`, `is:nonfinite`), `slower:2ms`
(also `time>2`, in milliseconds)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model.model import Model
from ..proto.graph import NodeRef
from ..trace.trace import Trace
from ..trace.values import ValueSummary, count_nonfinite
from .draw_facts import ModelFacts

FIELDS = ("name", "op", "value", "module")
TRACE_QUERIES = ("nan", "inf", "nonfinite")
_SLOWER = re.compile(r"^(?:slower:|time\s*>\s*)\s*([0-9.]+)\s*(ms|s)?$", re.IGNORECASE)


@dataclass(frozen=True)
class SearchHit:
    """A node that matched, and why: the field and the text that matched."""

    path: str
    field: str
    text: str


def parse_query(query: str) -> tuple[tuple[str, ...], str]:
    """`op:Conv` -> (("op",), "Conv"); `shape:3x4` -> (("shape",), "3x4"); `nan` -> (("is",), "nan");
    `slower:2ms` -> (("slower",), "2") in milliseconds; a plain query searches names, op types and values."""
    text = query.strip()
    slower = _SLOWER.match(text)
    if slower:
        ms = float(slower.group(1)) * (1000.0 if (slower.group(2) or "").lower() == "s" else 1.0)
        return ("slower",), repr(ms)
    if text.lower() in TRACE_QUERIES:
        return ("is",), text.lower()
    head, sep, rest = text.partition(":")
    if sep and head.strip().lower() in (*FIELDS, "shape", "is"):
        return (head.strip().lower(),), rest.strip()
    return FIELDS, text


def shape_pattern(text: str) -> tuple[str, ...] | None:
    """`1x3x224x224`, `[1, 3, 224, 224]`, `1×3` -> ("1", "3", ...); `scalar` or `[]` -> (); None if unreadable."""
    cleaned = text.strip().strip("[]()").strip()
    if cleaned.lower() in ("", "scalar"):
        return ()
    parts = [p for p in re.split(r"[x×,\s]+", cleaned) if p]
    return tuple(parts) if all(p == "?" or p.isdigit() for p in parts) else None


def _shape_of(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, (np.ndarray, ValueSummary)):
        return tuple(int(d) for d in value.shape)
    return None


def _fits(shape: tuple[Any, ...], pattern: tuple[str, ...]) -> bool:
    return len(shape) == len(pattern) and all(p == "?" or str(d) == p for d, p in zip(shape, pattern))


def _declared_shapes(model: Model, ref: NodeRef) -> list[tuple[Any, ...]]:
    """Declared shapes (from shape inference) of the values a node writes; symbolic sizes by name."""
    graph = ref.graph.proto
    infos = {v.name: v for v in (*graph.value_info, *graph.output)}
    shapes = []
    for name in ref.proto.output:
        info = infos.get(name)
        if info is not None and info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape"):
            dims = info.type.tensor_type.shape.dim
            shapes.append(tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in dims))
    return shapes


def _node_hit(ref: NodeRef, fields: tuple[str, ...], needle: str, facts: ModelFacts) -> SearchHit | None:
    node = ref.proto
    if "op" in fields and node.op_type.lower() == needle:
        return SearchHit(ref.path, "op", node.op_type)
    if "name" in fields and (needle in node.name.lower() or needle in ref.path.lower()):
        return SearchHit(ref.path, "name", node.name or ref.path)
    if "value" in fields:
        value = next((v for v in (*node.input, *node.output) if v and needle in v.lower()), None)
        if value is not None:
            return SearchHit(ref.path, "value", value)
    if "module" in fields:
        module = facts.module_of(ref.path)
        if needle.strip("/") and needle.strip("/") in module.lower():
            return SearchHit(ref.path, "module", module)
    return None


def _trace_hits(trace: Trace, fields: tuple[str, ...], text: str, pattern: tuple[str, ...] | None,
                ) -> dict[str, SearchHit]:
    """Hits read from the recorded run, first execution that matches per node."""
    hits: dict[str, SearchHit] = {}
    if fields == ("slower",):
        totals: dict[str, float] = {}
        for event in trace.events:
            totals[event.node] = totals.get(event.node, 0.0) + event.seconds * 1e3
        return {path: SearchHit(path, "time", f"{ms:.3f} ms") for path, ms in totals.items() if ms > float(text)}
    for event in trace.events:
        if event.node in hits:
            continue
        for name, value in event.outputs.items():
            if fields == ("is",):
                nan, inf = count_nonfinite(value)
                found = {"nan": nan, "inf": inf, "nonfinite": nan + inf}.get(text, 0)
                if found:
                    hits[event.node] = SearchHit(event.node, "NaN/Inf", f"{name}: NaN {nan} · Inf {inf} "
                                                                         f"(event {event.index})")
                    break
            elif pattern is not None and (shape := _shape_of(value)) is not None and _fits(shape, pattern):
                hits[event.node] = SearchHit(event.node, "shape", f"{name}: {list(shape)}")
                break
    return hits


def search(model: Model, query: str, *, trace: Trace | None = None, limit: int | None = None) -> list[SearchHit]:
    """Nodes matching `query` (see the module docstring), in document order, nested bodies included. Names and
    paths match by case-insensitive substring, op types exactly (case-insensitive), value names by substring;
    shapes match the recorded values when a trace is given, else the declared shapes. `nan` and `slower:` need
    a trace. An empty query finds nothing."""
    fields, text = parse_query(query)
    needle = text.lower()
    if not needle:
        return []
    pattern = shape_pattern(text) if fields == ("shape",) else None
    if fields == ("shape",) and pattern is None:
        return []
    from_trace = fields in (("is",), ("slower",)) or (pattern is not None and trace is not None)
    if from_trace and trace is None:
        return []
    recorded = _trace_hits(trace, fields, needle, pattern) if from_trace and trace is not None else {}
    hits: list[SearchHit] = []
    facts = ModelFacts.of(model)
    for ref in model.nodes():
        if from_trace:
            hit = recorded.get(ref.path)
        elif pattern is not None:
            shape = next((s for s in _declared_shapes(model, ref) if _fits(s, pattern)), None)
            hit = SearchHit(ref.path, "shape", f"declared {list(shape)}") if shape is not None else None
        else:
            hit = _node_hit(ref, fields, needle, facts)
        if hit is not None:
            hits.append(hit)
            if limit is not None and len(hits) >= limit:
                break
    return hits


def search_nodes(model: Model, query: str, *, trace: Trace | None = None, limit: int | None = None) -> list[str]:
    """The node paths `search` finds, ready for `model_to_dot(..., highlight=...)`."""
    return [hit.path for hit in search(model, query, trace=trace, limit=limit)]
