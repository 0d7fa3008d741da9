"""Finding nodes in large models: by name (or path), op type, or the name of a value they read or write."""
from __future__ import annotations

from dataclasses import dataclass

from ..model import Model

FIELDS = ("name", "op", "value")


@dataclass(frozen=True)
class SearchHit:
    """A node that matched, and why: the field and the text that matched."""

    path: str
    field: str
    text: str


def parse_query(query: str) -> tuple[tuple[str, ...], str]:
    """`op:Conv` -> (("op",), "Conv"); a plain query searches every field."""
    head, sep, rest = query.partition(":")
    if sep and head.strip().lower() in FIELDS:
        return (head.strip().lower(),), rest.strip()
    return FIELDS, query.strip()


def search(model: Model, query: str, *, limit: int | None = None) -> list[SearchHit]:
    """Nodes matching `query`, in document order (nested bodies included). Names and paths match by
    case-insensitive substring, op types exactly (case-insensitive), value names by substring.
    Prefix the query with `name:`, `op:` or `value:` to search one field only. An empty query finds
    nothing."""
    fields, text = parse_query(query)
    needle = text.lower()
    if not needle:
        return []
    hits: list[SearchHit] = []
    for ref in model.nodes():
        node = ref.proto
        hit = None
        if "op" in fields and node.op_type.lower() == needle:
            hit = SearchHit(ref.path, "op", node.op_type)
        elif "name" in fields and (needle in node.name.lower() or needle in ref.path.lower()):
            hit = SearchHit(ref.path, "name", node.name or ref.path)
        elif "value" in fields:
            value = next((v for v in (*node.input, *node.output) if v and needle in v.lower()), None)
            if value is not None:
                hit = SearchHit(ref.path, "value", value)
        if hit is not None:
            hits.append(hit)
            if limit is not None and len(hits) >= limit:
                break
    return hits


def search_nodes(model: Model, query: str, *, limit: int | None = None) -> list[str]:
    """The node paths `search` finds, ready for `model_to_dot(..., highlight=...)`."""
    return [hit.path for hit in search(model, query, limit=limit)]
