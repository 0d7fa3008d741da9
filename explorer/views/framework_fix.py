"""What a framework comparison's fix changed in the export (explorer.bridge.fix): per node, the attributes set,
the inputs rewired and the weights rewritten, found by comparing the model before and after, and the two drawn
side by side as the Optimizer draws a rewrite (the node as it was marked on the model before, as the fix writes
it on the model after)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import helper

from ..model.model import Model
from ..proto.weights import tensor_value
from .builder import Drawing
from .overlays import RewriteOverlay
from .rewrites import side_by_side


@dataclass(frozen=True)
class Change:
    """One thing the fix changed at a node: `what` (an attribute, an input, a weight) from `before` to `after`."""

    node: str
    op_type: str
    what: str
    before: str
    after: str


def _initializers(model: Model) -> dict[str, dict[str, onnx.TensorProto]]:
    """graph path -> its initializers by name."""
    return {path: {t.name: t for t in graph.proto.initializer} for path, graph in model.index.graphs.items()}


def _stored(model: Model, stored: dict[str, dict[str, onnx.TensorProto]], graph: str, name: str) -> np.ndarray | None:
    """The value of the initializer `name` as a node of `graph` sees it (its own graph's, else an enclosing one's)."""
    path: str | None = graph
    while path is not None:
        found = stored[path].get(name)
        if found is not None:
            return np.asarray(tensor_value(found))
        owner = model.index.graphs[path].owner
        path = model.node(owner).graph.path if owner is not None else None
    return None


def _attributes(node: onnx.NodeProto) -> dict[str, Any]:
    """A node's attributes that are not bodies, as plain values."""
    return {a.name: helper.get_attribute_value(a) for a in node.attribute
            if a.type not in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)}


def _weight_text(value: np.ndarray, other: np.ndarray) -> str:
    if value.shape != other.shape:
        return f"shape {list(value.shape)} -> {list(other.shape)}"
    changed = value != other
    if value.dtype.kind == "f" and changed.any():
        return (f"{int(changed.sum())} of {value.size} values changed, the largest by "
                f"{float(np.max(np.abs(value.astype(np.float64) - other.astype(np.float64)))):.3g}")
    return f"{int(changed.sum())} of {value.size} values changed"


def fix_changes(before: Model, after: Model) -> list[Change]:
    """Everything the fix changed at the nodes both models have: attributes, inputs read and the weights they read
    (a weight changed in place, or a new initializer the node reads instead)."""
    stored_before, stored_after = _initializers(before), _initializers(after)
    changes: list[Change] = []
    for ref in before.nodes():
        other = after.index.nodes.get(ref.path)
        if other is None:
            continue
        old, new = _attributes(ref.proto), _attributes(other.proto)
        for name in sorted(old.keys() | new.keys()):
            if old.get(name) != new.get(name):
                changes.append(Change(ref.path, ref.proto.op_type, f"attribute {name}",
                                      _text(old.get(name)), _text(new.get(name))))
        for position, (a, b) in enumerate(zip(ref.proto.input, other.proto.input)):
            if a != b:
                changes.append(Change(ref.path, ref.proto.op_type, f"input {_role(before, ref.proto, position)}", a, b))
            if not a or not b:
                continue
            value = _stored(before, stored_before, ref.graph.path, a)
            fixed = _stored(after, stored_after, other.graph.path, b)
            if fixed is not None and (value is None or value.shape != fixed.shape or not np.array_equal(value, fixed)):
                changes.append(Change(ref.path, ref.proto.op_type, f"weight {_role(before, ref.proto, position)} ({b})",
                                      "computed by nodes" if value is None else f"{a} as exported",
                                      "a new initializer" if value is None else _weight_text(value, fixed)))
    return changes


def _role(model: Model, node: onnx.NodeProto, position: int) -> str:
    """What the operator calls its input at `position` (GRU's W, R, B; Gemm's B, C), else its position."""
    try:
        schema = onnx.defs.get_schema(node.op_type, model.opsets.get(node.domain or "", 1), node.domain)
    except onnx.defs.SchemaError:
        return str(position)
    inputs = schema.inputs
    variadic = bool(inputs) and inputs[-1].option == onnx.defs.OpSchema.FormalParameterOption.Variadic
    if position < len(inputs) - (1 if variadic else 0):
        return inputs[position].name
    return str(position)


def _text(value: Any) -> str:
    if value is None:
        return "not set"
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def change_rows(changes: list[Change]) -> list[dict[str, str]]:
    """The changes as table rows."""
    return [{"ONNX node": c.node, "op": c.op_type, "what": c.what, "before": c.before, "after": c.after}
            for c in changes]


def fix_drawings(before: Model, after: Model, changes: list[Change], **options: Any) -> tuple[Drawing, Drawing]:
    """The export before the fix (the nodes it changes marked as the ones replaced) and after it (marked as the
    ones written), at the same expansion, the changed nodes' bodies and scopes opened."""
    changed = frozenset(c.node for c in changes)
    return side_by_side(before, after, RewriteOverlay(removed=changed), RewriteOverlay(added=changed),
                        reveal=changed, **options)
