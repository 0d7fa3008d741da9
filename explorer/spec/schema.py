"""An operator's schema at a model's opset, and what a node's attributes may not be at that version: the check
the executor's kernels (executor/ops/base.py's OpNode) and the views' readers of a node share."""
from __future__ import annotations

from functools import cache

import onnx


@cache
def schema_at(op_type: str, opset: int, domain: str) -> onnx.defs.OpSchema | None:
    """The schema an operator has in an opset (None for operators onnx does not define)."""
    try:
        return onnx.defs.get_schema(op_type, opset, domain)
    except onnx.defs.SchemaError:
        return None


def attribute_problem(node: onnx.NodeProto, schema: onnx.defs.OpSchema, opset: int) -> str | None:
    """Why the node's attributes do not fit the schema (one it does not define, the wrong type, a required one
    missing), or None when they fit."""
    name = f"{node.op_type}-{schema.since_version}"
    for att in node.attribute:
        spec = schema.attributes.get(att.name)
        if spec is None:
            return (f"{name} has no attribute {att.name!r} (opset {opset}; it has: "
                    f"{', '.join(sorted(schema.attributes)) or 'none'})")
        if att.type != spec.type:
            got, want = (onnx.AttributeProto.AttributeType.Name(t) for t in (att.type, spec.type))
            return f"attribute {att.name!r} is {got}; the spec wants {want}"
    given = {att.name for att in node.attribute}
    missing = [att for att, spec in schema.attributes.items() if spec.required and att not in given]
    return f"{name} requires attribute(s) {missing}" if missing else None
