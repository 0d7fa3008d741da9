"""An operator's schema at a model's opset (onnx's, or onnxruntime's for com.microsoft: spec/contrib.py), and what
a node's attributes may not be at that version: the check the executor's kernels (executor/ops/base.py's OpNode)
and the views' readers of a node share."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import onnx

from .contrib import CONTRIB_DOMAIN, contrib_schema

_SINGLE = onnx.defs.OpSchema.FormalParameterOption.Single


@cache
def schema_at(op_type: str, opset: int, domain: str) -> onnx.defs.OpSchema | None:
    """The schema an operator has in an opset: onnx's, else onnxruntime's own (com.microsoft, and the layer norms
    onnxruntime defines in the default domain where onnx has none); None when neither defines it."""
    if domain == CONTRIB_DOMAIN:
        return contrib_schema(op_type, opset)
    try:
        return onnx.defs.get_schema(op_type, opset, domain)
    except onnx.defs.SchemaError:
        return contrib_schema(op_type, opset, domain) if domain == "" else None


@dataclass(frozen=True)
class SchemaFacts:
    """What checking a node against one operator version needs, read from its schema once (onnx builds a
    schema's attribute dict and input list anew at every access, which a 20,000-node model feels)."""

    name: str  # "Add-14"
    attributes: dict[str, onnx.defs.OpSchema.Attribute]
    required_attributes: tuple[str, ...]
    required_inputs: tuple[tuple[int, str], ...]  # (position, name) of each input that must be given
    max_input: int
    max_output: int


@cache
def _facts(op_type: str, domain: str, since_version: int) -> SchemaFacts:
    schema = schema_at(op_type, since_version, domain)
    assert schema is not None, f"{domain}.{op_type}-{since_version} has no schema"
    attributes = dict(schema.attributes)
    return SchemaFacts(
        f"{op_type}-{since_version}", attributes,
        tuple(name for name, spec in attributes.items() if spec.required),
        tuple((i, formal.name) for i, formal in enumerate(schema.inputs) if formal.option == _SINGLE),
        schema.max_input, schema.max_output)


def schema_facts(schema: onnx.defs.OpSchema) -> SchemaFacts:
    """The facts of `schema`, read once per operator version."""
    return _facts(schema.name, schema.domain, schema.since_version)


def attribute_problem(node: onnx.NodeProto, schema: onnx.defs.OpSchema, opset: int) -> str | None:
    """Why the node's attributes do not fit the schema (one it does not define, the wrong type, a required one
    missing), or None when they fit."""
    facts = schema_facts(schema)
    attributes = facts.attributes
    for att in node.attribute:
        spec = attributes.get(att.name)
        if spec is None:
            return (f"{facts.name} has no attribute {att.name!r} (opset {opset}; it has: "
                    f"{', '.join(sorted(attributes)) or 'none'})")
        if att.type != spec.type:
            got, want = (onnx.AttributeProto.AttributeType.Name(t) for t in (att.type, spec.type))
            return f"attribute {att.name!r} is {got}; the spec wants {want}"
    if not facts.required_attributes:
        return None
    given = {att.name for att in node.attribute}
    missing = [att for att in facts.required_attributes if att not in given]
    return f"{facts.name} requires attribute(s) {missing}" if missing else None
