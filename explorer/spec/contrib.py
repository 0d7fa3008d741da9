"""onnxruntime's own operators (contrib_schemas.json, written from onnxruntime by tools/contrib_schemas.py): the
com.microsoft domain, and the layer norms onnxruntime defines in the default domain where onnx has none
(LayerNormalization before opset 17, SimplifiedLayerNormalization). Each is an onnx OpSchema, so their nodes are
checked like onnx's (attributes, their types and defaults, input counts, type constraints), with its doc and its
place in onnxruntime's ContribOperators.md."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import onnx

CONTRIB_DOMAIN = "com.microsoft"
DOC_URL = "https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.{op}"
ONNXRUNTIME_OPERATORS = "https://github.com/microsoft/onnxruntime/blob/main/docs/OperatorKernels.md"
_OpSchema = onnx.defs.OpSchema
_OPTIONS = {"single": _OpSchema.FormalParameterOption.Single, "optional": _OpSchema.FormalParameterOption.Optional,
            "variadic": _OpSchema.FormalParameterOption.Variadic}


@cache
def _table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads((files(__package__) / "contrib_schemas.json").read_text(encoding="utf-8"))
    return table


@cache
def _versions(domain: str) -> dict[str, tuple[int, ...]]:
    """op_type -> its since_versions in `domain`, ascending."""
    found: dict[str, list[int]] = {}
    for key in _table()["operators"].get(domain, {}):
        name, version = key.rsplit("-", 1)
        found.setdefault(name, []).append(int(version))
    return {name: tuple(sorted(versions)) for name, versions in found.items()}


def contrib_versions(op_type: str, domain: str = CONTRIB_DOMAIN) -> tuple[int, ...]:
    """The since_versions onnxruntime defines an operator of its own at (none when it does not)."""
    return _versions(domain).get(op_type, ())


def contrib_operators(domain: str = CONTRIB_DOMAIN) -> tuple[str, ...]:
    """Every operator onnxruntime defines of its own in `domain`."""
    return tuple(sorted(_versions(domain)))


def _entry(op_type: str, opset: int, domain: str) -> tuple[int, dict[str, Any]] | None:
    versions = [v for v in contrib_versions(op_type, domain) if v <= opset]
    if not versions:
        return None
    return versions[-1], _table()["operators"][domain][f"{op_type}-{versions[-1]}"]


def _attribute(name: str, spec: dict[str, Any]) -> _OpSchema.Attribute:
    description = spec["description"]
    if spec["default"] is not None:
        return _OpSchema.Attribute(name, onnx.helper.make_attribute(name, spec["default"]), description)
    return _OpSchema.Attribute(name, getattr(_OpSchema.AttrType, spec["type"]), description,
                               required=spec["required"])


def _formal(spec: dict[str, Any]) -> _OpSchema.FormalParameter:
    return _OpSchema.FormalParameter(spec["name"], spec["type"], spec["description"],
                                     param_option=_OPTIONS[spec["option"]],
                                     is_homogeneous=spec.get("homogeneous", True))


@cache
def contrib_schema(op_type: str, opset: int, domain: str = CONTRIB_DOMAIN) -> onnx.defs.OpSchema | None:
    """The schema an operator of onnxruntime's own has at an opset of its domain (None when onnxruntime defines no
    such operator, or only at later versions)."""
    found = _entry(op_type, opset, domain)
    if found is None:
        return None
    version, spec = found
    return _OpSchema(op_type, domain, version, doc=spec["doc"],
                     inputs=[_formal(f) for f in spec["inputs"]], outputs=[_formal(f) for f in spec["outputs"]],
                     type_constraints=[tuple(c) for c in spec["type_constraints"]],
                     attributes=[_attribute(name, a) for name, a in spec["attributes"].items()])


@dataclass(frozen=True)
class OperatorDoc:
    """What onnxruntime documents about one com.microsoft operator version."""

    op_type: str
    domain: str
    since_version: int
    text: str  # the schema's doc, as ContribOperators.md shows it
    url: str  # the operator's section in onnxruntime's ContribOperators.md
    attributes: dict[str, str]  # name -> description
    source: str  # "onnxruntime 1.32.0": where the schemas were read from


def contrib_doc(op_type: str, opset: int = 1, domain: str = CONTRIB_DOMAIN) -> OperatorDoc | None:
    """onnxruntime's doc of an operator of its own at an opset of its domain; None when it defines none."""
    found = _entry(op_type, opset, domain)
    if found is None:
        return None
    version, spec = found
    url = DOC_URL.format(op=op_type) if domain == CONTRIB_DOMAIN else ONNXRUNTIME_OPERATORS
    return OperatorDoc(op_type, domain, version, spec["doc"], url,
                       {name: a["description"] for name, a in spec["attributes"].items()},
                       f"onnxruntime {_table()['onnxruntime']}")


def operator_doc(op_type: str, domain: str, opset: int) -> OperatorDoc | None:
    """onnxruntime's doc of a node's operator when it is onnxruntime's own at that opset of its domain:
    com.microsoft, or the default domain where onnx defines no such operator (LayerNormalization before 17)."""
    domain = "" if domain == "ai.onnx" else domain
    if domain == CONTRIB_DOMAIN:
        return contrib_doc(op_type, opset)
    if domain != "":
        return None
    try:
        onnx.defs.get_schema(op_type, opset, "")
    except onnx.defs.SchemaError:
        return contrib_doc(op_type, opset, "")
    return None
